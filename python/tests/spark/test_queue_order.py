"""docs/spec.md §5, Order, on Spark + dbt: the queue reader applies transactions in the order
their captures reached the queue (the Iceberg commit of each append: SQL Server's orderkey),
never by a host's clock. scenarios/clock_steps.json is two queue appends cut by one run, one
case per way a clock can disagree (its description names them); python/tests/unit/
test_queue_order_reference.py runs it on the reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from qrepl.tools.replay import ReferenceBackend, SparkBackend, load_scenario, normalized_outputs, play

pytestmark = pytest.mark.spark

SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "clock_steps.json"


WARM_UP = [
    {
        "enqueue": [
            {
                "subscriber": "h",
                "tran_id": "h1",
                "commands": [
                    {
                        "article": "customers",
                        "op": "I",
                        "row": {"customer_id": 90, "name": "c90", "city": "h1"},
                        "new_version": "00000000-0000-4000-8000-000000000900",
                    }
                ],
            }
        ]
    },
    {"run": {}},
]


@pytest.fixture(
    scope="module",
    params=[("publisher_wins", "first batch"), ("publisher_wins_reinit", "later batch")],
    ids=lambda p: "-".join(p).replace(" ", "_"),
)
def played(request, spark):
    """The scenario as the first batch (the whole queue read, ordered by the data files' Iceberg
    sequence numbers) and after a batch of another subscriber (only the appends since read,
    ordered by the changelog's commit ordinals)."""
    policy, when = request.param
    scenario = load_scenario(SCENARIO, policy)
    if when == "later batch":
        scenario.subscribers.append("h")
        scenario.steps[1:1] = WARM_UP
    actual = play(scenario, SparkBackend(scenario, "qrepl_queue_order"))
    expected = play(scenario, ReferenceBackend(scenario))
    return policy, normalized_outputs(scenario, actual), normalized_outputs(scenario, expected)


def _outcome(outputs: dict, tran_id: str) -> str:
    return next(o["outcome"] for o in outputs["transaction_outcomes"] if o["tran_id"] == tran_id)


def test_a_clock_stepping_back_between_two_captures_keeps_their_order(played):
    policy, actual, expected = played
    assert (_outcome(actual, "a1"), _outcome(actual, "a2")) == ("applied", "applied")
    assert {r["customer_id"]: r["city"] for r in actual["publisher/customers"]}[1] == "a2"
    assert actual == expected


def test_two_skewed_capture_hosts_of_one_subscriber_keep_their_order(played):
    policy, actual, expected = played
    assert (_outcome(actual, "b1"), _outcome(actual, "b2")) == ("applied", "applied")
    assert {r["customer_id"]: r["city"] for r in actual["publisher/customers"]}[2] == "b2"
    assert not [s for s in actual["subscriptions"] if s["subscriber"] == "b" and s["status"] != "active"]
    assert actual == expected


def test_other_subscribers_go_in_commit_order_not_clock_order(played):
    policy, actual, expected = played
    rejected = "rejected" if policy == "publisher_wins" else "rejected_reinit"
    assert _outcome(actual, "c1") == "applied" and _outcome(actual, "d1") == rejected  # c's clock ran ahead
    assert _outcome(actual, "g1") == "applied" and _outcome(actual, "f1") == rejected  # equal enqueued_at
    assert sorted((c["tran_id"], c["conflict_type"]) for c in actual["conflicts"]) == [
        ("d1", "insert_exists"),
        ("f1", "insert_exists"),
    ]
    assert actual == expected


def test_one_append_with_out_of_order_enqueued_at_follows_tran_seq(played):
    policy, actual, expected = played
    assert (_outcome(actual, "e1"), _outcome(actual, "e2")) == ("applied", "applied")
    assert {r["customer_id"]: r["city"] for r in actual["publisher/customers"]}[60] == "e2"
    assert actual == expected
