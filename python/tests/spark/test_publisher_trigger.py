"""docs/spec.md §1, the publisher's trigger, on Spark + dbt: a publisher row changed by a writer
that sets no new msrepl_tran_version (plain SQL: UPDATE, MERGE, INSERT; DELETE needs none)
counts as changed, exactly as if the writer had stamped it. The reference models such a write
as what it stands for, a publisher change with a new version; each test runs both and requires
equal outputs, with the versions the stamp gave (read back from Spark) as the writer's."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from qrepl.storage.dbt_runner import stamp_publisher
from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, queue_rows_for, scenario_from_dict
from scenario_builder import ins, row, scenario, tran, upd, v

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_trigger"
T0 = datetime(2026, 3, 1, 9, 0, 0)


def _versions(wh) -> dict[int, str]:
    return {r["customer_id"]: r["msrepl_tran_version"] for r in wh.publisher_rows("customers")}


def _three_rows(name: str, schema: str):
    """Three publisher rows on both sides, stamped and run once: the starting point of a test
    of one write. Returns their versions, the scenario and both backends."""
    p = {i: v() for i in range(1, 4)}
    sc = scenario_from_dict(scenario("publisher_wins", [], ("s1",)), name)
    spark_side, reference = SparkBackend(sc, schema), ReferenceBackend(sc)
    stamp_publisher(spark_side.wh)
    for backend in (spark_side, reference):
        backend.put_publisher_rows("customers", [row(i, f"city{i}", p[i]) for i in range(1, 4)])
        backend.run(T0)
    return p, sc, spark_side, reference


@pytest.fixture(scope="module")
def foreign_writes(spark):
    """Six rows and a first run (the stamp's starting point), then writes that know nothing of
    qrepl, then the subscriber's transactions queued against what it last saw, then a run."""
    p = {i: v() for i in range(1, 7)}
    sc = scenario_from_dict(scenario("publisher_wins", [], ("s1",)), "trigger")
    spark_side, reference = SparkBackend(sc, SCHEMA), ReferenceBackend(sc)
    stamp_publisher(spark_side.wh)  # as `qrepl publication create` does: the tables' history starts empty
    start = [row(i, f"city{i}", p[i]) for i in range(1, 7)]
    for backend in (spark_side, reference):
        backend.put_publisher_rows("customers", start)
        backend.run(T0)
    table = spark_side.wh.table("customers")
    spark.sql(f"update {table} set city = 'Paris' where customer_id = 1")
    spark.sql(
        f"merge into {table} as t using (select 2 as customer_id, 'Rome' as city) as s "
        f"on t.customer_id = s.customer_id when matched then update set t.city = s.city"
    )
    spark.sql(f"delete from {table} where customer_id = 3")
    spark.sql(f"insert into {table} values (7, 'c7', 'Oslo', null)")
    spark.sql(f"insert into {table} select 8, name, 'Lima', msrepl_tran_version from {table} where customer_id = 4")
    spark.sql(f"update {table} set city = city where customer_id = 6")  # an UPDATE that changes no value
    before_stamp = _versions(spark_side.wh)
    stamp_publisher(spark_side.wh)  # the stamp alone, as distribution runs it (a run with nothing to do runs none)
    stamped = _versions(spark_side.wh)
    # the same writes on the reference, with the versions the stamp gave
    reference.publisher_changes(
        [
            ("customers", "U", row(1, "Paris"), stamped[1]),
            ("customers", "U", row(2, "Rome"), stamped[2]),
            ("customers", "D", {"customer_id": 3}, None),
            ("customers", "I", row(7, "Oslo"), stamped[7]),
            ("customers", "I", row(8, "Lima") | {"name": "c4"}, stamped[8]),
            ("customers", "U", row(6, "city6"), stamped[6]),
        ]
    )
    reference.run(T0 + timedelta(minutes=1))
    queued = [tran("s1", f"t{i}", upd(i, f"s1-{i}", p[i], v())) for i in (1, 2, 3, 5, 6)] + [
        tran("s1", "t7", ins(7, "s1-7", v())),
        tran("s1", "t8", ins(8, "s1-8", v())),
    ]
    rows = queue_rows_for(sc, queued, T0 + timedelta(minutes=2), {}, lambda s: 0)
    for backend in (spark_side, reference):
        backend.enqueue(rows)
        backend.run(T0 + timedelta(minutes=3))
    return (
        p,
        before_stamp,
        stamped,
        normalized_outputs(sc, spark_side.outputs()),
        normalized_outputs(sc, reference.outputs()),
    )


def _conflict(outputs: dict, tran_id: str) -> str | None:
    return next((c["conflict_type"] for c in outputs["conflicts"] if c["tran_id"] == tran_id), None)


def test_a_plain_update_at_the_publisher_is_stamped_and_meets_the_subscribers_change(foreign_writes):
    p, before, stamped, actual, expected = foreign_writes
    assert before[1] == p[1] and stamped[1] not in (p[1], None)
    assert _conflict(actual, "t1") == "update_update"
    assert {r["customer_id"]: r["city"] for r in actual["publisher/customers"]}[1] == "Paris"
    assert actual == expected


def test_a_merge_and_an_update_of_no_value_count_as_changes(foreign_writes):
    p, before, stamped, actual, expected = foreign_writes
    assert stamped[2] != p[2] and stamped[6] != p[6]
    assert _conflict(actual, "t2") == "update_update" and _conflict(actual, "t6") == "update_update"
    assert actual == expected


def test_a_delete_needs_no_stamp_and_meets_update_missing(foreign_writes):
    p, before, stamped, actual, expected = foreign_writes
    assert 3 not in stamped
    assert _conflict(actual, "t3") == "update_missing"
    assert actual == expected


def test_inserts_without_a_version_or_with_a_copied_one_are_stamped(foreign_writes):
    p, before, stamped, actual, expected = foreign_writes
    assert before[7] is None and stamped[7] is not None
    assert before[8] == p[4] and stamped[8] not in (p[4], None) and stamped[4] == p[4]
    assert _conflict(actual, "t7") == _conflict(actual, "t8") == "insert_exists"
    assert actual == expected


def test_rows_no_outside_writer_touched_keep_their_version_and_apply(foreign_writes):
    p, before, stamped, actual, expected = foreign_writes
    assert stamped[5] == p[5]
    assert next(o["outcome"] for o in actual["transaction_outcomes"] if o["tran_id"] == "t5") == "applied"
    assert actual == expected


def test_a_run_failed_right_after_its_stamp_converges_without_stamping_twice(spark):
    """A new write point of the run: the trigger's MERGE. A run that fails right after it
    (before the stamp is recorded) leaves rows stamped; the next run examines the same commits
    again, stamps nothing twice, and its outputs equal the reference's for the stamped writes."""
    from qrepl.storage import faults
    from qrepl.storage.dbt_runner import DbtError

    p, sc, spark_side, reference = _three_rows("trigger_fault", "qrepl_trigger_fault")
    table = spark_side.wh.table("customers")
    spark.sql(f"update {table} set city = 'Paris' where customer_id = 1")
    spark.sql(f"insert into {table} values (4, 'c4', 'Oslo', null)")
    recorded = spark_side.wh.last_stamps()["customers"]
    # queued first: a run with nothing to do would run no trigger (docs/spec.md 5.10)
    queued = [tran("s1", "t1", upd(1, "s1-1", p[1], v())), tran("s1", "t2", upd(2, "s1-2", p[2], v()))]
    spark_side.enqueue(queue_rows_for(sc, queued, T0 + timedelta(minutes=2), {}, lambda s: 0))

    def after_the_stamp(k: int, label: str) -> None:
        if "merge into" in label:  # the run's first MERGE is the trigger's
            faults.raise_fault(k, label)
        faults._State.armed_at, faults._State.action = k + 1, after_the_stamp

    faults.arm(1, after_the_stamp)
    try:
        with pytest.raises(DbtError):
            spark_side.run(T0 + timedelta(minutes=3))
    finally:
        faults.disarm()
    stamped = _versions(spark_side.wh)
    assert stamped[1] not in (p[1], None) and stamped[4] is not None  # the MERGE committed ...
    assert spark_side.wh.last_stamps()["customers"] == recorded  # ... and was not recorded
    spark_side.run(T0 + timedelta(minutes=3))  # the next run takes the batch
    after = _versions(spark_side.wh)
    assert after[1] == stamped[1] and after[4] == stamped[4]  # not stamped a second time
    reference.publisher_changes(
        [
            ("customers", "U", row(1, "Paris"), stamped[1]),
            ("customers", "I", row(4, "Oslo") | {"name": "c4"}, stamped[4]),
        ]
    )
    # the failed run took no batch: it failed in on-run-start, before the batch cut
    reference.enqueue(queue_rows_for(sc, queued, T0 + timedelta(minutes=2), {}, lambda s: 0))
    reference.run(T0 + timedelta(minutes=3))
    actual, expected = normalized_outputs(sc, spark_side.outputs()), normalized_outputs(sc, reference.outputs())
    assert _conflict(actual, "t1") == "update_update"
    assert actual == expected


def test_the_readers_own_merge_is_not_examined_again_and_an_outside_write_around_it_still_is(spark):
    """batch_applied records its MERGE's snapshot as examined (macro qrepl_stamp_own_merge), so
    the next run's trigger does not read the rows the batch wrote. Only when nothing else can be
    in that snapshot: an outside UPDATE (keeping the version) that lands after the run's start
    and before the MERGE, or just after the MERGE, leaves it unrecorded, and the next run stamps
    the UPDATE. A later UPDATE that keeps a version the batch itself wrote is stamped too. Three
    batches on one publication, one per case; each time the subscriber's next change to the row
    meets a conflict, as the reference says."""
    from qrepl.storage import faults

    p, sc, spark_side, reference = _three_rows("trigger_own_merge", "qrepl_trigger_own")
    wh = spark_side.wh
    article = wh.require_publication().articles[0]
    table = wh.table("customers")
    minutes = iter(range(1, 100))

    def both(transactions: list) -> None:
        queued, ran = T0 + timedelta(minutes=next(minutes)), T0 + timedelta(minutes=next(minutes))
        for backend in (spark_side, reference):
            backend.enqueue(queue_rows_for(sc, transactions, queued, {}, lambda s: 0))
            backend.run(ran)

    # the batch applies a change to row 3 each time; the outside UPDATE hits `changed`
    cases = [("later", 1), ("just_before_the_merge", 2), ("just_after_the_merge", 1)]
    for n, (outside, changed) in enumerate(cases):
        seen = _versions(wh)[changed]
        batch = (
            [tran("s1", f"b{n}", upd(1, "s1-1", p[1], v()))]
            if outside == "later"
            else [tran("s1", f"b{n}", upd(3, f"s1-3-{n}", _versions(wh)[3], v()))]
        )
        if outside == "later":
            both(batch)
            # the batch's MERGE is the table's current snapshot, and it counts as examined
            assert wh.last_stamps()["customers"] == wh.article_snapshot(article)
            seen = _versions(wh)[changed]  # the batch's own version
            spark.sql(f"update {table} set city = 'Paris{n}' where customer_id = {changed}")
        else:
            prefix = (
                "model.qrepl.int_batch_commands"
                if outside == "just_before_the_merge"
                else "model.qrepl.batch_applied merge into"
            )
            faults.arm_at_label(
                prefix,
                lambda k, label, c=changed, n=n: spark.sql(
                    f"update {table} set city = 'Paris{n}' where customer_id = {c}"
                ),
            )
            try:
                both(batch)
            finally:
                faults.disarm()
            assert wh.last_stamps()["customers"] != wh.article_snapshot(article), outside
        assert _versions(wh)[changed] == seen, outside  # the UPDATE kept the version; only the trigger can tell
        tran_id = f"c{n}"
        second = [tran("s1", tran_id, upd(changed, f"s1-again-{n}", seen, v()))]
        queued, ran = T0 + timedelta(minutes=next(minutes)), T0 + timedelta(minutes=next(minutes))
        spark_side.enqueue(queue_rows_for(sc, second, queued, {}, lambda s: 0))
        spark_side.run(ran)
        stamped = _versions(wh)[changed]
        assert stamped not in (seen, None), outside
        reference.publisher_changes([("customers", "U", row(changed, f"Paris{n}"), stamped)])
        reference.enqueue(queue_rows_for(sc, second, queued, {}, lambda s: 0))
        reference.run(ran)
        actual, expected = normalized_outputs(sc, spark_side.outputs()), normalized_outputs(sc, reference.outputs())
        assert _conflict(actual, tran_id) == "update_update", outside
        assert {r["customer_id"]: r["city"] for r in actual["publisher/customers"]}[changed] == f"Paris{n}", outside
        assert actual == expected, outside


def test_a_copy_on_write_rewrite_stamps_the_row_it_changed_not_the_rows_it_carried_over(spark):
    """A table set back to copy-on-write (or pyiceberg, which writes no other way): an UPDATE of
    one row rewrites its whole data file, and the file's other rows come back with their
    versions. The trigger stamps the changed row (its image differs from the last stamp's) and
    leaves the carried-over rows alone (key, version and every column as they were): the
    subscriber's change to a carried-over row applies, its change to the updated row meets a
    conflict, as the reference says of the one write."""
    p, sc, spark_side, reference = _three_rows("trigger_cow", "qrepl_trigger_cow")
    table = spark_side.wh.table("customers")
    files = spark.sql(f"select count(*) from {table}.files where content = 0").first()[0]
    assert files == 1  # the three rows share one data file: the rewrite carries two of them over
    spark.sql(f"alter table {table} set tblproperties ('write.update.mode' = 'copy-on-write')")
    spark.sql(f"update {table} set city = 'Paris' where customer_id = 1")
    assert spark.sql(f"select count(*) from {table}.files where content = 1").first()[0] == 0  # no delete file
    stamp_publisher(spark_side.wh)  # the stamp alone
    stamped = _versions(spark_side.wh)
    assert stamped[1] not in (p[1], None) and stamped[2] == p[2] and stamped[3] == p[3]
    reference.publisher_changes([("customers", "U", row(1, "Paris"), stamped[1])])
    reference.run(T0 + timedelta(minutes=1))
    queued = [tran("s1", "t1", upd(1, "s1-1", p[1], v())), tran("s1", "t2", upd(2, "s1-2", p[2], v()))]
    for backend in (spark_side, reference):
        backend.enqueue(queue_rows_for(sc, queued, T0 + timedelta(minutes=2), {}, lambda s: 0))
        backend.run(T0 + timedelta(minutes=3))
    actual, expected = normalized_outputs(sc, spark_side.outputs()), normalized_outputs(sc, reference.outputs())
    assert _conflict(actual, "t1") == "update_update" and _conflict(actual, "t2") is None
    assert actual == expected
