"""Columns the publisher generates, on the real pipeline (docs/spec.md §3): an identity column
assigned from ranges (the publisher's for immediate updating, each subscriber's own for queued
updating) and a timestamp stamped at commit. The reference decides the same values."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from qrepl.cli.commands import main as cli
from qrepl.core.model import PUBLISHER_RANGE_OWNER, ConfigError, publication_from_dict
from qrepl.core.reference import ReferenceReader
from qrepl.services.capture import Subscriber
from qrepl.services.service import add_subscription, run_reader
from qrepl.storage.identity_ranges import current_range
from qrepl.storage.replica import Replica
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_generated"
ORDERS = {
    "name": "orders",
    "key": ["order_id"],
    "identity": "order_id",
    "identity_range": 3,
    "stamped": "placed_at",
    "columns": {"order_id": "bigint", "item": "string", "placed_at": "timestamp"},
}
PUBLICATION = {"publication": "shop", "articles": [ORDERS]}
QUIET = {"echo": lambda _: None}


@pytest.fixture()
def wh(spark, tmp_path) -> Warehouse:
    for s in spark.catalog.listDatabases():
        if s.name == SCHEMA or s.name.startswith(SCHEMA + "__"):
            Warehouse(spark, s.name).drop_schema()
    config = tmp_path / "shop.yml"
    config.write_text(json.dumps(PUBLICATION))
    from qrepl.services.service import create_publication

    create_publication(config, SCHEMA)
    add_subscription(SCHEMA, "imm", update_mode="immediate", **QUIET)
    add_subscription(SCHEMA, "north", **QUIET)
    return Warehouse(spark, SCHEMA)


def rows(wh: Warehouse) -> dict[int, dict]:
    return {r["order_id"]: r for r in wh.publisher_rows("orders")}


def test_ranges_are_assigned_like_the_reference(wh):
    ref = ReferenceReader(publication_from_dict(PUBLICATION))
    ref.add_subscription("imm", "immediate")
    ref.add_subscription("north")
    for owner in (PUBLISHER_RANGE_OWNER, "imm", "north"):
        assert current_range(wh, owner, "orders") == ref.identity_range(owner, "orders")


def test_an_immediate_insert_gets_its_identity_and_stamp_from_the_publisher(wh):
    sub = Subscriber(SCHEMA, "imm")
    with sub.transaction("t1") as t:
        t.insert("orders", {"item": "pen"})
        t.insert("orders", {"item": "ink"})
        submitted = [dict(c) for c in t.commands]
    assert t.identities == {"orders": [1, 2]}
    decided = wh.rows_of("immediate_transactions")[0]["decided_at"]
    pub = rows(wh)
    assert sorted(pub) == [1, 2] and pub[1]["item"] == "pen"
    assert {r["placed_at"] for r in pub.values()} == {decided.isoformat(timespec="microseconds") + "Z"}
    assert {r["order_id"]: r for r in Replica(wh, "imm").rows("orders")} == pub  # written to the replica too

    # the reference, given the same commands with the identity left to it, decides the same rows
    ref = ReferenceReader(publication_from_dict(PUBLICATION))
    ref.add_subscription("imm", "immediate")
    ref.add_subscription("north")
    blank = [
        {**c, "row_key": None, "new_row": json.dumps({**json.loads(c["new_row"]), "order_id": None})} for c in submitted
    ]
    ref.immediate_commit("imm", "t1", blank, decided)
    assert {json.loads(k)["order_id"]: r for k, r in ref.publisher["orders"].items()} == pub


def test_a_queued_subscriber_uses_its_own_range_and_is_refused_when_it_runs_out(wh):
    sub = Subscriber(SCHEMA, "north")
    with sub.transaction() as t:
        for item in ("a", "b", "c"):
            t.insert("orders", {"item": item})
    assert t.identities == {"orders": [7, 8, 9]}  # north's range; the publisher's and imm's come first
    with pytest.raises(
        ConfigError,
        match=r"subscriber north has used its identity range 7\.\.9 of orders\.order_id: "
        r"run `qrepl subscription range north --article orders`",
    ):
        with sub.transaction() as t:
            t.insert("orders", {"item": "d"})
    assert wh.spark.table(f"{SCHEMA}.replication_queue").count() == 3  # nothing of the refused one

    result = CliRunner().invoke(cli, ["--schema", SCHEMA, "subscription", "range", "north", "--article", "orders"])
    assert result.exit_code == 0 and "north: identity range 10..12 of orders" in result.output, result.output
    with sub.transaction() as t:
        t.insert("orders", {"item": "d"})
    assert t.identities == {"orders": [10]}

    run_reader(SCHEMA, **QUIET)
    pub = rows(wh)
    assert sorted(pub) == [7, 8, 9, 10]
    replica = {r["order_id"]: r for r in Replica(wh, "north").rows("orders")}
    assert replica[10]["placed_at"] == pub[10]["placed_at"] is not None  # the capture's stamp, applied as queued

    status = CliRunner().invoke(cli, ["--schema", SCHEMA, "status"])
    assert "identity orders: north range 10..12, 2 value(s) left" in status.output, status.output


def test_an_identity_value_is_qrepls_to_give(wh):
    sub = Subscriber(SCHEMA, "north")
    with pytest.raises(ConfigError, match="orders.order_id is an identity column: leave it out of the insert"):
        with sub.transaction() as t:
            t.insert("orders", {"order_id": 5, "item": "x"})
    with sub.transaction() as t:
        t.insert("orders", {"item": "x"})
    with pytest.raises(ConfigError, match="no such row"):  # the key is the identity: an update names the row by it
        with sub.transaction() as t:
            t.update("orders", {"order_id": 99}, {"item": "y"})


def test_an_enqueued_insert_outside_the_subscribers_range_is_quarantined(wh, tmp_path):
    from qrepl.services.enqueue import enqueue_file

    f = tmp_path / "north.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(
                {
                    "tran_id": tid,
                    "op": "I",
                    "article": "orders",
                    "new_version": v,
                    "row": {"order_id": oid, "item": "x", "placed_at": "2026-01-01T00:00:00Z"},
                }
            )
            for tid, oid, v in [
                ("t1", 7, "00000000-0000-4000-8000-000000000001"),
                ("t2", 4, "00000000-0000-4000-8000-000000000002"),
            ]
        )
        + "\n"
    )
    report = enqueue_file(SCHEMA, "north", f, progress=lambda _: None)
    assert report.transactions == 1 and report.rejected_records == 1
    assert any(
        "identity order_id 4 is outside the subscriber's identity range(s) of orders (7..9)" in p
        for p in report.problems
    ), report.problems
