"""Issue 57, the publisher's trigger (macros/stamp/qrepl_stamp_publisher.sql) sees every write:

* case 3, a compaction: a plain UPDATE (keeping the version) that a compaction rewrites before the
  next stamp, whether `qrepl maintain`'s own (the UPDATE lands between its stamp and its
  compaction) or the user's `CALL system.rewrite_data_files`, is still stamped, so a subscriber's
  later change to the row meets its conflict;
* case 7b, ORC: a table whose data files are ORC, published in place, is stamped, run and
  distributed after its owner's plain writes; an Avro data file stops the stamp with one line.

Each compares with the reference, which models the plain write as what it stands for: a
publisher change with a new version (the one the stamp gave, read back from Spark)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import yaml

from qrepl.storage import faults
from qrepl.storage.dbt_runner import DbtError, stamp_publisher
from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, queue_rows_for, scenario_from_dict
from scenario_builder import CUSTOMERS, row, scenario, tran, upd, v

pytestmark = pytest.mark.spark

T0 = datetime(2026, 3, 1, 9, 0, 0)


def _is_stamp_record(label: str) -> bool:
    """The write that records what the publisher's trigger examined (maintain's stamp)."""
    return "insert into" in label and "publisher_stamps" in label


def _versions(wh) -> dict[int, str]:
    return {r["customer_id"]: r["msrepl_tran_version"] for r in wh.publisher_rows("customers")}


def _conflict(outputs: dict, tran_id: str) -> str | None:
    return next((c["conflict_type"] for c in outputs["conflicts"] if c["tran_id"] == tran_id), None)


def _three_rows(name: str, schema: str):
    """A publication of three customers, run once on Spark and on the reference (the stamp's
    starting point); returns both backends, the scenario and the rows' first versions."""
    p = {i: v() for i in range(1, 4)}
    sc = scenario_from_dict(scenario("publisher_wins", [], ("s1",)), name)
    spark_side, reference = SparkBackend(sc, schema), ReferenceBackend(sc)
    stamp_publisher(spark_side.wh)  # as `qrepl publication create` does: the table's history starts empty
    for backend in (spark_side, reference):
        backend.put_publisher_rows("customers", [row(i, f"city{i}", p[i]) for i in range(1, 4)])
        backend.run(T0)
    return sc, spark_side, reference, p


def _subscriber_updates_then_compare(sc, spark_side, reference, p, writes: dict[int, str]):
    """s1 updates every row in `writes` (which a plain writer set to that city, keeping the
    version) expecting the version it last saw; a run on both sides, the reference given the
    plain writes with the versions the stamp gave. Returns the Spark side's outputs and the
    reference's."""
    queued = [tran("s1", f"t{i}", upd(i, f"s1-{i}", p[i], v())) for i in writes]
    rows = queue_rows_for(sc, queued, T0 + timedelta(minutes=5), {}, lambda s: 0)
    spark_side.enqueue(rows)
    spark_side.run(T0 + timedelta(minutes=6))
    stamped = _versions(spark_side.wh)
    reference.publisher_changes([("customers", "U", row(i, city), stamped[i]) for i, city in writes.items()])
    reference.enqueue(rows)
    reference.run(T0 + timedelta(minutes=6))
    for i in writes:
        assert stamped[i] not in (p[i], None), i
    return normalized_outputs(sc, spark_side.outputs()), normalized_outputs(sc, reference.outputs())


def test_case3_a_job_update_between_maintains_stamp_and_its_compaction_meets_the_subscribers_change(spark):
    """`qrepl maintain` stamps (here an earlier plain UPDATE of row 3), then compacts: a job's
    plain UPDATE of row 1 committed right after the stamp is recorded is folded into maintain's
    own compaction (a `replace` snapshot), and maintain expires snapshots. The next run still
    stamps row 1, and s1's update of it, made against the old version, meets update_update."""
    from qrepl.services.maintenance import maintain

    sc, spark_side, reference, p = _three_rows("sees_all_maintain", "qrepl_sees_all_maintain")
    wh = spark_side.wh
    table = wh.table("customers")
    spark.sql(f"update {table} set city = 'Oslo' where customer_id = 3")  # maintain's stamp has work

    faults.arm_when(
        _is_stamp_record, lambda k, label: spark.sql(f"update {table} set city = 'Job' where customer_id = 1")
    )
    try:
        maintain(wh.schema)
    finally:
        faults.disarm()
    history = spark.sql(
        f"select snapshot_id, parent_id, operation from {table}.snapshots order by committed_at"
    ).collect()
    assert history[-1].operation == "replace"  # the compaction came after the job's UPDATE ...
    assert history[-2].snapshot_id == history[-1].parent_id  # ... whose snapshot maintain's expiry kept
    assert _versions(wh)[1] == p[1]  # the UPDATE kept the version: only the trigger can tell
    assert _versions(wh)[3] != p[3]  # stamped by maintain
    reference.publisher_changes([("customers", "U", row(3, "Oslo"), _versions(wh)[3])])
    actual, expected = _subscriber_updates_then_compare(sc, spark_side, reference, p, {1: "Job"})
    assert _conflict(actual, "t1") == "update_update"
    assert {r["customer_id"]: r["city"] for r in actual["publisher/customers"]}[1] == "Job"
    assert actual == expected


