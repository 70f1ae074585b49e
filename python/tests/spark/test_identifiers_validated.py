"""Names that reach the queue reader's SQL text are validated in the dbt macros too, not only
by the Python layer: the schema from the profile, and every article and column name read back
from qrepl_articles (a table anyone with write access can change)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.core.model import ConfigError, publication_from_dict
from qrepl.storage.spark import PROJECT_DIR
from qrepl.storage.warehouse import ARTICLE_LATE_COLUMNS, ARTICLES_SCHEMA, PUBLICATION_SCHEMA, Warehouse

pytestmark = pytest.mark.spark
NO_GENERATED = (None, None, None)  # identity_column, identity_range, stamped_column: none declared
SCHEMA = "qrepl_names"


def _qrepl_config_error(monkeypatch, schema: str) -> str:
    """Run the `qrepl_config` macro (what every model calls first) on `schema`; its error text."""
    from dbt.cli.main import dbtRunner

    monkeypatch.setenv("QREPL_SCHEMA", schema)
    monkeypatch.setenv("QREPL_TARGET", "local")
    messages: list[str] = []
    res = dbtRunner(callbacks=[lambda event: messages.append(event.info.msg)]).invoke(
        [
            "--quiet",
            "run-operation",
            "qrepl_config",
            "--project-dir",
            str(PROJECT_DIR),
            "--profiles-dir",
            str(PROJECT_DIR),
        ]
    )
    assert not res.success
    return "\n".join(messages)


def test_schema_name_is_validated_in_the_macros(spark, monkeypatch):
    assert "qrepl: invalid schema name 'x; drop table y'" in _qrepl_config_error(monkeypatch, "x; drop table y")


@pytest.mark.parametrize(
    "column, message",
    [
        ("city; drop table t", "invalid column name"),
        ("change_op", "article column name 'change_op' is reserved by the queue reader"),
    ],
)
def test_column_names_read_back_from_qrepl_articles_are_validated(spark, monkeypatch, column, message):
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict(
            {
                "publication": "p",
                "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int"}}],
            }
        )
    )
    spark.createDataFrame(
        [("items", 0, ["item_id"], ["item_id", column], ["int", "string"], None, *NO_GENERATED)], ARTICLES_SCHEMA
    ).writeTo(wh.table("qrepl_articles")).overwritePartitions()
    assert message in _qrepl_config_error(monkeypatch, SCHEMA)


@pytest.mark.parametrize(
    "table, message",
    [
        ("s.items; drop table t", "qrepl: invalid table name 'items; drop table t'"),
        ("a.b.c", "qrepl: invalid table 'a.b.c' of article items: must be SCHEMA.TABLE or TABLE"),
    ],
)
def test_an_article_table_read_back_from_qrepl_articles_is_validated(spark, monkeypatch, table, message):
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict(
            {
                "publication": "p",
                "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int"}}],
            }
        )
    )
    spark.createDataFrame(
        [("items", 0, ["item_id"], ["item_id", "qty"], ["int", "int"], table, *NO_GENERATED)], ARTICLES_SCHEMA
    ).writeTo(wh.table("qrepl_articles")).overwritePartitions()
    assert message in _qrepl_config_error(monkeypatch, SCHEMA)


def test_publication_create_refuses_a_reserved_column_with_one_line(spark, tmp_path):
    config = tmp_path / "p.yml"
    config.write_text(
        "publication: p\narticles:\n  - name: items\n    key: [item_id]\n    columns: {item_id: int, row: string}\n"
    )
    result = CliRunner().invoke(main, ["publication", "create", "--config", str(config), "--schema", SCHEMA])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "qrepl: error: article items: column name row is reserved by the queue reader; rename it"
        " (--debug shows the whole error)"
    )


def test_schema_name_with_a_trailing_newline_is_refused_in_the_macros(spark, monkeypatch):
    """Issue 39: `re.match('^...$')` let "name\\n" through; the macro uses fullmatch."""
    message = _qrepl_config_error(monkeypatch, "qrepl_names\n")
    assert "qrepl: invalid schema name 'qrepl_names\\n': identifiers must match" in message


def test_article_name_with_a_trailing_newline_read_back_is_refused_in_the_macros(spark, monkeypatch):
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict(
            {
                "publication": "p",
                "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int"}}],
            }
        )
    )
    spark.createDataFrame(
        [("items\n", 0, ["item_id"], ["item_id", "qty"], ["int", "int"], None, *NO_GENERATED)], ARTICLES_SCHEMA
    ).writeTo(wh.table("qrepl_articles")).overwritePartitions()
    assert "qrepl: invalid article name 'items\\n': identifiers must match" in _qrepl_config_error(monkeypatch, SCHEMA)


@pytest.mark.parametrize(
    "article, column, table, message",
    [
        ("items; drop table t", "qty", None, "invalid article name 'items; drop table t'"),
        ("items\n", "qty", None, "invalid article name 'items\\n'"),
        ("items", "qty = 1 --", None, "invalid column name 'qty = 1 --'"),
        ("items", "change_op", None, "column name change_op is reserved by the queue reader"),
        ("items", "qty", "s.items; drop table t", "article items: invalid table 's.items; drop table t'"),
    ],
)
def test_python_layer_revalidates_names_read_back_from_qrepl_articles(spark, article, column, table, message):
    """Issue 39: the Python layer (Warehouse.read_publication, behind every command) validates
    the article and column names it reads back, as the dbt macros do; the CLI says one line."""
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict(
            {
                "publication": "p",
                "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int"}}],
            }
        )
    )
    spark.createDataFrame(
        [(article, 0, ["item_id"], ["item_id", column], ["int", "int"], table, *NO_GENERATED)], ARTICLES_SCHEMA
    ).writeTo(wh.table("qrepl_articles")).overwritePartitions()
    with pytest.raises(ConfigError, match="hold an invalid publication") as refused:
        wh.read_publication()
    assert message in str(refused.value)
    result = CliRunner().invoke(main, ["publication", "show", "--schema", SCHEMA])
    assert result.exit_code == 1 and result.output.count("\n") == 1 and message in result.output


def test_a_qrepl_articles_written_before_table_name_existed_still_reads(spark):
    """A store from before an article could name its table or declare generated columns: no
    table_name column means every article's default table (no identity, no stamped column);
    the next `publication create` adds the columns."""
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    pub = publication_from_dict(
        {
            "publication": "p",
            "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int"}}],
        }
    )
    old = (
        "article STRING, ordinal INT, key_columns ARRAY<STRING>, column_names ARRAY<STRING>, column_types ARRAY<STRING>"
    )
    wh.ensure_base_tables()
    spark.sql(f"drop table {wh.table('qrepl_articles')} purge")
    spark.sql(f"create table {wh.table('qrepl_articles')} ({old}) using iceberg")  # as an old release made it
    spark.createDataFrame([("items", 0, ["item_id"], ["item_id", "qty"], ["int", "int"])], old).writeTo(
        wh.table("qrepl_articles")
    ).append()
    spark.createDataFrame([("p", "publisher_wins", 14, True)], PUBLICATION_SCHEMA).writeTo(
        wh.table("qrepl_publication")
    ).overwritePartitions()
    assert wh.read_publication() == pub
    wh.write_publication(pub)
    assert set(ARTICLE_LATE_COLUMNS) <= set(wh.table_columns("qrepl_articles")) and wh.read_publication() == pub


def test_a_schema_without_a_publication_is_said_in_one_line_by_every_subscription_command(spark):
    """A user's first command against a schema nothing was published to (a typo in --schema,
    or before `publication create`): one line that says so, not a traceback."""
    schema = "qrepl_nothing_here"
    Warehouse(spark, schema).drop_schema()
    spark.sql(f"create database {schema}")
    for args in [
        ["subscription", "list"],
        ["subscription", "show", "north"],
        ["subscription", "filter", "north", "--filter", "orders: region = 'north'"],
        ["subscription", "add", "north"],
        ["subscription", "drop", "north"],
        ["status"],
        ["publication", "check"],
    ]:
        result = CliRunner().invoke(main, ["--schema", schema, *args])
        assert result.exit_code != 0, (args, result.output)
        assert result.output.strip().splitlines() == [
            f"qrepl: error: no publication in schema {schema}: run `qrepl publication create` first "
            "(--debug shows the whole error)"
        ], (args, result.output)
