"""Column filters (docs/spec.md §11) through Spark + dbt, each scenario compared whole with the
reference and its sentence checked by name: a subscription that takes some of an article's
columns sends exactly those, its updates change only those at the publisher (the others keep
the values of the row they meet, in a batch where other transactions wrote the row before it
too), its inserts leave the others NULL, conflicts stay row-level, and its conflict rows and
compensating commands carry its columns only."""

from __future__ import annotations

import json

import pytest

from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, play, scenario_from_dict
from scenario_builder import tran, v

pytestmark = pytest.mark.spark

ORDERS = {
    "name": "orders",
    "key": ["order_id"],
    "columns": {
        "order_id": "int",
        "region": "string",
        "qty": "decimal(12,2)",
        "closed": "boolean",
        "placed": "date",
        "weight": "double",
        "seen_at": "timestamp",
    },
}
# north takes the key, region and qty of orders, and every row; hq and south take whole rows
NORTH_COLUMNS = {"north": {"orders": ["order_id", "region", "qty"]}}
NORTH_FIELDS = {"order_id", "region", "qty", "msrepl_tran_version"}


def order(oid: int, qty: str = "1.00", version: str | None = None, **other) -> dict:
    r = {
        "order_id": oid,
        "region": "north",
        "qty": qty,
        "closed": False,
        "placed": "2026-01-01",
        "weight": 1.5,
        "seen_at": "2026-01-01T10:00:00.123456Z",
    } | other
    if version:
        r["msrepl_tran_version"] = version
    return r


def short(oid: int, qty: str) -> dict:
    """A row as north holds it: its columns."""
    return {"order_id": oid, "region": "north", "qty": qty}


def scenario(policy: str, steps: list[dict], columns: dict = NORTH_COLUMNS) -> dict:
    return {
        "publication": "sales",
        "policy": policy,
        "articles": [ORDERS],
        "subscribers": ["north", "south", "hq"],
        "columns": columns,
        "steps": steps,
    }


def upd(r: dict, old: str, new: str) -> dict:
    return {"article": "orders", "op": "U", "row": r, "old_version": old, "new_version": new}


def ins(r: dict, new: str) -> dict:
    return {"article": "orders", "op": "I", "row": r, "new_version": new}


def dele(oid: int, old: str) -> dict:
    return {"article": "orders", "op": "D", "key": {"order_id": oid}, "old_version": old}


def both(data: dict) -> dict:
    """The scenario through Spark + dbt, asserted equal to the reference's outputs."""
    sc = scenario_from_dict(data, "column_filters")
    spark_out = normalized_outputs(sc, play(sc, SparkBackend(sc)))
    expected = normalized_outputs(sc, play(sc, ReferenceBackend(sc)))
    assert spark_out == expected, json.dumps({"spark": spark_out, "reference": expected}, indent=1, default=str)
    return spark_out


def publisher_row(out: dict, oid: int) -> dict:
    return {r["order_id"]: r for r in out["publisher/orders"]}[oid]


def test_an_update_changes_its_columns_and_the_others_keep_the_publishers_values(spark):
    """'Its updates change only those columns at the publisher, and the others keep the values
    of the row it meets'; an insert leaves the others NULL; a row with another column is
    quarantined `unknown extra columns`, one without one of its columns `missing column`."""
    v1 = v()
    out = both(
        scenario(
            "publisher_wins",
            [
                {"publisher_rows": {"orders": [order(1, "1.00", v1, closed=True, weight=9.5)]}},
                {
                    "enqueue": [
                        tran("north", "t1", upd(short(1, "2.00"), v1, v())),
                        tran("north", "t2", ins(short(2, "3.00"), v())),
                        tran("north", "t3", ins(order(3), v())),
                        tran("north", "t4", ins({"order_id": 4, "region": "north"}, v())),
                    ]
                },
                {"run": {}},
            ],
        )
    )
    assert [(o["tran_id"], o["outcome"]) for o in out["transaction_outcomes"]] == [("t1", "applied"), ("t2", "applied")]
    assert sorted((r["tran_id"], r["reason"]) for r in out["queue_rejects"]) == [
        ("t3", "unknown extra columns"),
        ("t4", "missing column"),
    ]
    one, two = publisher_row(out, 1), publisher_row(out, 2)
    assert (one["qty"], one["closed"], one["weight"], one["seen_at"]) == (
        "2.00",
        True,
        9.5,
        "2026-01-01T10:00:00.123456Z",
    )
    assert (two["qty"], two["closed"], two["placed"], two["weight"]) == ("3.00", None, None, None)


