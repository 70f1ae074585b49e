"""A run commits only to the tables it changes. A run with nothing to do (docs/spec.md 5.10:
nothing queued since the last batch, no batch unfinished, no conflict past its retention) takes
no run lock, runs no trigger and writes nothing at all, not even a history row
(macro qrepl_run_is_idle): a queue reader scheduled every few minutes mostly finds the queue as
the last batch left it, and that run must neither commit nor take a batch id. When the queue
only received commands an earlier batch already took, the run is a batch: the cut runs and
finds nothing, and everything after it is skipped. The batch numbering counts batches, the next
real batch is as before. A batch that changes one article commits nothing to the others or to
the subscriptions (macro qrepl_batch_writes): an empty MERGE is still a commit, which a
publisher-local writer or the Python layer would have to contend with."""

from __future__ import annotations

import pytest
from queue_fixtures import CUSTOMERS, V, current_snapshot, customers_publication, latest_decisions
from queue_fixtures import queued_update as _command

from qrepl.storage import faults
from qrepl.storage.dbt_runner import run_queue_reader, run_was_idle
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_idle_run"
ORDERS = {"name": "orders", "key": ["order_id"], "columns": {"order_id": "int", "note": "string"}}
PUBLICATION = {"publication": "sales", "policy": "publisher_wins", "articles": [CUSTOMERS]}
# the per-batch tables after the cut, and the cut's own two
AFTER_THE_CUT = [
    "int_queued_commands_judged",
    "conflicts",
    "publisher_changes",
    "batch_applied",
]
THE_CUT = ["int_batch_subscriptions", "int_batch_commands"]
# the marts that are views over the batch log (materialization qrepl_view): created by the
# first run, then never written
VIEWS = ["queue_rejects", "compensating_commands", "reinit_requests", "transaction_outcomes"]
# the mart a batch with no conflict gives no row (meta qrepl_skip_when: no_rows_for_batch)
CLEAN_BATCH = ["conflicts"]


def _snapshots(wh: Warehouse, tables: list[str]) -> dict[str, int]:
    return {t: current_snapshot(wh, t) for t in tables}


def _not_run(result) -> set[str]:
    """The models dbt reported as not run for lack of anything to write."""
    return {r.node.name for r in result.result.results if r.message == "NOTHING TO WRITE"}


def _nothing_to_do(result) -> set[str]:
    """The models dbt reported as not run because the run had nothing to do at all."""
    return {r.node.name for r in result.result.results if r.message == "NOTHING TO DO"}


def _writes_of_a_run() -> tuple[object, list[str]]:
    """One reader run, and every write it made (qrepl.storage.faults' write points: each
    statement that commits, the run lock's included), in order."""
    faults.arm_each(lambda k, label: None)
    try:
        result = run_queue_reader(SCHEMA)
    finally:
        faults.disarm()
    return result, faults.labels()


def _views_left_alone(result) -> set[str]:
    """The views dbt reported as already up to date: no statement but one property read."""
    return {r.node.name for r in result.result.results if r.message == "VIEW UP TO DATE"}


def _history(wh: Warehouse) -> list[tuple]:
    return sorted(
        (h["batch_id"], h["transactions_processed"], h["commands_processed"], h["conflicts"])
        for h in wh.rows_of("queue_reader_history")
    )


def _setup(spark, publication: dict) -> Warehouse:
    return customers_publication(spark, SCHEMA, publication, customers=3)


