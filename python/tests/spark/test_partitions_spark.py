"""Partitioned subscriptions on the real pipeline (docs/spec.md §11): row filters on snapshots,
distribution, capture and immediate commits, filter changes, the overlap check, a stored filter
checked again by the reader, and each filter evaluated by Spark exactly as the reference
evaluates it. The reader's quarantine and compensation are replayed against the reference in
test_replay_spark.py (scenarios/partitioned_subscriptions.json, under every policy in `make
conformance`) and in test_conformance.py's generated workloads."""

from __future__ import annotations

import importlib.util
import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.core import filter_language, filter_meaning
from qrepl.core.model import ConfigError, publication_from_dict
from qrepl.core.partitions import parse_filters
from qrepl.services.capture import Subscriber
from qrepl.services.conflicts import list_conflicts, write_conflict_viewer
from qrepl.services.distribution import distribute
from qrepl.services.partitions import partition_overlaps
from qrepl.services.service import add_subscription, run_reader
from qrepl.services.status import status
from qrepl.services.subscriptions import change_partition, show_subscription
from qrepl.storage.dbt_runner import DbtError
from qrepl.storage.replica import Replica
from qrepl.storage.warehouse import Warehouse, new_version
from viewer_samples import read_viewer

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_partitions"
ORDERS = {
    "name": "orders",
    "key": ["order_id"],
    "columns": {"order_id": "int", "region": "string", "qty": "decimal(12,2)", "placed": "date"},
}
PUBLICATION = {"publication": "sales", "policy": "publisher_wins", "articles": [ORDERS]}
QUIET = {"echo": lambda _: None}
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture()
def wh(spark) -> Warehouse:
    wh = Warehouse(spark, SCHEMA)
    for s in spark.catalog.listDatabases():
        if s.name.startswith(SCHEMA + "__"):
            Warehouse(spark, s.name).drop_schema()
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    regions = {1: "north", 2: "south", 3: "south", 4: "north", 5: None, 6: "north"}
    wh.upsert_rows(
        "orders",
        [
            {"order_id": i, "region": r, "qty": f"{i}.00", "placed": "2026-01-01", "msrepl_tran_version": new_version()}
            for i, r in regions.items()
        ],
    )
    return wh


def keys(rows: list[dict]) -> set[int]:
    return {r["order_id"] for r in rows}


def publisher_rows_meeting(wh: Warehouse, text: str) -> set[int]:
    """The publisher's rows a filter holds, by the reference's evaluation of it."""
    article = wh.article("orders")
    tree = filter_language.parse(article, text)
    return {r["order_id"] for r in wh.publisher_rows("orders") if filter_meaning.matches(article, tree, r)}


def test_snapshots_and_distribution_hold_exactly_the_partitions_rows(wh):
    """'A replica holds exactly the publisher rows that match its filter. A publisher change
    that moves a row into a partition delivers the row; one that moves it out deletes it from
    that replica', and the same for another subscriber's change."""
    add_subscription(SCHEMA, "north", filters=["orders: region = 'north'"], **QUIET)
    add_subscription(SCHEMA, "hq", **QUIET)
    north, hq = Replica(wh, "north"), Replica(wh, "hq")
    assert keys(north.rows("orders")) == {1, 4, 6} == publisher_rows_meeting(wh, "region = 'north'")
    assert keys(hq.rows("orders")) == {1, 2, 3, 4, 5, 6}
    # the publisher moves 4 out and 2 in; hq moves 3 in and 6 out
    rows = {r["order_id"]: r for r in wh.publisher_rows("orders")}
    wh.upsert_rows("orders", [{**rows[4], "region": "south", "msrepl_tran_version": new_version()}])
    wh.upsert_rows("orders", [{**rows[2], "region": "north", "msrepl_tran_version": new_version()}])
    with Subscriber(SCHEMA, "hq").transaction() as t:
        t.update("orders", {"order_id": 3}, {"region": "north"})
        t.update("orders", {"order_id": 6}, {"region": "west"})
    run_reader(SCHEMA, **QUIET)
    distribute(SCHEMA)
    assert keys(north.rows("orders")) == {1, 2, 3} == publisher_rows_meeting(wh, "region = 'north'")
    publisher = {r["order_id"]: r for r in wh.publisher_rows("orders")}
    for r in north.rows("orders"):
        assert r == publisher[r["order_id"]]  # rows and versions
    again = distribute(SCHEMA)
    assert again["north"]["rows_delivered"] == 0  # delivering twice changes nothing
    assert show_subscription(SCHEMA, "north")["filters"] == {"orders": "region = 'north'"}


