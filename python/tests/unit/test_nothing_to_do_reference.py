"""docs/spec.md 5.10 on the reference: a run with nothing to do changes nothing and takes no batch
id, so batch numbering counts batches, not schedule ticks; any other run is a batch, even one
that takes no command. test_idle_run.py holds Spark + dbt to the same sentences."""

from __future__ import annotations

from datetime import datetime, timedelta

from scenario_builder import CUSTOMERS, row, scenario, tran, upd, v

from qrepl.core.model import publication_from_dict
from qrepl.core.reference import ReferenceReader
from qrepl.tools.replay import ReferenceBackend, normalized_outputs, play, scenario_from_dict

T0 = datetime(2026, 1, 1, 12, 0, 0)


def _reader(retention_days: int = 0) -> tuple[ReferenceReader, str]:
    publication = {
        "publication": "sales",
        "policy": "publisher_wins",
        "conflict_retention_days": retention_days,
        "articles": [CUSTOMERS],
    }
    reader = ReferenceReader(publication_from_dict(publication))
    reader.add_subscription("s1")
    v0 = v()
    reader.put_row("customers", row(1, "x", v0))
    return reader, v0


def _queued(tran_id: str, old: str, new: str, at: datetime = T0) -> dict:
    return {
        "subscriber": "s1",
        "generation": 0,
        "tran_id": tran_id,
        "tran_seq": int(tran_id[1:]),
        "command_seq": 1,
        "article": "customers",
        "op": "U",
        "row_key": '{"customer_id":1}',
        "new_row": '{"customer_id":1,"name":"c1","city":"y"}',
        "old_version": old,
        "new_version": new,
        "enqueued_at": at,
    }


def test_the_first_run_is_a_batch_even_with_nothing_queued():
    reader, _ = _reader()
    assert reader.run(T0) == 1
    assert [h["batch_id"] for h in reader.history] == [1]


def test_a_run_with_nothing_queued_since_takes_no_batch_id_and_changes_nothing():
    reader, v0 = _reader()
    reader.run(T0)
    reader.append_queue([_queued("t1", v0, v())])
    assert reader.run(T0 + timedelta(seconds=1)) == 2
    before = (list(reader.history), dict(reader.publisher["customers"]), list(reader.transaction_outcomes))
    assert reader.nothing_to_do(T0 + timedelta(seconds=2))
    assert reader.run(T0 + timedelta(seconds=2)) is None
    assert reader.run(T0 + timedelta(seconds=3)) is None
    assert (reader.history, reader.publisher["customers"], reader.transaction_outcomes) == before
    # the next batch is numbered after the last one, not after the runs in between
    reader.append_queue([_queued("t3", v(), v())])
    assert reader.run(T0 + timedelta(seconds=4)) == 3
    assert [o["batch_id"] for o in reader.transaction_outcomes] == [2, 3]


def test_a_queue_commit_of_commands_already_taken_is_a_batch_that_takes_none():
    reader, v0 = _reader()
    reader.run(T0)
    first = _queued("t1", v0, v())
    reader.append_queue([first])
    reader.run(T0)
    reader.append_queue([first])  # delivered again: the same command, byte for byte
    assert not reader.nothing_to_do(T0)
    assert reader.run(T0) == 3
    assert reader.history[-1]["commands_processed"] == 0
    # the queue's last commit is still newer than the last batch that took a command
    assert reader.run(T0) == 4


def test_a_conflict_past_its_retention_makes_the_run_a_batch_that_purges_it():
    reader, _ = _reader(retention_days=7)
    reader.run(T0)
    reader.append_queue([_queued("t1", v(), v())])  # a stale version: a conflict
    reader.run(T0)
    assert len(reader.conflicts) == 1
    assert reader.run(T0 + timedelta(days=6)) is None  # within its retention: nothing to do
    assert len(reader.conflicts) == 1
    assert not reader.nothing_to_do(T0 + timedelta(days=8))
    assert reader.run(T0 + timedelta(days=8)) == 3
    assert reader.conflicts == []


def test_a_scenario_with_runs_in_between_numbers_only_its_batches():
    """Through the replay: conflicts and outcomes carry the batch ids of the batches, whatever
    runs had nothing to do between them."""
    v0 = v()
    steps = [
        {"publisher_rows": {"customers": [row(1, "x", v0)]}},
        {"run": {}},
        {"run": {}},
        {"enqueue": [tran("s1", "t1", upd(1, "y", v(), v()))]},
        {"run": {}},
        {"run": {}},
        {"enqueue": [tran("s1", "t2", upd(1, "z", v0, v()))]},
        {"run": {}},
    ]
    sc = scenario_from_dict(scenario("publisher_wins", steps), "t")
    out = normalized_outputs(sc, play(sc, ReferenceBackend(sc)))
    assert [(o["tran_id"], o["batch_id"], o["outcome"]) for o in out["transaction_outcomes"]] == [
        ("t1", 2, "rejected"),
        ("t2", 3, "applied"),
    ]
    assert [c["batch_id"] for c in out["conflicts"]] == [2]
