"""docs/spec.md §10 on the reference: a job's writes during a run count by what they left at the
run's MERGE (the compare-and-swap sees the row, not the writes in between). The same rows run
on Spark + dbt in spark/test_outside_writes.py (`away_and_back`)."""

from __future__ import annotations

from qrepl.tools.replay import ReferenceBackend, normalized_outputs, play, scenario_from_dict

ARTICLE = {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}
V1, V2 = "00000001-0000-4000-8000-000000000001", "00000001-0000-4000-8000-000000000002"


def _outputs(publisher: list[dict], command: dict, job_writes: list[dict], name: str) -> dict:
    """s1's transaction of `command` on customers, while a job makes each of `job_writes` (an
    outside write of customers with its point of the run) during the run."""
    data = {
        "publication": "sales",
        "policy": "publisher_wins",
        "articles": [ARTICLE],
        "subscribers": ["s1"],
        "steps": [
            {"publisher_rows": {"customers": publisher}},
            {"enqueue": [{"subscriber": "s1", "tran_id": "t1", "commands": [{"article": "customers", **command}]}]},
            *({"outside_write": {"article": "customers", **w}} for w in job_writes),
            {"run": {}},
        ],
    }
    s = scenario_from_dict(data, name)
    return normalized_outputs(s, play(s, ReferenceBackend(s)))


def _away_and_back(job_cities: list[tuple[str, str]]) -> dict:
    """s1 updates row 1 (as it was, city p1), while a job UPDATEs the row to each city at its
    point of the run (after the trigger, before the MERGE)."""
    return _outputs(
        [{"customer_id": 1, "city": "p1", "msrepl_tran_version": V1}],
        {"op": "U", "row": {"customer_id": 1, "city": "s1"}, "old_version": V1, "new_version": V2},
        [{"op": "U", "row": {"customer_id": 1, "city": city}, "during": at} for at, city in job_cities],
        "away_and_back",
    )


def _row(out: dict) -> tuple[str, str]:
    (row,) = out["publisher/customers"]
    return row["city"], row["msrepl_tran_version"]


def test_a_job_that_changes_a_row_and_changes_it_back_during_a_run_left_what_the_batch_read():
    """Away and back before the MERGE: the row is as the batch read it, so the batch's write
    stands (as for one UPDATE that set the values the row had): no value the run found is lost."""
    out = _away_and_back([("int_batch_subscriptions", "away"), ("int_queued_commands_judged", "p1")])
    assert _row(out) == ("s1", V2)
    assert out["conflicts"] == []
    assert [o["outcome"] for o in out["transaction_outcomes"]] == ["applied"]


def test_a_job_whose_writes_during_a_run_end_elsewhere_keeps_its_row():
    """Away and on to another value: the compare-and-swap finds the row changed and skips it;
    the job's last write stands, stamped."""
    out = _away_and_back([("int_batch_subscriptions", "away"), ("int_queued_commands_judged", "later")])
    assert _row(out) == ("later", "(stamped)")


def test_a_job_that_inserts_a_row_and_deletes_it_during_a_run_left_what_the_batch_read():
    """A row absent when the run found it, which a job INSERTs after the trigger and DELETEs
    again before the MERGE, is absent as the batch read it: s1's insert of it stands, with no
    conflict (the compare-and-swap sees the row, not the writes in between)."""
    out = _outputs(
        [],
        {"op": "I", "row": {"customer_id": 1, "city": "s1"}, "new_version": V2},
        [
            {"op": "I", "row": {"customer_id": 1, "city": "job"}, "during": "int_batch_subscriptions"},
            {"op": "D", "key": {"customer_id": 1}, "during": "int_queued_commands_judged"},
        ],
        "in_and_out",
    )
    assert _row(out) == ("s1", V2)
    assert out["conflicts"] == []
    assert [o["outcome"] for o in out["transaction_outcomes"]] == ["applied"]