def test_capture_refuses_a_write_outside_the_partition_in_one_line_and_queues_nothing(wh):
    add_subscription(SCHEMA, "north", filters=["orders: region = 'north'"], **QUIET)
    sub = Subscriber(SCHEMA, "north")
    before = wh.spark.table(wh.table("replication_queue")).count()
    for write, says in [
        (
            lambda t: t.insert("orders", {"order_id": 9, "region": "south", "qty": "1.00", "placed": "2026-01-01"}),
            "inserts a row",
        ),
        (lambda t: t.update("orders", {"order_id": 1}, {"region": "south"}), "moves a row"),
        (
            lambda t: t.insert("orders", {"order_id": 9, "region": None, "qty": "1.00", "placed": "2026-01-01"}),
            "inserts a row",
        ),
    ]:
        with pytest.raises(ConfigError) as e:
            with sub.transaction() as t:
                write(t)
        assert str(e.value).startswith(f"north {says} of orders outside its partition: the new row does not meet")
    with pytest.raises(ConfigError, match="no such row at subscriber north"):  # its replica does not hold 2
        with sub.transaction() as t:
            t.delete("orders", {"order_id": 2})
    assert wh.spark.table(wh.table("replication_queue")).count() == before
    with sub.transaction() as t:  # inside: captured
        t.update("orders", {"order_id": 1}, {"qty": "9.00"})
    assert wh.spark.table(wh.table("replication_queue")).count() == before + 1


def test_an_immediate_commit_outside_the_partition_is_refused_and_changes_nothing(wh):
    add_subscription(SCHEMA, "imm", update_mode="immediate", filters=["orders: region = 'north'"], **QUIET)
    publisher = wh.publisher_rows("orders")
    with pytest.raises(ConfigError, match="imm moves a row of orders outside its partition"):
        with Subscriber(SCHEMA, "imm").transaction() as t:
            t.update("orders", {"order_id": 1}, {"region": "south"})
    assert wh.publisher_rows("orders") == publisher
    with Subscriber(SCHEMA, "imm").transaction() as t:
        t.update("orders", {"order_id": 1}, {"qty": "7.00"})
    assert {r["order_id"]: r["qty"] for r in wh.publisher_rows("orders")}[1] == Decimal("7.00")


def test_a_filter_change_is_refused_while_commands_wait_and_forced_rejects_them(wh):
    """'Changing a filter is a reinitialization of that subscription: refused while the
    subscriber has queued commands the reader has not taken, unless --force.'"""
    add_subscription(SCHEMA, "north", filters=["orders: region = 'north'"], **QUIET)
    with Subscriber(SCHEMA, "north").transaction("waiting") as t:
        t.update("orders", {"order_id": 1}, {"qty": "5.00"})
    wider = ["orders: region in ('north', 'south')"]
    with pytest.raises(ConfigError, match="north has 1 queued command"):
        change_partition(SCHEMA, "north", wider, force=False, **QUIET)
    sub = change_partition(SCHEMA, "north", wider, force=True, **QUIET)
    assert sub["generation"] == 1 and sub["status"] == "active"
    assert keys(Replica(wh, "north").rows("orders")) == {1, 2, 3, 4, 6}
    run_reader(SCHEMA, **QUIET)
    outcomes = wh.spark.table(wh.table("transaction_outcomes")).collect()
    assert [(o["tran_id"], o["outcome"]) for o in outcomes] == [("waiting", "rejected_reinit")]
    # with nothing waiting no force is needed
    assert change_partition(SCHEMA, "north", [], force=False, **QUIET)["filters"] == {}
    assert keys(Replica(wh, "north").rows("orders")) == {1, 2, 3, 4, 5, 6}


