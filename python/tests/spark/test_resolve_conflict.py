"""Conflicts resolved by hand (docs/conflicts.md): `qrepl conflicts --resolve ID --keep
subscriber|publisher`, which runs the dbt macro qrepl_resolve_conflict (the same as `dbt
run-operation`). One batch under publisher_wins logs a conflict of every type; each test
resolves some and checks the publisher, the review and that a second resolve changes nothing."""

from __future__ import annotations

import pytest

from qrepl.storage import faults
from qrepl.storage.dbt_runner import DbtError
from qrepl.tools.replay import SparkBackend, play, scenario_from_dict
from qrepl.services.service import list_conflicts, resolve_conflict
from scenario_builder import dele, ins, row, scenario, tran, upd, v

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_resolve"
P = {i: v() for i in range(1, 15)}


@pytest.fixture(scope="module")
def logged(spark):
    steps = [
        {"publisher_rows": {"customers": [row(i, f"city{i}", P[i]) for i in (*range(1, 8), *range(10, 15))]}},
        {
            "enqueue": [
                tran("s1", "uu", upd(1, "s1-uu", v(), v())),  # update_update
                tran("s1", "uu-pub", upd(2, "s1-pub", v(), v())),  # update_update, to keep the publisher
                tran("s2", "um", upd(9, "s2-um", v(), v())),  # update_missing
                tran("s3", "du", dele(3, v())),  # delete_update
                tran("s3", "dm", dele(8, v())),  # delete_missing
                tran("s2", "ie", ins(4, "s2-ie", v())),  # insert_exists
                tran("s1", "late", upd(5, "s1-late", v(), v())),  # the publisher changes it afterwards
                tran("s2", "kill", upd(6, "s2-kill", v(), v())),  # resolved by a run killed mid-way
                # a job's plain SQL changes these afterwards (issue 57, case 1)
                tran("s1", "job-uu", upd(10, "s1-job", v(), v())),  # the job keeps the version
                tran("s3", "job-du", dele(11, v())),  # the job keeps the version
                tran("s2", "job-ie", ins(12, "s2-job", v())),  # the job keeps the version
                tran("s1", "job-new", upd(13, "s1-job", v(), v())),  # the job sets a new version
                tran("s2", "job-race", upd(14, "s2-job", v(), v())),  # the job writes while it is resolved
            ]
        },
        {"run": {}},
        {"publisher_change": {"article": "customers", "op": "U", "row": row(5, "changed-later"), "new_version": v()}},
    ]
    sc = scenario_from_dict(scenario("publisher_wins", steps, ("s1", "s2", "s3")), "resolve")
    backend = SparkBackend(sc, SCHEMA)
    play(sc, backend)
    ids = {c["tran_id"]: c["conflict_id"] for c in list_conflicts(SCHEMA)}
    assert sorted(ids) == [
        "dm",
        "du",
        "ie",
        "job-du",
        "job-ie",
        "job-new",
        "job-race",
        "job-uu",
        "kill",
        "late",
        "um",
        "uu",
        "uu-pub",
    ]
    return backend.wh, ids


def _rows(wh) -> dict[int, dict]:
    return {r["customer_id"]: r for r in wh.publisher_rows("customers")}


def _resolve_twice(wh, conflict_id: str, keep: str) -> dict:
    first = resolve_conflict(SCHEMA, conflict_id, keep, "dba")
    snapshot = wh.current_snapshot("customers")
    second = resolve_conflict(SCHEMA, conflict_id, keep, "someone-else")
    assert second == first and wh.current_snapshot("customers") == snapshot  # nothing changed the second time
    return first


def test_keep_subscriber_writes_the_losing_row_with_a_new_version(logged):
    wh, ids = logged
    review = _resolve_twice(wh, ids["uu"], "subscriber")
    row1 = _rows(wh)[1]
    assert row1["city"] == "s1-uu" and row1["msrepl_tran_version"] == review["written_version"] != P[1]
    assert (review["keep"], review["resolved_by"]) == ("subscriber", "dba")
    listed = next(c for c in list_conflicts(SCHEMA) if c["conflict_id"] == ids["uu"])
    assert listed["review"]["outcome"] == "subscriber row applied"