@pytest.mark.parametrize("policy", ["publisher_wins", "subscriber_wins", "publisher_wins_reinit"])
def test_an_update_beside_a_publisher_change_to_another_column_conflicts_on_the_row(spark, policy):
    """'Conflicts stay row-level: the version is the row's, so a publisher change to a column
    the subscriber does not take still meets its update. Conflict rows and compensating
    commands carry the subscriber's columns only.'"""
    v1 = v()
    out = both(
        scenario(
            policy,
            [
                {"publisher_rows": {"orders": [order(1, "1.00", v1)]}},
                {
                    "publisher_change": {
                        "article": "orders",
                        "op": "U",
                        "row": order(1, closed=True),
                        "new_version": v(),
                    }
                },
                {"enqueue": [tran("north", "t1", upd(short(1, "2.00"), v1, v()))]},
                {"run": {}},
            ],
        )
    )
    (conflict,) = out["conflicts"]
    assert conflict["conflict_type"] == "update_update"
    assert set(conflict["subscriber_row"]) == set(conflict["publisher_row"]) == NORTH_FIELDS
    row = publisher_row(out, 1)
    assert (row["qty"], row["closed"]) == (("2.00" if policy == "subscriber_wins" else "1.00"), True)
    if policy == "publisher_wins":
        (comp,) = out["compensating_commands"]
        assert comp["op"] == "upsert" and set(comp["row"]) == NORTH_FIELDS


@pytest.mark.parametrize("policy", ["publisher_wins", "subscriber_wins"])
def test_a_batch_of_writers_on_one_row_leaves_each_column_as_its_last_writer_set_it(spark, policy):
    """One batch, one row, several transactions in order: hq (every column) changes closed and
    qty, north (its columns) changes qty twice in one transaction, south deletes and inserts
    again, north updates on top of the new row. Each column of the row left is the one its
    last writer set; under subscriber_wins north's stale update is applied over the others'."""
    v1, h1, n1, n2, s1, s2, n3 = (v() for _ in range(7))
    out = both(
        scenario(
            policy,
            [
                {"publisher_rows": {"orders": [order(1, "1.00", v1), order(2, "5.00", v())]}},
                {
                    "enqueue": [
                        tran("hq", "h1", upd(order(1, "4.00", closed=True, weight=2.5), v1, h1)),
                        tran("north", "n1", upd(short(1, "6.00"), h1, n1), upd(short(1, "7.00"), n1, n2)),
                        tran("north", "stale", upd(short(1, "8.00"), v1, v())),
                        tran("south", "s1", dele(1, n2), ins(order(1, "9.00", region="south", weight=3.5), s1)),
                        tran("north", "n2", upd(short(1, "10.00"), s1, n3)),
                        tran("hq", "h2", upd(order(1, "11.00", closed=True), s2, v())),
                    ]
                },
                {"run": {}},
            ],
        )
    )
    assert len(out["transaction_outcomes"]) == 6
    row = publisher_row(out, 1)
    if policy == "publisher_wins":
        # n2 left qty 10.00 on south's row (region south, weight 3.5); h2 met a version it never read
        assert (row["qty"], row["region"], row["weight"], row["closed"]) == ("10.00", "north", 3.5, False)


def test_a_filtered_subscriber_meets_its_own_deleted_row_and_an_insert_keeps_the_others_null(spark):
    """Subscriber wins: north deletes a row and updates it again in one transaction (the update
    meets no row: its other columns are NULL), and updates a row another transaction of the
    batch inserted (the others as that insert left them)."""
    v1, h1 = v(), v()
    both(
        scenario(
            "subscriber_wins",
            [
                {"publisher_rows": {"orders": [order(1, "1.00", v1)]}},
                {
                    "enqueue": [
                        tran("north", "n1", dele(1, v1), upd(short(1, "2.00"), v(), v())),
                        tran("hq", "h1", ins(order(5, "5.00", weight=7.25), h1)),
                        tran("north", "n2", upd(short(5, "6.00"), h1, v())),
                    ]
                },
                {"run": {}},
            ],
        )
    )


# -- the Python layer: subscription, snapshot, capture, distribution -----------------------

SCHEMA = "qrepl_columns"
QUIET = {"echo": lambda _: None}