def test_each_conflict_names_the_partition_it_was_judged_in_and_the_viewer_filters_by_it(wh, tmp_path):
    """'The viewer (filter by partition)': a conflict carries its subscriber's row filter of the
    article as the batch had it, so a filter changed later does not relabel it; `qrepl viewer`
    groups (and its page filters) by it."""
    add_subscription(SCHEMA, "north", filters=["orders: region = 'north'"], **QUIET)
    add_subscription(SCHEMA, "hq", **QUIET)
    with Subscriber(SCHEMA, "north").transaction("n1") as t:
        t.update("orders", {"order_id": 1}, {"qty": "7.00"})
    with Subscriber(SCHEMA, "hq").transaction("h1") as t:
        t.update("orders", {"order_id": 2}, {"qty": "8.00"})
    rows = {r["order_id"]: r for r in wh.publisher_rows("orders")}  # the publisher writes both rows since
    wh.upsert_rows("orders", [{**rows[k], "qty": "9.00", "msrepl_tran_version": new_version()} for k in (1, 2)])
    run_reader(SCHEMA, **QUIET)
    judged = {c["tran_id"]: c["partition"] for c in list_conflicts(SCHEMA)}
    assert judged == {"n1": "orders: region = 'north'", "h1": "orders: every row"}
    change_partition(SCHEMA, "north", ["orders: region = 'south'"], force=False, **QUIET)
    assert {c["tran_id"]: c["partition"] for c in list_conflicts(SCHEMA)} == judged
    groups, shown = read_viewer(write_conflict_viewer(SCHEMA, tmp_path / "viewer"))
    assert {g["partition"]: g["count"] for g in groups} == {"orders: region = 'north'": 1, "orders: every row": 1}
    assert {c["tran_id"]: c["partition"] for c in shown} == judged
    # `qrepl conflicts list --partition`, as a user selects them
    listed = CliRunner().invoke(
        main, ["conflicts", "list", "--partition", "orders: region = 'north'", "--json", "--schema", SCHEMA]
    )
    assert listed.exit_code == 0, listed.output
    assert [json.loads(line)["tran_id"] for line in listed.output.splitlines()] == ["n1"]
    shown_one = CliRunner().invoke(
        main, ["conflicts", "show", json.loads(listed.output)["conflict_id"], "--schema", SCHEMA]
    )
    assert "partition (the subscriber's, when the batch was cut): orders: region = 'north'" in shown_one.output


def test_publication_check_counts_the_rows_two_partitions_both_hold(wh):
    add_subscription(SCHEMA, "north", filters=["orders: region = 'north'"], **QUIET)
    add_subscription(SCHEMA, "south", filters=["orders: region = 'south'"], **QUIET)
    disjoint = partition_overlaps(SCHEMA)
    assert disjoint["partitioned"] and disjoint["total"] == 0
    add_subscription(SCHEMA, "hq", **QUIET)
    found = partition_overlaps(SCHEMA)
    (orders,) = found["articles"]
    assert orders["rows"] == 6 and orders["holds"] == {"hq": 6, "north": 3, "south": 2}
    assert {tuple(p["subscribers"]): p["rows"] for p in orders["pairs"]} == {
        ("hq", "north"): 3,
        ("hq", "south"): 2,
        ("north", "south"): 0,
    }
    assert found["total"] == 5
    # `qrepl status` shows the total, and the queue depth the filter change waits for
    with Subscriber(SCHEMA, "north").transaction("waiting") as t:
        t.update("orders", {"order_id": 1}, {"qty": "5.00"})
    shown = status(SCHEMA)
    assert shown["partition_overlap"] == 5
    assert {s["subscriber"]: s["queued_commands"] for s in shown["subscriptions"]} == {"hq": 0, "north": 1, "south": 0}


def test_a_stored_filter_edited_to_what_a_filter_may_not_say_stops_the_run_and_is_never_run(wh):
    """The reader renders the SQL from the stored tree and checks each part again: a
    partition_spec edited in the table (to call a function qrepl does not allow, to hold a
    number of 39 digits or a day no calendar has, to compare numbers Spark cannot compare
    exactly) stops the run in one line before the batch is cut, and nothing is written."""
    add_subscription(SCHEMA, "north", filters=["orders: region = 'north'"], **QUIET)
    with Subscriber(SCHEMA, "north").transaction() as t:
        t.update("orders", {"order_id": 1}, {"qty": "5.00"})
    spec = json.loads(wh.subscription("north")["partition_spec"])
    publisher = wh.publisher_rows("orders")
    qty, placed = {"col": "qty"}, {"col": "placed"}
    edits = [  # (the tree edited in, the one line that refuses it)
        ({"op": "=", "args": [{"col": "region"}, {"fn": "reflect", "args": []}]}, "a function is not one a filter"),
        ({"op": "=", "args": [qty, {"lit": "1" * 39, "type": "number"}]}, "a number has more than 38 digits"),
        ({"op": "=", "args": [placed, {"lit": "2026-02-30", "type": "date"}]}, "a literal is not of the type it says"),
        # decimal(12,2) against 37 integer digits: 39 digits to compare exactly
        ({"op": "=", "args": [qty, {"lit": "1" * 37, "type": "number"}]}, "= would need 39 digits"),
        (
            {"op": "in", "args": [qty, {"lit": "1", "type": "number"}, {"lit": "0." + "1" * 30, "type": "number"}]},
            "IN would need 40 digits",
        ),
    ]
    for tree, refusal in edits:
        spec["orders"]["tree"] = tree
        view = wh._temp_view([("north", json.dumps(spec))], "subscriber STRING, partition_spec STRING")
        # the subscription, and the batch's frozen copy of it once a refused run has cut one
        # (a rerun finishes the batch with the filters it was cut with)
        for table in ("subscriptions", "int_batch_subscriptions"):
            if wh.exists(table):
                wh.spark.sql(
                    f"merge into {wh.table(table)} t using {view} s on t.subscriber = s.subscriber "
                    "when matched then update set t.partition_spec = s.partition_spec"
                )
        with pytest.raises(DbtError, match=f"a row filter on orders is refused: {refusal}"):
            run_reader(SCHEMA, **QUIET)
        assert wh.publisher_rows("orders") == publisher


