"""No write is lost, by anyone (docs/spec.md §10): a job that knows nothing of qrepl writes a
publisher row, keeping its version, at a named point of a queue-reader run or of an immediate
commit, and that write is never overwritten unseen. Each point is hit deterministically: the
job's plain `UPDATE` runs right after a named write of the run (qrepl.storage.faults), in one
process, as the two processes would interleave.

The outcome is the reference's for a publisher change made right after the run: the batch's
transaction is recorded applied, and the job's write stands (batch_applied counts the row as
kept); distribution then brings the job's row, under a new version, to every replica."""

from __future__ import annotations

import pytest

from qrepl.core.model import ConflictError
from qrepl.services.capture import Subscriber
from qrepl.services.distribution import distribute
from qrepl.services.service import add_subscription, run_reader
from qrepl.storage import faults
from qrepl.storage.replica import replica_schema
from two_articles import QUIET, article_rows, two_articles

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_no_write_lost"

# the run's writes between its publisher trigger and its MERGE (labels of qrepl.storage.faults):
# publisher_changes is the last table a batch writes before batch_applied's MERGE (the marts
# after it are views, written by no steady-state run)
DURING_A_RUN = {
    "between the trigger and the batch cut": "model.qrepl.int_batch_subscriptions",
    "right after the batch cut": "model.qrepl.int_batch_commands",
    "right before the MERGE": "model.qrepl.publisher_changes",
}


def _job_update(wh, article: str, column: str, value: str, key: str, key_value) -> None:
    """A publisher job's plain SQL UPDATE that sets no new version."""
    wh.spark.sql(f"update {wh.table(article)} set {column} = '{value}' where {key} = {key_value}")


def _run_with_job_write_after(prefix: str, job) -> None:
    """One reader run with `job` committed right after the run's write labelled `prefix`; a
    run that makes no such write fails the test (the point would test nothing)."""
    ran = []
    faults.arm_at_label(prefix, lambda k, label: ran.append(job()))
    try:
        run_reader(SCHEMA, **QUIET)
    finally:
        faults.disarm()
    assert ran, f"the run made no write labelled {prefix!r}: the job never wrote"