@pytest.fixture()
def wh(spark):
    from qrepl.core.model import publication_from_dict
    from qrepl.storage.warehouse import Warehouse, new_version

    wh = Warehouse(spark, SCHEMA)
    for s in spark.catalog.listDatabases():
        if s.name.startswith(SCHEMA + "__"):
            Warehouse(spark, s.name).drop_schema()
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict({"publication": "sales", "policy": "publisher_wins", "articles": [ORDERS]})
    )
    wh.upsert_rows("orders", [order(i, f"{i}.00", new_version(), closed=i % 2 == 0) for i in (1, 2, 3)])
    return wh


def test_a_column_filtered_subscriber_holds_sends_and_receives_its_columns_only(wh):
    """`qrepl subscription add --columns`: the replica has the columns it takes; a capture
    sends exactly those (a write to another column is refused in one line and queues
    nothing); the reader changes those at the publisher and keeps the others; a publisher
    change to a column it does not take reaches its replica as the row's new version, and its
    next update of the row meets no conflict."""
    from decimal import Decimal

    from click.testing import CliRunner

    from qrepl.cli import main
    from qrepl.core.vocabulary import ConfigError
    from qrepl.services.capture import Subscriber
    from qrepl.services.distribution import distribute
    from qrepl.services.service import run_reader
    from qrepl.storage.replica import Replica

    result = CliRunner().invoke(
        main, ["--schema", SCHEMA, "subscription", "add", "north", "--columns", "orders: qty, order_id"]
    )
    assert result.exit_code == 0, result.output
    assert "orders columns: order_id, qty" in result.output
    shown = CliRunner().invoke(main, ["--schema", SCHEMA, "subscription", "show", "north"])
    assert "columns: order_id, qty" in shown.output
    replica = Replica(wh, "north")
    assert set(replica.rows("orders")[0]) == {"order_id", "qty", "msrepl_tran_version"}

    sub = Subscriber(SCHEMA, "north")
    queued = wh.spark.table(wh.table("replication_queue")).count()
    with pytest.raises(ConfigError, match="subscriber north does not take column closed"):
        with sub.transaction() as t:
            t.update("orders", {"order_id": 1}, {"closed": True})
    assert wh.spark.table(wh.table("replication_queue")).count() == queued
    with sub.transaction() as t:
        t.update("orders", {"order_id": 2}, {"qty": "20.00"})
        t.insert("orders", {"order_id": 7, "qty": "7.00"})
        t.update("orders", {"order_id": 7}, {"qty": "7.50"})  # its own row of this transaction
    sent = [json.loads(r.new_row) for r in wh.spark.table(wh.table("replication_queue")).collect()]
    assert all(set(row) == {"order_id", "qty"} for row in sent)
    run_reader(SCHEMA)
    rows = {r["order_id"]: r for r in wh.publisher_rows("orders")}
    assert (rows[2]["qty"], rows[2]["closed"], rows[2]["weight"]) == (Decimal("20.00"), True, 1.5)
    assert (rows[7]["qty"], rows[7]["closed"], rows[7]["region"]) == (Decimal("7.50"), None, None)
    assert wh.spark.table(wh.table("conflicts")).count() == 0

    # a publisher change to a column north does not take: its replica gets the row's new version
    wh.upsert_rows("orders", [{**order(3, "3.00", v()), "closed": True}])
    distribute(SCHEMA, progress=lambda _: None)
    held = {r["order_id"]: r for r in replica.rows("orders")}
    assert (
        held[3]["msrepl_tran_version"]
        == {r["order_id"]: r for r in wh.publisher_rows("orders")}[3]["msrepl_tran_version"]
    )
    assert set(held[3]) == {"order_id", "qty", "msrepl_tran_version"}
    with sub.transaction() as t:
        t.update("orders", {"order_id": 3}, {"qty": "30.00"})
    run_reader(SCHEMA)
    assert wh.spark.table(wh.table("conflicts")).count() == 0
    rows = {r["order_id"]: r for r in wh.publisher_rows("orders")}
    assert (rows[3]["qty"], rows[3]["closed"]) == (Decimal("30.00"), True)


