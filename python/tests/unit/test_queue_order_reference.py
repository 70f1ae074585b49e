"""docs/spec.md §5, Order, on the reference: transactions go in the order their captures
reached the queue (SQL Server's orderkey), whatever the capturing hosts' clocks say.
scenarios/clock_steps.json holds one case per way a clock can disagree; the same file runs on
Spark + dbt in python/tests/spark/test_queue_order.py."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from qrepl.core.reference import processing_order
from qrepl.tools.replay import ReferenceBackend, load_scenario, play

SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "clock_steps.json"


def _outcomes(outputs: dict) -> dict[str, str]:
    return {o["tran_id"]: o["outcome"] for o in outputs["transaction_outcomes"]}


def test_clock_steps_scenario_applies_each_subscriber_in_capture_order():
    outputs = play(load_scenario(SCENARIO), ReferenceBackend(load_scenario(SCENARIO)))
    outcomes = _outcomes(outputs)
    # a clock stepping back, two skewed hosts, one append with out-of-order enqueued_at:
    # each later transaction builds on the earlier one and is applied after it
    for tran_id in ("a1", "a2", "b1", "b2", "e1", "e2", "c1", "g1"):
        assert outcomes[tran_id] == "applied", tran_id
    # the second commit meets the first's row, whatever the clocks said
    assert outcomes["d1"] == outcomes["f1"] == "rejected"
    assert sorted((c["tran_id"], c["conflict_type"]) for c in outputs["conflicts"]) == [
        ("d1", "insert_exists"),
        ("f1", "insert_exists"),
    ]
    rows = {r["customer_id"]: r["city"] for r in outputs["publisher"]["customers"]}
    assert rows == {1: "a2", 2: "b2", 50: "c1", 60: "e2", 70: "g1"}


def _tran(sub: str, tran_id: str, order: int, at: datetime, seq: int) -> tuple[tuple, list[dict]]:
    return (sub, tran_id), [{"queue_order": order, "enqueued_at": at, "tran_seq": seq}]


def test_processing_order_puts_commit_order_before_clocks():
    t = datetime(2026, 1, 1, 12, 0, 0)
    transactions = dict(
        [
            _tran("s1", "late-commit-early-clock", 2, t - timedelta(hours=1), 1),
            _tran("s2", "early-commit-late-clock", 1, t + timedelta(hours=1), 7),
        ]
    )
    orders = {k: v[0]["queue_order"] for k, v in transactions.items()}
    assert [k[1] for k, _ in processing_order(transactions, orders)] == [
        "early-commit-late-clock",
        "late-commit-early-clock",
    ]


def test_processing_order_within_one_commit_keeps_each_subscribers_tran_seq():
    """One append with s1's second transaction stamped an hour before its first: s1's two go in
    tran_seq order; s2, stamped between them, goes after s1's first (the latest s1 clock so far)."""
    t = datetime(2026, 1, 1, 12, 0, 0)
    transactions = dict(
        [
            _tran("s1", "first", 1, t, 1),
            _tran("s1", "second", 1, t - timedelta(hours=1), 2),
            _tran("s2", "other", 1, t - timedelta(minutes=30), 1),
        ]
    )
    orders = {k: 1 for k in transactions}
    order = [k[1] for k, _ in processing_order(transactions, orders)]
    assert order.index("first") < order.index("second")
    # s1's clock so far is 12:00 for both of its transactions; s2's 11:30 goes first
    assert order == ["other", "first", "second"]