def test_a_run_with_nothing_to_do_writes_nothing_and_takes_no_batch_id(spark):
    wh = _setup(spark, PUBLICATION)

    # the first run creates every table, though nothing is queued yet, and says it skipped none
    assert _not_run(run_queue_reader(SCHEMA)) == set()
    assert latest_decisions(wh)["models_skipped"] == []
    first = _command(1, 1, V(1), V(101))
    stale = _command(2, 2, V(99), V(102))  # a conflict: publisher wins
    wh.append_queue([first, stale])
    # every table of the batch is written (a conflict was logged); the views are left alone
    result = run_queue_reader(SCHEMA)
    assert (_not_run(result), _views_left_alone(result)) == (set(), set(VIEWS))
    assert _history(wh) == [(1, 0, 0, 0), (2, 2, 2, 1)]
    decided = latest_decisions(wh)  # the run's decisions are data: the first batch reads the whole queue
    assert (decided["queue_read"], decided["batch_empty"], decided["models_skipped"]) == ("whole queue", False, [])
    assert (decided["followers"], decided["resolution"], decided["articles_merged"]) == (0, "pass 0", ["customers"])
    assert decided["subscriptions_written"] is False and decided["queue_snapshot_id"] == current_snapshot(
        wh, "replication_queue"
    )

    # nothing queued since: the run has nothing to do; it writes nothing, not even its
    # history row, and takes no lock (no write point at all); the views are checked as ever
    tables = THE_CUT + AFTER_THE_CUT + ["queue_reader_history", "publisher_stamps", "customers"]
    before = _snapshots(wh, tables)
    result, writes = _writes_of_a_run()
    assert writes == []
    assert run_was_idle(result)
    assert (_not_run(result), _views_left_alone(result)) == (set(), set(VIEWS))
    assert _nothing_to_do(result) == set(THE_CUT + AFTER_THE_CUT + ["queue_reader_history"])
    assert _snapshots(wh, tables) == before
    assert _history(wh) == [(1, 0, 0, 0), (2, 2, 2, 1)]
    assert not wh.exists("qrepl_run_lock")

    # a command delivered again: a batch, whose cut runs and takes nothing; the rest is not run
    wh.append_queue([first])
    before = _snapshots(wh, AFTER_THE_CUT)
    result = run_queue_reader(SCHEMA)
    assert not run_was_idle(result) and _not_run(result) == set(AFTER_THE_CUT)
    assert _snapshots(wh, AFTER_THE_CUT) == before
    assert _history(wh)[-1] == (3, 0, 0, 0)
    decided = latest_decisions(wh)  # only the appends since the last batch's snapshot were read
    assert (decided["queue_read"], decided["batch_empty"]) == ("appends since snapshot", True)
    assert sorted(decided["models_skipped"]) == sorted(AFTER_THE_CUT)

    # the next command is the next batch's, decided and applied as ever; with no conflict, the
    # conflicts and compensating commands are not written; a quarantined command is
    wh.append_queue([_command(3, 3, V(3), V(103)), _command(4, 3, V(3), "not a version")])
    before = _snapshots(wh, CLEAN_BATCH)
    assert _not_run(run_queue_reader(SCHEMA)) == set(CLEAN_BATCH)
    assert _snapshots(wh, CLEAN_BATCH) == before
    assert sorted(latest_decisions(wh)["models_skipped"]) == sorted(CLEAN_BATCH)
    assert [(r["batch_id"], r["tran_id"]) for r in wh.rows_of("queue_rejects")] == [(4, "t4")]
    assert _history(wh)[-1] == (4, 1, 1, 0)
    outcomes = sorted((o["batch_id"], o["tran_id"], o["outcome"]) for o in wh.rows_of("transaction_outcomes"))
    assert outcomes == [(2, "t1", "applied"), (2, "t2", "rejected"), (4, "t3", "applied")]
    assert sorted((r["customer_id"], r["city"]) for r in wh.publisher_rows("customers")) == [
        (1, "city 1"),
        (2, "home 2"),
        (3, "city 3"),
    ]
    assert [(c["batch_id"], c["tran_id"]) for c in wh.rows_of("compensating_commands")] == [(2, "t2")]


