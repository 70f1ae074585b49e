"""Issue 39's windows "found by reading", each hit deterministically on Spark: a concurrent
command runs right after a named write of another one (qrepl.storage.faults.arm_at_label), in one
process, as the two processes would interleave. The retention item is in races_cases.py."""

from __future__ import annotations

import pytest

from qrepl.storage import faults
from qrepl.services.capture import Subscriber
from qrepl.services.distribution import distribute, reinitialize
from qrepl.services.maintenance import maintain
from qrepl.core.model import ConfigError, ConflictError
from qrepl.storage.replica import Replica, record_delivery
from qrepl.services.service import add_subscription, run_reader
from qrepl.storage.warehouse import Warehouse, new_version
from two_articles import QUIET, article_rows, two_articles

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_read_races"
REPLACED = "writeTo.createOrReplace"  # a snapshot's replacement of a replica table


def _snapshots(wh: Warehouse, article: str) -> set[int]:
    return {r.snapshot_id for r in wh.spark.table(f"{wh.table(article)}.snapshots").collect()}


def _run_after(prefix: str, action):
    """Run `action()` right after the next write whose label starts with `prefix`."""
    faults.arm_at_label(prefix, lambda k, label: action())


# -- a capture during `subscription reinit` ------------------------------------------------


def test_a_capture_during_a_reinitialization_never_diverges_the_new_replica(spark):
    """The capture comes right after the reinitialization replaced the replica's first table
    (before the fix, before the generation bump, so it landed there at the old generation,
    to be rejected_reinit later): it is refused with one line, and after a delivery the
    replica equals the publisher."""
    wh = two_articles(spark, SCHEMA, "a")
    refused: list[str] = []

    def capture():
        try:
            with Subscriber(wh.schema, "a").transaction("a-during") as t:
                t.update("customers", {"customer_id": 1}, {"city": "during"})
        except ConfigError as exc:
            refused.append(str(exc))

    _run_after(REPLACED, capture)
    try:
        assert reinitialize(wh.schema, "a") == 1
    finally:
        faults.disarm()
    distribute(wh.schema)
    assert article_rows(wh, "a") == article_rows(wh)
    assert [line.split(":")[0] for line in refused] == ["subscriber a is being reinitialized"]


def test_a_capture_whose_replica_write_follows_a_reinitialization_is_undone(spark):
    """The capture's queue append (generation 0) comes before a whole reinitialization, its
    replica write after it: the transaction will be rejected_reinit, so the capture puts the
    publisher's rows back into the new replica and fails with one line."""
    wh = two_articles(spark, SCHEMA, "a")
    _run_after("writeTo.append", lambda: reinitialize(wh.schema, "a"))  # the capture's queue append
    try:
        with (
            pytest.raises(ConfigError, match="subscriber a was reinitialized during transaction a-late"),
            Subscriber(wh.schema, "a").transaction("a-late") as t,
        ):
            t.update("customers", {"customer_id": 1}, {"city": "late"})
    finally:
        faults.disarm()
    assert article_rows(wh, "a") == article_rows(wh)


# -- `maintain` racing `subscription add`; one failing subscriber --------------------------


def test_maintain_during_a_subscription_add_keeps_the_snapshot_it_records(spark):
    """While b's initial snapshot is being written, the publisher changes, a's delivery
    records the new snapshot, and `qrepl maintain` runs: the snapshot b then records is kept,
    and the next distribution delivers to both."""
    wh = two_articles(spark, SCHEMA, "a")

    def publisher_moves_on_then_maintain():
        wh.upsert_rows("customers", [{"customer_id": 3, "city": "new", "msrepl_tran_version": new_version()}])
        distribute(wh.schema)
        maintain(wh.schema)

    _run_after(REPLACED, publisher_moves_on_then_maintain)
    try:
        add_subscription(SCHEMA, "b", **QUIET)
    finally:
        faults.disarm()
    report = distribute(wh.schema)
    assert report["b"]["rows_delivered"] == 1
    assert article_rows(wh, "a") == article_rows(wh, "b") == article_rows(wh)


def test_one_failing_subscriber_does_not_block_distribution_to_the_others(spark):
    """a's delivery record names a snapshot the table does not have: a fails with one line,
    b is still delivered, and distribute fails at the end (the CLI exits nonzero)."""
    from qrepl.services.distribution import DistributionFailed

    wh = two_articles(spark, SCHEMA, "a", "b")
    record_delivery(wh, "a", {"customers": 12345})
    wh.upsert_rows("customers", [{"customer_id": 3, "city": "new", "msrepl_tran_version": new_version()}])
    lines: list[str] = []
    with pytest.raises(DistributionFailed, match=r"^distribution failed for 1 of 2 subscriber\(s\): a \(a: ") as err:
        distribute(wh.schema, progress=lines.append)
    assert lines[0].startswith("[1/2] a: failed: ") and "\n" not in lines[0]
    assert err.value.report["b"]["rows_delivered"] == 1
    assert article_rows(wh, "b") == article_rows(wh)


# -- a dropped subscription's deliveries ---------------------------------------------------


def test_a_dropped_subscriptions_deliveries_pin_no_snapshot(spark):
    """a is dropped at the first snapshot; after a change, a delivery to b and `maintain`, that
    snapshot is expired (a's delivery rows no longer pin it)."""
    wh = two_articles(spark, SCHEMA, "a", "b")
    first = wh.current_snapshot("customers")
    wh.drop_subscription("a")
    wh.upsert_rows("customers", [{"customer_id": 3, "city": "new", "msrepl_tran_version": new_version()}])
    distribute(wh.schema)
    maintain(wh.schema)
    assert first not in _snapshots(wh, "customers")
    assert distribute(wh.schema)["b"]["rows_delivered"] == 0


# -- an immediate transaction over two articles, undone after the first -------------------


def test_an_undone_immediate_transactions_first_article_is_seen_and_then_converges(spark):
    """imm's transaction over customers and tags: customers commits, a publisher-local write
    to tags makes the tags MERGE refuse, customers is put back. In between (documented in
    docs/reliability.md), a delivery sends customers' row as the transaction left it and a run
    judges b's queued change to that row against it (a conflict, rejected and compensated).
    After the undo the next delivery brings every replica back to the publisher."""
    wh = two_articles(spark, SCHEMA, "imm", "b", immediate="imm")
    with Subscriber(wh.schema, "b").transaction("b1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "b"})
    seen: list[dict] = []

    def in_between():
        wh.upsert_rows("tags", [{"tag": "t", "note": "local", "msrepl_tran_version": new_version()}])
        distribute(wh.schema)
        seen.append(Replica(wh, "b").row("customers", {"customer_id": 1}))
        run_reader(SCHEMA, **QUIET)

    _run_after("python:immediate.publisher.customers", in_between)
    try:
        with pytest.raises(ConflictError), Subscriber(wh.schema, "imm").transaction("imm1") as t:
            t.update("customers", {"customer_id": 1}, {"city": "imm"})
            t.update("tags", {"tag": "t"}, {"note": "imm"})
    finally:
        faults.disarm()
    assert seen[0]["city"] == "imm"  # the first article, visible in between
    [conflict] = wh.rows_of("conflicts")
    assert (conflict["tran_id"], conflict["conflict_type"]) == ("b1", "update_update")
    assert [r["outcome"] for r in wh.rows_of("transaction_outcomes")] == ["rejected"]
    assert {r[0]: r[1] for r in article_rows(wh)["customers"]} == {1: "c1", 2: "c2"}  # put back
    distribute(wh.schema)
    assert article_rows(wh, "b") == article_rows(wh, "imm") == article_rows(wh)