def _a1_queued_behind_a_job_write(spark):
    """Two articles after one run (the next is a steady-state one); subscriber a's queued
    update of customer 1 as it last saw it, then a job's UPDATE of customer 1 that keeps its
    version: a's change must meet the job's write as a conflict."""
    wh = two_articles(spark, SCHEMA, "a")
    run_reader(SCHEMA, **QUIET)
    with Subscriber(wh.schema, "a").transaction("a1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "from-a"})
    _job_update(wh, "customers", "city", "from-job", "customer_id", 1)
    return wh


def _a1_met_the_job_write(wh, city_2: str) -> None:
    """a's change was logged as one update_update conflict and rejected, the job's city of
    customer 1 stands beside customer 2's `city_2`, and a delivery brings a's replica in line."""
    assert [(c["tran_id"], c["row_key"], c["conflict_type"]) for c in wh.rows_of("conflicts")] == [
        ("a1", '{"customer_id":1}', "update_update")
    ]
    assert [o["outcome"] for o in wh.rows_of("transaction_outcomes")] == ["rejected"]
    cities = {r[0]: r[1] for r in article_rows(wh)["customers"]}
    assert cities == {1: "from-job", 2: city_2}
    distribute(wh.schema)
    assert article_rows(wh, "a") == article_rows(wh)


@pytest.mark.parametrize("point", list(DURING_A_RUN))
def test_case_4_a_job_write_during_a_run_is_never_overwritten(spark, point):
    """Subscriber a's queued update of customer 1 (seen at its old version) and a job's UPDATE
    of the same row that keeps the version, committed at `point` of the run: the job's city
    stays, batch_applied reports the row kept, and after a delivery a's replica holds the
    job's row too. Before the fix, the compare-and-swap compared the version alone and the
    run wrote a's city over the job's."""
    wh = two_articles(spark, SCHEMA, "a")
    run_reader(SCHEMA, **QUIET)  # the tables exist; the next run is a steady-state one
    with Subscriber(wh.schema, "a").transaction("a1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "from-a"})
    _run_with_job_write_after(
        DURING_A_RUN[point], lambda: _job_update(wh, "customers", "city", "from-job", "customer_id", 1)
    )
    cities = {r[0]: r[1] for r in article_rows(wh)["customers"]}
    assert cities == {1: "from-job", 2: "c2"}
    [applied] = [r for r in wh.rows_of("batch_applied") if r["target_table"] == "customers"]
    assert (applied["rows_requested"], applied["rows_written"], applied["rows_kept"]) == (1, 0, 1)
    distribute(wh.schema)
    assert article_rows(wh, "a") == article_rows(wh)
    assert {r[0]: r[1] for r in article_rows(wh, "a")["customers"]} == {1: "from-job", 2: "c2"}


@pytest.mark.parametrize("between", ["a job write", "a stamp"])
def test_case_4_a_write_while_the_trigger_stamps_leaves_the_stamp_in_the_batchs_view(spark, between):
    """A job rewrites customer 1 keeping its version, and subscriber a updates customer 1 as
    it last saw it: a's change must meet the job's write as a conflict. While the run's
    trigger is between examining the table and its stamp MERGE, another commit lands on the
    same table: a second job UPDATE (of customer 2, keeping its version), or a stamp of
    customer 1 by another process (a `qrepl distribute` stamping at the same moment, as `make
    deploy-test` interleaved them under load; here the same commit, a new version set by
    plain SQL). The run's stamp then has another parent than the snapshot it examined.
    Before the fix, the batch was cut as of that examined snapshot, without either stamp: a's
    change matched the old version there, was recorded applied with no conflict, and the
    compare-and-swap kept the job's row, so a's change was lost unlogged. Now the trigger
    examines the commits that came between too, and the batch sees every stamp."""
    wh = _a1_queued_behind_a_job_write(spark)

    def commit_between():
        if between == "a job write":
            _job_update(wh, "customers", "city", "from-job-2", "customer_id", 2)
        else:
            spark.sql(f"update {wh.table('customers')} set msrepl_tran_version = uuid() where customer_id = 1")

    ran = []
    faults.arm_when(
        lambda label: "drop view if exists qrepl_stamp_customers" in label,
        lambda k, label: ran.append(commit_between()),
    )
    try:
        run_reader(SCHEMA, **QUIET)
    finally:
        faults.disarm()
    assert ran, "the run's trigger made no write between its examination and its stamp"
    _a1_met_the_job_write(wh, "from-job-2" if between == "a job write" else "c2")


def test_case_4_a_table_that_keeps_changing_while_the_trigger_stamps_fails_the_run_before_its_cut(spark):
    """A job commits to customers between the trigger's look and its stamp at every pass (an
    UPDATE of customer 2 keeping its version, which the next pass must stamp in turn). The
    trigger looks again after each overtaken stamp, and after qrepl_stamp_passes() (8) passes
    it fails the run in one line, before the batch is cut: a's queued change is not judged
    against a view that misses a stamp. Run again with the job quiet, the run converges: a's
    change meets the job's write of customer 1 as a conflict, and every job write stands."""
    from qrepl.storage.dbt_runner import DbtError

    wh = _a1_queued_behind_a_job_write(spark)
    writes = []

    def job_at_every_pass(k, label):
        if "drop view if exists qrepl_stamp_customers" in label:
            with faults.uncounted():
                writes.append(_job_update(wh, "customers", "city", f"job-{len(writes)}", "customer_id", 2))

    faults.arm_each(job_at_every_pass)
    try:
        with pytest.raises(DbtError, match="kept changing while the publisher's trigger stamped it") as failed:
            run_reader(SCHEMA, **QUIET)
    finally:
        faults.disarm()
    assert "8 passes" in str(failed.value) and "no batch was cut" in str(failed.value)
    assert len(writes) >= 8, "the job wrote fewer times than the trigger made passes"
    assert wh.rows_of("transaction_outcomes") == []  # nothing judged
    run_reader(SCHEMA, **QUIET)
    _a1_met_the_job_write(wh, f"job-{len(writes) - 1}")


def test_case_4_a_job_write_between_two_immediate_merges_is_never_overwritten(spark):
    """imm's transaction over customers and tags: right after the customers MERGE, a job
    rewrites the tags row keeping its version. The tags MERGE compares the whole row the check
    read, so it refuses; customers is put back, the check reads again, finds the tags row's
    content differs from what imm saw, and rejects the transaction with a conflict. The job's
    note stays. Before the fix, the tags MERGE compared the version alone and wrote imm's note
    over the job's."""
    wh = two_articles(spark, SCHEMA, "imm", immediate="imm")
    faults.arm_at_label(
        "python:immediate.publisher.customers",
        lambda k, label: _job_update(wh, "tags", "note", "from-job", "tag", "'t'"),
    )
    try:
        with pytest.raises(ConflictError) as err, Subscriber(wh.schema, "imm").transaction("imm1") as t:
            t.update("customers", {"customer_id": 1}, {"city": "imm"})
            t.update("tags", {"tag": "t"}, {"note": "imm"})
    finally:
        faults.disarm()
    assert [(r["article"], r["conflict_type"]) for r in err.value.rows] == [("tags", "update_update")]
    rows = article_rows(wh)
    assert {r[0]: r[1] for r in rows["customers"]} == {1: "c1", 2: "c2"}  # put back
    assert [r[1] for r in rows["tags"]] == ["from-job"]
    distribute(wh.schema)
    assert article_rows(wh, "imm") == article_rows(wh)


def test_case_2_a_job_write_after_a_failed_run_and_a_distribute_meets_its_conflict(spark):
    """a's batch fails right after its MERGE; `qrepl distribute` stamps (examining the MERGE of
    the unfinished batch); a job then rewrites the row the batch wrote, keeping the batch's
    version; the next run finishes the batch. a's next update of that row (seen at the batch's
    version) meets an update_update conflict, and the job's write stays. Before the fix, the
    distribute's stamp recorded the unfinished batch as one whose versions were still to come,
    so the job's rewrite was taken for the reader's own write and never stamped."""
    from qrepl.storage.dbt_runner import DbtError

    wh = two_articles(spark, SCHEMA, "a")
    run_reader(SCHEMA, **QUIET)
    with Subscriber(wh.schema, "a").transaction("a1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "from-a"})
    faults.arm_at_label("model.qrepl.batch_applied merge", faults.raise_fault)
    try:
        with pytest.raises(DbtError):
            run_reader(SCHEMA, **QUIET)
    finally:
        faults.disarm()
    distribute(wh.schema)
    _job_update(wh, "customers", "city", "from-job", "customer_id", 1)
    run_reader(SCHEMA, **QUIET)  # finishes a1's batch
    with Subscriber(wh.schema, "a").transaction("a2") as t:
        t.update("customers", {"customer_id": 1}, {"city": "from-a-again"})
    run_reader(SCHEMA, **QUIET)
    assert [(c["tran_id"], c["conflict_type"]) for c in wh.rows_of("conflicts")] == [("a2", "update_update")]
    assert {r[0]: r[1] for r in article_rows(wh)["customers"]} == {1: "from-job", 2: "c2"}
    distribute(wh.schema)
    assert article_rows(wh, "a") == article_rows(wh)


@pytest.mark.parametrize("how", ["subscription add", "reinitialization"])
def test_a_snapshot_copies_a_jobs_unstamped_write_under_its_new_version(spark, how):
    """A job rewrites customer 1 keeping its version; then b's snapshot is taken (its
    subscription added, or a reinitialized): the snapshot stamps first and copies the row
    under the version the trigger gave it, so b's update of that row is applied with no
    conflict. Before the fix, the snapshot copied the job's row under its old version, and
    b's update met a conflict nobody made."""
    from qrepl.services.distribution import reinitialize

    wh = two_articles(spark, SCHEMA, *(["b"] if how == "reinitialization" else []))
    run_reader(SCHEMA, **QUIET)
    _job_update(wh, "customers", "city", "from-job", "customer_id", 1)
    if how == "reinitialization":
        reinitialize(wh.schema, "b")
    else:
        add_subscription(SCHEMA, "b", **QUIET)
    assert article_rows(wh, "b") == article_rows(wh)  # the job's row, under its new version
    with Subscriber(wh.schema, "b").transaction("b1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "from-b"})
    run_reader(SCHEMA, **QUIET)
    assert wh.rows_of("conflicts") == []
    assert {r[0]: r[1] for r in article_rows(wh)["customers"]} == {1: "from-b", 2: "c2"}


def test_a_job_row_with_a_null_key_is_never_overwritten(spark):
    """A job inserts a customers row whose key is NULL (no version). The trigger cannot stamp
    it (it addresses rows by key), and it needs no stamp: no subscriber change can reach it.
    Capture refuses a change to it in one line, a queued command with a null key is
    quarantined (hostile catalogue), and runs and deliveries leave the job's row as written,
    delivering it once."""
    from qrepl.core.model import ConfigError

    wh = two_articles(spark, SCHEMA, "a")
    spark.sql(f"insert into {wh.table('customers')} select cast(null as int), 'nobody', cast(null as string)")
    run_reader(SCHEMA, **QUIET)
    with pytest.raises(ConfigError, match="key"), Subscriber(wh.schema, "a").transaction("a1") as t:
        t.update("customers", {"customer_id": None}, {"city": "from-a"})
    distribute(wh.schema)
    distribute(wh.schema)
    run_reader(SCHEMA, **QUIET)

    def null_key_rows(table: str) -> list[tuple]:
        return [tuple(r) for r in spark.table(table).where("customer_id is null").collect()]

    assert null_key_rows(wh.table("customers")) == [(None, "nobody", None)]
    assert [r[:2] for r in null_key_rows(f"{replica_schema(wh, 'a')}.customers")] in ([], [(None, "nobody")])
    assert len(spark.table(wh.table("customers")).collect()) == 3  # customers 1 and 2 untouched
