"""The sequential reference, sentence by sentence of docs/spec.md §5 (pure Python, no Spark)."""

from __future__ import annotations

import pytest

from qrepl.tools.replay import ReferenceBackend, normalized_outputs, play, scenario_from_dict
from scenario_builder import dele, ins, row, scenario, tran, upd, v


def replay_ref(data: dict) -> dict:
    sc = scenario_from_dict(data, "t")
    return normalized_outputs(sc, play(sc, ReferenceBackend(sc)))


def one_command(policy: str, command_for, publisher_has_row=True):
    v0 = v()
    rows = {"customers": [row(1, "x", v0)]} if publisher_has_row else {"customers": []}
    return replay_ref(
        scenario(policy, [{"publisher_rows": rows}, {"enqueue": [tran("s1", "t1", command_for(v0))]}, {"run": {}}])
    )


@pytest.mark.parametrize(
    "label, command, has_row, conflict",
    [
        ("U exists, version = old_version -> ok", lambda v0: upd(1, "y", v0, v()), True, None),
        ("U exists, version != old_version -> update_update", lambda v0: upd(1, "y", v(), v()), True, "update_update"),
        ("U absent -> update_missing", lambda v0: upd(1, "y", v(), v()), False, "update_missing"),
        ("D exists, version = old_version -> ok", lambda v0: dele(1, v0), True, None),
        ("D exists, version != old_version -> delete_update", lambda v0: dele(1, v()), True, "delete_update"),
        ("D absent -> delete_missing", lambda v0: dele(1, v()), False, "delete_missing"),
        ("I absent -> ok", lambda v0: ins(1, "y", v()), False, None),
        ("I exists -> insert_exists", lambda v0: ins(1, "y", v()), True, "insert_exists"),
    ],
)
def test_judging_table_under_publisher_wins(label, command, has_row, conflict):
    """Each row of the judging table (docs/spec.md §5): the conflict type, and under publisher_wins
    a conflicting transaction is rejected with a compensating command, an ok one applied."""
    out = one_command("publisher_wins", command, has_row)
    outcome = out["transaction_outcomes"][0]["outcome"]
    if conflict is None:
        assert outcome == "applied" and out["conflicts"] == []
    else:
        assert outcome == "rejected"
        assert [c["conflict_type"] for c in out["conflicts"]] == [conflict]
        assert out["conflicts"][0]["winner"] == "publisher"
        assert len(out["compensating_commands"]) == 1


def test_rejected_transaction_is_rolled_back_whole_with_one_compensation_per_row():
    """'A transaction with any conflict is rejected whole: nothing of it is applied ... for every
    distinct row the transaction touched, one compensating command is emitted.'"""
    a, b = v(), v()
    out = replay_ref(
        scenario(
            "publisher_wins",
            [
                {"publisher_rows": {"customers": [row(1, "x", a), row(2, "x", b)]}},
                {"enqueue": [tran("s1", "t1", upd(1, "y", a, v()), upd(1, "z", v(), v()), upd(2, "y", v(), v()))]},
                {"run": {}},
            ],
        )
    )
    assert out["publisher/customers"] == [row(1, "x", a), row(2, "x", b)]
    assert [(c["row_key"], c["op"]) for c in out["compensating_commands"]] == [
        ('{"customer_id":1}', "upsert"),
        ('{"customer_id":2}', "upsert"),
    ]


def test_transaction_sees_its_own_writes():
    """'A command that follows another command of the same transaction on the same row is judged
    against the state that the earlier command produced.'"""
    a, n1, n2 = v(), v(), v()
    out = replay_ref(
        scenario(
            "publisher_wins",
            [
                {"publisher_rows": {"customers": [row(1, "x", a)]}},
                {"enqueue": [tran("s1", "t1", upd(1, "y", a, n1), upd(1, "z", n1, n2))]},
                {"run": {}},
            ],
        )
    )
    assert out["publisher/customers"] == [row(1, "z", n2)]


def test_reinit_rejects_rest_of_subscriber_queue():
    """'at a subscriber's first conflicting transaction, that transaction and every later queued
    transaction of that subscriber are rejected (rejected_reinit) ... marked reinit_pending.'"""
    a, b = v(), v()
    out = replay_ref(
        scenario(
            "publisher_wins_reinit",
            [
                {"publisher_rows": {"customers": [row(1, "x", a), row(2, "x", b)]}},
                {
                    "enqueue": [
                        tran("s1", "t1", upd(1, "y", v(), v())),
                        tran("s1", "t2", upd(2, "y", b, v())),
                        tran("s2", "t3", upd(2, "q", b, v())),
                    ]
                },
                {"run": {}},
            ],
        )
    )
    outcomes = {o["tran_id"]: o["outcome"] for o in out["transaction_outcomes"]}
    assert outcomes == {"t1": "rejected_reinit", "t2": "rejected_reinit", "t3": "applied"}
    assert [s["status"] for s in out["subscriptions"]] == ["reinit_pending", "active", "active"]
    assert out["compensating_commands"] == []


def test_subscriber_wins_last_writer_wins():
    """'subscriber_wins: every transaction is applied; conflicts are logged with winner subscriber.'"""
    a, n1, n2 = v(), v(), v()
    out = replay_ref(
        scenario(
            "subscriber_wins",
            [
                {"publisher_rows": {"customers": [row(1, "x", a)]}},
                {"enqueue": [tran("s1", "t1", upd(1, "y", a, n1)), tran("s2", "t2", upd(1, "z", a, n2))]},
                {"run": {}},
            ],
        )
    )
    assert out["publisher/customers"] == [row(1, "z", n2)]
    assert [(c["conflict_type"], c["winner"]) for c in out["conflicts"]] == [("update_update", "subscriber")]


def test_stale_generation_is_rejected_reinit():
    """'a queued transaction stamped with a generation older than its subscription's current one
    is rejected_reinit.'"""
    a = v()
    out = replay_ref(
        scenario(
            "publisher_wins",
            [
                {"publisher_rows": {"customers": [row(1, "x", a)]}},
                {"enqueue": [tran("s1", "t1", upd(1, "y", a, v()))]},
                {"reinitialize": {"subscriber": "s1"}},
                {"run": {}},
            ],
        )
    )
    assert out["transaction_outcomes"][0]["outcome"] == "rejected_reinit"


def test_malformed_rows_are_quarantined_and_do_not_block_good_ones():
    """queue_rejects: 'Nothing is dropped silently; a bad row never blocks good ones.'"""
    a = v()
    bad = {
        "article": "customers",
        "op": "U",
        "row": row(1, "q"),
        "old_version": a,
        "new_version": v(),
        "new_row_text": "{not json",
    }
    out = replay_ref(
        scenario(
            "publisher_wins",
            [
                {"publisher_rows": {"customers": [row(1, "x", a)]}},
                {"enqueue": [tran("s1", "bad", bad), tran("s2", "good", upd(1, "y", a, v()))]},
                {"run": {}},
            ],
        )
    )
    assert [r["reason"] for r in out["queue_rejects"]] == ["malformed JSON"]
    assert out["transaction_outcomes"][0]["tran_id"] == "good"