def test_case3_a_users_rewrite_data_files_after_job_updates_hides_no_change(spark):
    """A job's plain UPDATE of row 1, the user's own `CALL system.rewrite_data_files`, another
    plain UPDATE of row 2, a second compaction, all before the next run: both rows are
    stamped, and s1's updates of them meet update_update."""
    sc, spark_side, reference, p = _three_rows("sees_all_rewrite", "qrepl_sees_all_rewrite")
    table = spark_side.wh.table("customers")
    compact = f"call spark_catalog.system.rewrite_data_files(table => '{table}', options => map('rewrite-all', 'true'))"
    spark.sql(f"update {table} set city = 'Job1' where customer_id = 1")
    spark.sql(compact)
    spark.sql(f"update {table} set city = 'Job2' where customer_id = 2")
    spark.sql(compact)
    operations = [
        r.operation for r in spark.sql(f"select operation from {table}.snapshots order by committed_at").collect()
    ]
    assert operations[-1] == operations[-3] == "replace"
    actual, expected = _subscriber_updates_then_compare(sc, spark_side, reference, p, {1: "Job1", 2: "Job2"})
    assert _conflict(actual, "t1") == _conflict(actual, "t2") == "update_update"
    assert {r["customer_id"]: r["city"] for r in actual["publisher/customers"]} == {1: "Job1", 2: "Job2", 3: "city3"}
    assert actual == expected


def test_case3_a_first_write_to_an_empty_table_compacted_by_maintain_keeps_its_history(spark):
    """An article whose table had no snapshot at the last stamp (examined "before the first
    snapshot"): a job's INSERT without a version, committed right after maintain's stamp, is
    compacted by maintain, whose expiry keeps the INSERT's snapshot; the next stamp (a run with
    a batch, or distribution) stamps it."""
    from qrepl.services.maintenance import maintain

    tags = {"name": "tags", "key": ["tag"], "columns": {"tag": "string", "note": "string"}}
    sc = scenario_from_dict(scenario("publisher_wins", [], ("s1",), articles=(CUSTOMERS, tags)), "sees_all_empty")
    spark_side = SparkBackend(sc, "qrepl_sees_all_empty")
    wh = spark_side.wh
    stamp_publisher(wh)
    spark_side.put_publisher_rows("customers", [row(1, "city1", v())])
    spark_side.run(T0)
    assert wh.last_stamps()["tags"] == 0 and wh.article_snapshot(wh.require_publication().article("tags")) is None
    spark.sql(f"update {wh.table('customers')} set city = 'Oslo' where customer_id = 1")  # maintain's stamp has work

    faults.arm_when(
        _is_stamp_record, lambda k, label: spark.sql(f"insert into {wh.table('tags')} values ('t1', 'job', null)")
    )
    try:
        maintain(wh.schema)
    finally:
        faults.disarm()
    assert [
        r.operation
        for r in spark.sql(f"select operation from {wh.table('tags')}.snapshots order by committed_at").collect()
    ] == ["append", "replace"]
    stamp_publisher(wh)  # a run with nothing queued runs no trigger (docs/spec.md 5.10)
    assert [r["msrepl_tran_version"] is not None for r in wh.publisher_rows("tags")] == [True]


# -- case 7b: a table whose data files are ORC ----------------------------------------------


def _publish_in_place(spark, tmp_path, schema: str, users: str, file_format: str) -> None:
    """The user's own Iceberg table `users`.customers (three rows) of data files in
    `file_format`, published in place by publication `schema` with subscriber north (queued)."""
    from qrepl.services.service import add_subscription, create_publication, describe_table

    for s in (schema, f"{schema}__north", users):
        spark.sql(f"drop database if exists {s} cascade")
    spark.sql(f"create database {users}")
    spark.sql(
        f"create table {users}.customers (customer_id int, city string) using iceberg "
        f"tblproperties ('write.format.default' = '{file_format}')"
    )
    spark.sql(f"insert into {users}.customers values (1, 'Oslo'), (2, 'Bergen'), (3, 'Tromso')")
    declared = yaml.safe_load(describe_table(f"{users}.customers", ["customer_id"], schema))
    path = tmp_path / f"{schema}.yml"
    path.write_text(yaml.safe_dump({"publication": schema, "articles": declared}))
    create_publication(path, schema, echo=lambda _: None)
    add_subscription(schema, "north", echo=lambda _: None)