def test_a_job_write_between_batches_is_stamped_by_the_next_batch_and_met_as_a_conflict(spark):
    """A run with nothing to do runs no trigger, so a job's write since the last batch is not
    stamped by it; the next batch's trigger stamps it before the cut, and a subscriber's
    change made from the row as it was before the job meets it as a conflict (publisher wins:
    the job's write stays)."""
    wh = _setup(spark, PUBLICATION)
    run_queue_reader(SCHEMA)
    wh.append_queue([_command(1, 1, V(1), V(101))])
    run_queue_reader(SCHEMA)
    spark.sql(f"update {wh.table('customers')} set city = 'by the job' where customer_id = 1")  # keeps V(101)
    result, writes = _writes_of_a_run()
    assert run_was_idle(result) and writes == []
    assert [(r["city"], r["msrepl_tran_version"]) for r in wh.publisher_rows("customers") if r["customer_id"] == 1] == [
        ("by the job", V(101))
    ]
    wh.append_queue([_command(2, 1, V(101), V(102))])  # s1 still holds the row as its t1 left it
    result = run_queue_reader(SCHEMA)
    assert not run_was_idle(result)
    assert [(c["batch_id"], c["tran_id"], c["conflict_type"]) for c in wh.rows_of("conflicts")] == [
        (3, "t2", "update_update")
    ]
    job_row = [r for r in wh.publisher_rows("customers") if r["customer_id"] == 1][0]
    assert job_row["city"] == "by the job" and job_row["msrepl_tran_version"] not in (V(101), V(102))


@pytest.mark.parametrize("policy", ["publisher_wins", "publisher_wins_reinit"])
def test_a_batch_commits_only_to_the_tables_it_changes(spark, policy):
    wh = _setup(spark, {"publication": "sales", "policy": policy, "articles": [CUSTOMERS, ORDERS]})
    spark.createDataFrame([(1, "first", V(501))], "order_id INT, note STRING, msrepl_tran_version STRING").writeTo(
        wh.table("orders")
    ).append()
    run_queue_reader(SCHEMA)  # creates every table
    wh.append_queue([_command(1, 1, V(1), V(101)), _command(2, 2, V(99), V(102))])  # t2 is stale
    before = _snapshots(wh, ["customers", "orders", "subscriptions"])
    run_queue_reader(SCHEMA)
    after = _snapshots(wh, ["customers", "orders", "subscriptions"])
    assert after["customers"] != before["customers"]  # t1 applied
    assert after["orders"] == before["orders"]  # not in the batch: no MERGE, no snapshot
    subscription = wh.rows_of("subscriptions")[0]
    assert latest_decisions(wh)["articles_merged"] == ["customers"]
    assert latest_decisions(wh)["subscriptions_written"] is (policy == "publisher_wins_reinit")
    if policy == "publisher_wins":
        assert after["subscriptions"] == before["subscriptions"]  # no reinit request
        assert subscription["status"] == "active"
    else:  # the conflict asks for a reinitialization, which is written
        assert after["subscriptions"] != before["subscriptions"]
        assert subscription["status"] == "reinit_pending"
    assert sorted((r["customer_id"], r["city"]) for r in wh.publisher_rows("customers")) == [
        (1, "city 1"),
        (2, "home 2"),
        (3, "home 3"),
    ]


def test_a_mart_table_from_before_is_kept_beside_its_view(spark):
    """A store whose `transaction_outcomes` is still the table an earlier qrepl appended to:
    the next run keeps that table, renamed `transaction_outcomes_before_view` with every row
    it had, and puts the view over the batch log in its place; later runs leave both alone."""
    wh = _setup(spark, PUBLICATION)
    run_queue_reader(SCHEMA)  # creates every table and view
    wh.append_queue([_command(1, 1, V(1), V(101))])
    spark.sql(f"drop view {wh.table('transaction_outcomes')}")
    spark.sql(
        f"create table {wh.table('transaction_outcomes')} using iceberg as "
        "select 's1' as subscriber, 'old' as tran_id, cast(1 as bigint) as batch_id, 1 as tran_pos, "
        "'applied' as outcome, 'publisher_wins' as policy, current_timestamp() as processed_at"
    )
    result = run_queue_reader(SCHEMA)
    assert "transaction_outcomes" not in _views_left_alone(result)  # made again, as a view
    kept = wh.rows_of("transaction_outcomes_before_view")
    assert [(r["tran_id"], r["outcome"]) for r in kept] == [("old", "applied")]
    views = {t.name for t in spark.catalog.listTables(SCHEMA) if t.tableType == "VIEW"}
    assert set(VIEWS) <= views
    assert [(o["batch_id"], o["tran_id"], o["outcome"]) for o in wh.rows_of("transaction_outcomes")] == [
        (2, "t1", "applied")
    ]
    assert "transaction_outcomes" in _views_left_alone(run_queue_reader(SCHEMA))
