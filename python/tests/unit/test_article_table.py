"""An article's `table:` (docs/publishing.md): the existing table it publishes in place,
`schema.table` anywhere in the catalog or a bare `table` in the publication's schema; without
it the table is `<publication schema>.<article name>`. Replica tables stay named after the
article."""

from __future__ import annotations

import pytest

from qrepl.core.model import ConfigError, publication_from_dict
from qrepl.storage.replica import ReplicaWarehouse
from qrepl.storage.warehouse import Warehouse


def _pub(*tables):
    return publication_from_dict(
        {
            "publication": "p",
            "articles": [
                {
                    "name": f"a{i}",
                    "key": ["k"],
                    "columns": {"k": "int", "v": "string"},
                    **({"table": t} if t is not None else {}),
                }
                for i, t in enumerate(tables)
            ],
        }
    )


def test_table_is_optional_and_kept_as_declared():
    pub = _pub(None, "salesx.customers", "customers")
    assert [a.table for a in pub.articles] == [None, "salesx.customers", "customers"]
    assert [a.get("table") for a in pub.to_dict()["articles"]] == [None, "salesx.customers", "customers"]
    assert "table" not in pub.to_dict()["articles"][0]  # the default writes what it wrote before
    assert publication_from_dict(pub.to_dict()) == pub


def test_the_publisher_table_defaults_to_the_publication_schema_and_the_article_name():
    default, elsewhere, bare = _pub(None, "salesx.customers", "customers").articles
    wh = Warehouse(None, "pubx")
    assert [wh.article_table(a) for a in (default, elsewhere, bare)] == [
        "pubx.a0",
        "salesx.customers",
        "pubx.customers",
    ]
    replica = ReplicaWarehouse(wh, "pubx__north")
    assert [replica.article_table(a) for a in (default, elsewhere, bare)] == [
        "pubx__north.a0",
        "pubx__north.a1",
        "pubx__north.a2",
    ]


@pytest.mark.parametrize(
    "table",
    [
        "salesx.cust-omers",
        "a.b.c",
        "salesx.customers\n",
        "",
        ".customers",
        "salesx.",
        5,
        ["salesx", "customers"],
        "sales x.customers",
    ],
)
def test_an_invalid_table_is_refused_in_one_line(table):
    with pytest.raises(ConfigError) as refused:
        _pub(table)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("article a0: invalid table")


def test_two_articles_over_one_table_are_refused():
    with pytest.raises(ConfigError, match="articles a0 and a1 both name table salesx.customers"):
        _pub("salesx.customers", "SALESX.customers")


def test_a_table_read_back_is_validated_again():
    article = _pub("salesx.customers").articles[0]
    object.__setattr__(article, "table", "salesx.customers; drop table x")
    with pytest.raises(ConfigError, match="invalid table name"):
        Warehouse(None, "pubx").article_table(article)


@pytest.mark.parametrize(
    "article",
    [
        {"name": "subscriptions"},  # the default table would be qrepl's own
        {"name": "a0", "table": "conflicts"},  # a bare table: in the publisher's schema
        {"name": "a0", "table": "QUEUE_REJECTS"},  # names are case-insensitive
    ],
)
def test_an_article_over_a_table_qrepl_keeps_is_refused_in_one_line(article):
    with pytest.raises(ConfigError, match="is a table qrepl keeps in the publisher's schema") as err:
        publication_from_dict(
            {"publication": "p", "articles": [{"key": ["k"], "columns": {"k": "int", "v": "string"}, **article}]}
        )
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "table, refused",
    [
        ("pubx.replication_queue", "is a table qrepl keeps"),
        ("pubx__north.customers", "replica or what-if"),
        ("pubx_whatif.customers", "replica or what-if"),
        ("salesx.conflicts", None),  # another schema's table of that name is the user's
        ("pubx.customers", None),
    ],
)
def test_a_schema_table_in_the_publishers_own_schemas_is_refused_before_any_write(table, refused):
    from qrepl.core.model import qrepl_table_refusal

    (article,) = _pub(table).articles
    found = qrepl_table_refusal(article.name, Warehouse(None, "pubx").article_table(article), "pubx")
    assert (found is None) if refused is None else (refused in found), found


def test_the_reserved_tables_are_the_tables_qrepl_makes():
    """QREPL_TABLES covers the Python layer's tables, every dbt model, every table a macro names,
    and the table a view model keeps from before it was a view (`<name>_before_view`)."""
    import re
    from pathlib import Path

    from qrepl.core.model import QREPL_TABLES
    from qrepl.storage.tables import PYTHON_TABLES

    root = Path(__file__).resolve().parents[3]
    models = {p.stem for p in (root / "models").rglob("*.sql")}
    macro_tables = {
        m for p in (root / "macros").rglob("*.sql") for m in re.findall(r"qrepl_relation\('([a-z_]+)'\)", p.read_text())
    }
    kept = {
        f"{p.stem}_before_view"
        for p in (root / "models").rglob("*.sql")
        if "materialized='qrepl_view'" in p.read_text()
    }
    made = set(PYTHON_TABLES) | models | macro_tables | kept | {"qrepl_run_lock"}
    assert QREPL_TABLES == made