def _formats(spark, table: str) -> set[tuple[int, str]]:
    """(content, file_format) of the table's live files: 0 data, 1 position deletes."""
    return {(r[0], r[1]) for r in spark.sql(f"select content, file_format from {table}.files").collect()}


def test_case7b_an_orc_table_published_in_place_is_stamped_run_and_distributed(spark, tmp_path):
    """The owner's plain UPDATE of row 2 (keeping the version) and north's queued change to
    it: the stamp reads the new ORC data file, the run logs update_update as the reference
    does; the owner's MERGE, the reader's MERGE (merge-on-read, ORC delete files) and a
    distribution all work, and north's replica ends equal to the publisher."""
    from qrepl.core.reference import ReferenceReader
    from qrepl.services.capture import Subscriber
    from qrepl.services.distribution import distribute
    from qrepl.services.service import list_conflicts, run_reader, warehouse

    schema, users = "qrepl_orc", "orc_shop"
    _publish_in_place(spark, tmp_path, schema, users, "orc")
    table = f"{users}.customers"
    wh = warehouse(schema)
    north = Subscriber(schema, "north")
    with north.transaction() as t:
        t.update("customers", {"customer_id": 1}, {"city": "Paris"})
    with north.transaction() as t:
        t.update("customers", {"customer_id": 2}, {"city": "Rome"})
    before = {r.customer_id: r.msrepl_tran_version for r in spark.table(table).collect()}
    spark.sql(f"update {table} set city = 'Lyon' where customer_id = 2")  # the owner's plain UPDATE
    stamp_publisher(wh)  # the publisher's trigger, as the run's start would
    stamped = {r.customer_id: r.msrepl_tran_version for r in spark.table(table).collect()}
    assert stamped[2] not in (before[2], None) and stamped[1] == before[1]
    reference = ReferenceReader(wh.require_publication())
    reference.add_subscription("north")
    for r in wh.publisher_rows("customers"):
        reference.put_row("customers", r)
    reference.append_queue(wh.rows_of("replication_queue"))
    reference.run(datetime.utcnow())

    run_reader(schema, echo=lambda _: None)
    rows = {r.customer_id: (r.city, r.msrepl_tran_version) for r in spark.table(table).collect()}
    assert {k: city for k, (city, _) in rows.items()} == {1: "Paris", 2: "Lyon", 3: "Tromso"}
    assert {k: version for k, (_, version) in rows.items()} == {
        int(k[len('{"customer_id":') : -1]): r["msrepl_tran_version"]
        for k, r in reference.publisher["customers"].items()
    }
    assert (
        [(c["row_key"], c["conflict_type"]) for c in list_conflicts(schema)]
        == [(c["row_key"], c["conflict_type"]) for c in reference.conflicts]
        == [('{"customer_id":2}', "update_update")]
    )

    spark.sql(
        f"merge into {table} as t using (select 3 as customer_id, 'Narvik' as city) as s "
        f"on t.customer_id = s.customer_id when matched then update set t.city = s.city"
    )
    assert _formats(spark, table) >= {(0, "ORC"), (1, "ORC")}  # ORC data and delete files
    distribute(schema)  # stamps the MERGE first, then diffs the publisher
    publisher = {r.customer_id: (r.city, r.msrepl_tran_version) for r in spark.table(table).collect()}
    assert publisher[3][0] == "Narvik" and publisher[3][1] != rows[3][1]
    assert {
        r.customer_id: (r.city, r.msrepl_tran_version) for r in spark.table(f"{schema}__north.customers").collect()
    } == publisher


def test_case7b_an_avro_data_file_stops_the_stamp_with_one_line(spark, tmp_path):
    """Avro data files are not read by the trigger: a table published as Parquet (an Avro one
    is refused at publish) whose owner then switches it to Avro and writes makes the stamp
    fail with one line naming the table and the format."""
    from qrepl.services.service import warehouse

    schema, users = "qrepl_avro", "avro_shop"
    _publish_in_place(spark, tmp_path, schema, users, "parquet")
    spark.sql(f"alter table {users}.customers set tblproperties ('write.format.default' = 'avro')")
    spark.sql(f"insert into {users}.customers values (4, 'Bodo', null)")
    with pytest.raises(DbtError) as stopped:
        stamp_publisher(warehouse(schema))
    message = str(stopped.value)
    assert "\n" not in message
    assert f"{users}.customers" in message and "AVRO" in message