def test_keep_publisher_closes_the_conflict_and_changes_nothing(logged):
    wh, ids = logged
    before = _rows(wh)[2]
    review = _resolve_twice(wh, ids["uu-pub"], "publisher")
    assert _rows(wh)[2] == before and review["outcome"].startswith("closed")


def test_keep_subscriber_of_an_update_to_a_deleted_row_inserts_it(logged):
    wh, ids = logged
    _resolve_twice(wh, ids["um"], "subscriber")
    assert _rows(wh)[9]["city"] == "s2-um"


def test_keep_subscriber_of_a_delete_deletes_the_changed_row(logged):
    wh, ids = logged
    _resolve_twice(wh, ids["du"], "subscriber")
    assert 3 not in _rows(wh)


def test_keep_subscriber_of_a_delete_of_an_absent_row_closes_it(logged):
    wh, ids = logged
    review = _resolve_twice(wh, ids["dm"], "subscriber")
    assert 8 not in _rows(wh) and "absent" in review["outcome"]


def test_keep_subscriber_of_an_insert_overwrites_the_existing_row(logged):
    wh, ids = logged
    _resolve_twice(wh, ids["ie"], "subscriber")
    assert _rows(wh)[4]["city"] == "s2-ie"


def test_a_row_changed_since_the_conflict_is_refused_in_one_line(logged):
    wh, ids = logged
    with pytest.raises(DbtError, match="changed since the conflict") as refused:
        resolve_conflict(SCHEMA, ids["late"], "subscriber", "dba")
    assert "\n" not in str(refused.value)
    assert _rows(wh)[5]["city"] == "changed-later"
    assert next(c for c in list_conflicts(SCHEMA) if c["conflict_id"] == ids["late"])["review"] is None


def _job_update(wh, set_sql: str, customer_id: int) -> None:
    """A publisher job's plain Spark SQL: it knows nothing of qrepl."""
    wh.spark.sql(f"update {wh.table('customers')} set {set_sql} where customer_id = {customer_id}")


@pytest.mark.parametrize("tran_id, customer_id", [("job-uu", 10), ("job-du", 11), ("job-ie", 12)])
def test_resolve_refuses_a_row_a_job_changed_keeping_its_version(logged, tran_id, customer_id):
    # issue 57 case 1: the row is the evidence, not its version (DESIGN.md §10)
    wh, ids = logged
    before = _rows(wh)[customer_id]
    _job_update(wh, "city = 'job-wrote'", customer_id)
    with pytest.raises(DbtError, match="changed since the conflict") as refused:
        resolve_conflict(SCHEMA, ids[tran_id], "subscriber", "dba")
    assert "\n" not in str(refused.value) and "city" in str(refused.value)
    after = _rows(wh)[customer_id]
    assert after["city"] == "job-wrote" and after["msrepl_tran_version"] == before["msrepl_tran_version"]
    assert next(c for c in list_conflicts(SCHEMA) if c["conflict_id"] == ids[tran_id])["review"] is None


def test_resolve_refuses_a_row_a_job_changed_with_a_new_version(logged):
    wh, ids = logged
    _job_update(wh, "city = 'job-wrote', msrepl_tran_version = uuid()", 13)
    with pytest.raises(DbtError, match="changed since the conflict") as refused:
        resolve_conflict(SCHEMA, ids["job-new"], "subscriber", "dba")
    assert "\n" not in str(refused.value)
    assert _rows(wh)[13]["city"] == "job-wrote"
    assert next(c for c in list_conflicts(SCHEMA) if c["conflict_id"] == ids["job-new"])["review"] is None


