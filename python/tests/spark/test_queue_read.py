"""How a batch reads the queue (macros/queue/qrepl_queue_rows.sql, qrepl_queue_changelog_view): as of one snapshot,
and after the first batch only the rows appended since the snapshot the last batch read, so a
small batch does not pay for the queue's whole history. When the queue was rewritten or its
snapshots expired in between, the whole queue is read instead. Either way each queued command
is taken by exactly one batch, and a command delivered again is not taken twice."""

from __future__ import annotations


import pytest
from queue_fixtures import CUSTOMERS, V, current_snapshot, customers_publication, latest_decisions
from queue_fixtures import queued_update as _command

from qrepl.storage.dbt_runner import run_queue_reader
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_queue_read"
PUBLICATION = {"publication": "sales", "policy": "publisher_wins", "articles": [CUSTOMERS]}


def _setup(spark) -> Warehouse:
    return customers_publication(spark, SCHEMA, PUBLICATION, customers=5)


def _run(wh: Warehouse) -> int:
    """One queue-reader run; how many queue rows its batch cut read. The run records which read
    it made (queue_reader_history.decisions.queue_read); an append-only read is Iceberg's
    changelog view `qrepl_queue_appended`, which int_batch_commands' pre-hook made in this
    (embedded) session, and a whole read is the queue as of the snapshot the run records."""
    run_queue_reader(SCHEMA)
    decided = latest_decisions(wh)
    if decided["queue_read"] == "appends since snapshot":
        return wh.spark.sql("select count(*) from qrepl_queue_appended where _change_type = 'INSERT'").first()[0]
    assert decided["queue_read"] == "whole queue", decided
    return wh.spark.sql(
        f"select count(*) from {SCHEMA}.replication_queue version as of {decided['queue_snapshot_id']}"
    ).first()[0]


def _taken(wh: Warehouse) -> dict[str, list[int]]:
    """tran_id: the batches that took it."""
    taken: dict[str, list[int]] = {}
    for r in wh.rows_of("int_batch_commands"):
        taken.setdefault(r["tran_id"], []).append(r["batch_id"])
    return {t: sorted(b) for t, b in taken.items()}


def _queue_snapshot(wh: Warehouse) -> int:
    return current_snapshot(wh, "replication_queue")


def test_after_the_first_batch_only_the_rows_appended_since_are_read(spark):
    wh = _setup(spark)
    first = _command(1, 1, V(1), V(101))
    wh.append_queue([first])
    assert _run(wh) == 1  # the first batch reads the whole queue
    # the first command delivered again (byte-identical) and a new one, in one append
    wh.append_queue([first, _command(2, 2, V(2), V(102))])
    snapshot = _queue_snapshot(wh)
    assert _run(wh) == 2  # the two rows appended, not the queue's three
    assert _taken(wh) == {"t1": [1], "t2": [2]}
    assert {r["batch_id"]: r["queue_snapshot_id"] for r in wh.rows_of("int_batch_commands")}[2] == snapshot
    outcomes = sorted((o["tran_id"], o["outcome"]) for o in wh.rows_of("transaction_outcomes"))
    assert outcomes == [("t1", "applied"), ("t2", "applied")]
    assert sorted((r["customer_id"], r["city"]) for r in wh.publisher_rows("customers"))[:2] == [
        (1, "city 1"),
        (2, "city 2"),
    ]
    wh.append_queue([_command(3, 3, V(3), V(103))])  # a third batch reads from the second's snapshot
    assert _run(wh) == 1
    assert _taken(wh) == {"t1": [1], "t2": [2], "t3": [3]}


@pytest.mark.parametrize("change", ["rewritten", "expired"])
def test_a_queue_rewritten_or_expired_since_the_last_batch_is_read_whole(spark, change):
    wh = _setup(spark)
    wh.append_queue([_command(1, 1, V(1), V(101))])
    _run(wh)
    wh.append_queue([_command(2, 2, V(2), V(102))])
    queue = f"{SCHEMA}.replication_queue"
    if change == "rewritten":  # compaction: a `replace` snapshot, not an append
        spark.sql(
            f"call spark_catalog.system.rewrite_data_files(table => '{queue}', options => map('rewrite-all', 'true'))"
        ).collect()
    else:  # the snapshot the last batch read is gone
        now = spark.sql("select current_timestamp()").first()[0]
        spark.sql(
            f"call spark_catalog.system.expire_snapshots(table => '{queue}', "
            f"older_than => timestamp '{now:%Y-%m-%d %H:%M:%S.%f}', retain_last => 1)"
        ).collect()
    wh.append_queue([_command(3, 3, V(3), V(103))])
    assert _run(wh) == 3  # the whole queue: the last batch's snapshot cannot be read from
    assert _taken(wh) == {"t1": [1], "t2": [2], "t3": [2]}
    outcomes = sorted((o["tran_id"], o["outcome"]) for o in wh.rows_of("transaction_outcomes"))
    assert outcomes == [("t1", "applied"), ("t2", "applied"), ("t3", "applied")]