# each filter over rows that test its edges: Spark's value must be the reference's
FILTERS = [
    "region = 'north'",
    "region <> 'north'",
    "region > 'é'",
    "lower(region) = 'straße'",
    "upper(region) = 'STRASSE'",
    "lower(region) = 'i̇stanbul'",
    "lower(region) like 'σ%ς'",
    "trim(region) = 'north'",
    "length(region) = 2",
    "region like 'n_rth%'",
    "region like 'n\\%'",
    "region not like '%a%'",
    "region is null",
    "coalesce(region, 'none') = 'none'",
    "qty between 1.5 and 3",
    "qty > 2.005",
    "order_id in (1, 3, 5000000000)",
    "order_id not in (2, 4)",
    "placed < DATE '2026-06-01'",
    "not (qty >= 2 or region = 'north')",
]
EDGE_ROWS = [
    ("north", "1.00", "2026-01-01"),
    ("north\nside", "2.50", "2026-12-31"),
    ("  north ", "2.01", "0001-01-01"),
    ("\tnorth", "3.00", "9999-12-31"),
    ("STRASSE", "2.00", "2026-06-01"),
    ("Straße", "1.50", "2026-05-31"),
    ("İstanbul", "0.00", "2026-01-01"),
    ("ΣΊΣΥΦΟΣ", "99.99", "2026-01-01"),
    ("é🙂", "1.49", "2026-01-01"),
    ("🙂", "2.00", "2026-01-01"),
    ("n%", "2.00", "2026-01-01"),
    ("nx", "2.00", "2026-01-01"),
    ("", "2.00", "2026-01-01"),
    (None, None, None),
]


def test_every_filter_is_evaluated_by_spark_exactly_as_the_reference_evaluates_it(spark):
    article = publication_from_dict(PUBLICATION).article("orders")
    rows = [{"order_id": i, "region": r, "qty": q, "placed": d} for i, (r, q, d) in enumerate(EDGE_ROWS, 1)]
    df = spark.createDataFrame(
        [(r["order_id"], r["region"], Decimal(r["qty"]) if r["qty"] else None, r["placed"]) for r in rows],
        "order_id INT, region STRING, qty DECIMAL(12,2), placed_text STRING",
    ).selectExpr("order_id", "region", "qty", "cast(placed_text as date) as placed")
    for text in FILTERS:
        tree = filter_language.parse(article, text)
        on_spark = {
            r["order_id"]: r["v"] for r in df.selectExpr("order_id", f"{filter_meaning.spark_sql(tree)} as v").collect()
        }
        reference = {r["order_id"]: filter_meaning.evaluate(article, tree, r) for r in rows}
        assert on_spark == reference, text


def test_a_filter_given_twice_or_on_no_article_is_refused_before_anything_is_written(wh):
    with pytest.raises(ConfigError, match="orders has a filter already"):
        add_subscription(SCHEMA, "north", filters=["orders: region = 'a'", "orders: region = 'b'"], **QUIET)
    with pytest.raises(ConfigError, match="lines is not an article of sales"):
        add_subscription(SCHEMA, "north", filters=["lines: qty > 1"], **QUIET)
    assert wh.subscription("north") is None
    add_subscription(SCHEMA, "north", filters=["orders: region = 'north'"], **QUIET)
    with pytest.raises(ConfigError, match="subscriber north is subscribed with filters"):
        add_subscription(SCHEMA, "north", filters=["orders: region = 'south'"], **QUIET)
    assert parse_filters(wh.require_publication(), ["orders: region = 'north'"]) == wh.partition(
        wh.subscription("north")
    )


def test_disjoint_partitions_never_conflict_and_the_same_workload_unpartitioned_does(spark):
    """`make partition-check` at CI size (100 transactions per subscriber instead of 10,000):
    two subscribers each updating rows of their own region never conflict; the same generator
    without filters picks rows both update, and the conflicts are the reference's."""
    spec = importlib.util.spec_from_file_location("partition_check", ROOT / "scripts" / "partition_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    actual, expected, _, _ = check.replay_both(check.workload(100, partitioned=True))
    assert actual == expected and actual["conflicts"] == [] and len(actual["transaction_outcomes"]) == 200
    actual, expected, _, _ = check.replay_both(check.workload(100, partitioned=False))
    assert actual == expected and len(actual["conflicts"]) > 10