def test_resolve_refuses_a_row_a_job_changes_between_its_check_and_its_write(logged, monkeypatch):
    # the row is compared inside the MERGE's condition: a job's write (keeping the version) that
    # lands after the resolve read the row and before its MERGE is not overwritten either
    from pyspark.sql import SparkSession

    wh, ids = logged
    original = SparkSession.sql

    def job_first(self, statement, *args, **kwargs):
        if "merge into" in statement and "qrepl_recorded" in statement:
            original(self, f"update {wh.table('customers')} set city = 'job-raced' where customer_id = 14")
        return original(self, statement, *args, **kwargs)

    monkeypatch.setattr(SparkSession, "sql", job_first)
    with pytest.raises(DbtError, match="changed while it was being resolved"):
        resolve_conflict(SCHEMA, ids["job-race"], "subscriber", "dba")
    monkeypatch.undo()
    assert _rows(wh)[14]["city"] == "job-raced"
    assert next(c for c in list_conflicts(SCHEMA) if c["conflict_id"] == ids["job-race"])["review"] is None


def test_a_resolve_failed_after_its_write_is_finished_by_the_next(logged):
    wh, ids = logged

    def after_merge(k: int, label: str) -> None:
        if "merge into" in label:
            faults.raise_fault(k, label)
        else:
            faults._State.armed_at, faults._State.action = k + 1, after_merge

    faults.arm(1, after_merge)
    try:
        with pytest.raises(DbtError):
            resolve_conflict(SCHEMA, ids["kill"], "subscriber", "dba")
    finally:
        faults.disarm()
    assert _rows(wh)[6]["city"] == "s2-kill"  # written, not yet recorded
    assert next(c for c in list_conflicts(SCHEMA) if c["conflict_id"] == ids["kill"])["review"] is None
    review = _resolve_twice(wh, ids["kill"], "subscriber")
    assert (
        review["outcome"] == "subscriber row applied"
        and _rows(wh)[6]["msrepl_tran_version"] == review["written_version"]
    )


def test_a_bad_conflict_id_or_keep_is_one_line(logged):
    with pytest.raises(DbtError, match="32 hex digits"):
        resolve_conflict(SCHEMA, "x'; drop table t; --", "subscriber", "dba")
    with pytest.raises(DbtError, match="no conflict"):
        resolve_conflict(SCHEMA, "0" * 32, "publisher", "dba")


@pytest.mark.parametrize(
    "macro, args, refusal",
    [
        (
            "qrepl_resolve_conflict",
            {"conflict_id": "0" * 31 + "\n", "keep": "publisher"},
            "conflict_id must be the 32 hex",
        ),
        (
            "qrepl_resolve_conflict",
            {"conflict_id": "0" * 32, "keep": "publisher", "resolved_by": "dba'; drop"},
            "resolved_by must be a user name",
        ),
        (
            "qrepl_remove_conflicts",
            {"conflict_ids": ["0" * 32, "0" * 32 + "' or '1'='1"]},
            "a conflict_id must be the 32 hex",
        ),
        (
            "qrepl_remove_conflicts",
            {"conflict_ids": ["0" * 32], "removed_by": "dba\n"},
            "removed_by must be a user name",
        ),
    ],
)
def test_the_run_operations_refuse_an_id_or_a_name_that_is_not_one_in_one_line(logged, macro, args, refusal):
    # `dbt run-operation` is the way in that skips the CLI's own checks: the macro's are what
    # keeps the values out of SQL text, and nothing is written before them
    import json

    from qrepl.storage.dbt_runner import dbt_invoke

    wh, _ = logged
    before = wh.spark.table(wh.table("conflict_reviews")).count() if wh.exists("conflict_reviews") else 0
    with pytest.raises(DbtError, match=refusal):
        dbt_invoke(["run-operation", macro, "--args", json.dumps(args)], SCHEMA)
    assert (wh.spark.table(wh.table("conflict_reviews")).count() if wh.exists("conflict_reviews") else 0) == before