def test_an_immediate_column_filtered_subscriber_commits_its_columns_as_the_reference_does(wh):
    """Immediate updating with a column filter: the publisher check compares the row the
    subscriber saw on its columns, the compare-and-swap writes its columns and keeps the
    others as the check read them (NULL for a row the transaction inserted, a delete and
    re-insert included), and a rejection names the subscriber's columns only. Each commit's
    outcome, the rejection rows and the publisher rows equal the reference's."""
    from datetime import datetime

    from click.testing import CliRunner

    from qrepl.cli import main
    from qrepl.core.model import ConflictError, publication_from_dict
    from qrepl.core.reference import ReferenceReader
    from qrepl.core.rows import normalize_row
    from qrepl.services.capture import Subscriber
    from qrepl.storage.replica import Replica
    from qrepl.storage.warehouse import new_version

    columns = "orders: order_id, qty"
    result = CliRunner().invoke(
        main, ["--schema", SCHEMA, "subscription", "add", "east", "--mode", "immediate", "--columns", columns]
    )
    assert result.exit_code == 0, result.output
    pub = publication_from_dict({"publication": "sales", "policy": "publisher_wins", "articles": [ORDERS]})
    article = pub.article("orders")
    ref = ReferenceReader(pub)
    for r in wh.publisher_rows("orders"):
        ref.put_row("orders", r)
    ref.add_subscription("east", "immediate", columns={"orders": ("order_id", "qty")})

    def publisher_change(oid: int, **changes) -> None:
        row = {**{r["order_id"]: r for r in wh.publisher_rows("orders")}[oid], **changes}
        row["msrepl_tran_version"] = new_version()
        wh.upsert_rows("orders", [row])
        ref.put_row("orders", row)

    sub = Subscriber(SCHEMA, "east")
    transactions = [
        ("t_update", lambda t: t.update("orders", {"order_id": 1}, {"qty": "10.00"})),
        (
            "t_insert",
            lambda t: (
                t.insert("orders", {"order_id": 8, "qty": "8.00"}),
                t.update("orders", {"order_id": 8}, {"qty": "9.00"}),
            ),
        ),
        (
            "t_again",
            lambda t: (t.delete("orders", {"order_id": 3}), t.insert("orders", {"order_id": 3, "qty": "33.00"})),
        ),
        ("t_stale", lambda t: t.update("orders", {"order_id": 2}, {"qty": "20.00"})),
    ]
    outcomes = []
    for tran_id, body in transactions:
        if tran_id == "t_stale":  # a publisher change to a column east does not take, not distributed
            publisher_change(2, closed=True)
        spark_error = ref_error = None
        try:
            with sub.transaction(tran_id) as t:
                body(t)
                commands = list(t.commands)
        except ConflictError as exc:
            spark_error = exc
        try:
            ref.immediate_commit("east", tran_id, commands, datetime(2026, 1, 1))
        except ConflictError as exc:
            ref_error = exc
        outcomes.append((tran_id, spark_error is None, ref_error is None))
        if spark_error and ref_error:
            keep = ("article", "row_key", "conflict_type", "publisher_row", "subscriber_row")
            assert [{k: r[k] for k in keep} for r in spark_error.rows] == [
                {k: r[k] for k in keep} for r in ref_error.rows
            ]
            (rejected,) = spark_error.rows
            assert (
                set(rejected["publisher_row"])
                == set(rejected["subscriber_row"])
                == {
                    "order_id",
                    "qty",
                    "msrepl_tran_version",
                }
            )
    assert outcomes == [(t, ok, ok) for t, ok in zip([t for t, _ in transactions], [True, True, True, False])]

    spark_rows = {r["order_id"]: normalize_row(article, r) for r in wh.publisher_rows("orders")}
    ref_rows = {r["order_id"]: r for r in ref.publisher["orders"].values()}
    assert spark_rows == ref_rows
    assert (spark_rows[1]["qty"], spark_rows[1]["closed"], spark_rows[1]["weight"]) == ("10.00", False, 1.5)
    assert (spark_rows[8]["qty"], spark_rows[8]["closed"]) == ("9.00", None)
    assert (spark_rows[3]["qty"], spark_rows[3]["closed"], spark_rows[3]["weight"]) == ("33.00", None, None)
    held = {r["order_id"]: r for r in Replica(wh, "east").rows("orders")}
    assert all(set(r) == {"order_id", "qty", "msrepl_tran_version"} for r in held.values())
    assert held[1]["msrepl_tran_version"] == ref_rows[1]["msrepl_tran_version"]


def test_a_column_list_without_the_key_or_with_an_unknown_column_is_refused_in_one_line(wh):
    from click.testing import CliRunner

    from qrepl.cli import main

    for args, says in [
        (["--columns", "orders: qty"], "the key column order_id must be in the list"),
        (["--columns", "orders: order_id, nope"], "nope is not a column of orders"),
    ]:
        result = CliRunner().invoke(main, ["--schema", SCHEMA, "subscription", "add", "north", *args])
        assert result.exit_code != 0 and says in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert wh.subscription("north") is None
