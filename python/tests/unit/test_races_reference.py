"""Issue 39 ("Races and windows") on the reference, the executable spec: the same cases
(python/tests/races_cases.py) run on Spark + dbt in spark/test_races_spark.py."""

from __future__ import annotations

import races_cases as cases
from qrepl.core.model import REJECT_REASONS
from qrepl.tools.replay import ReferenceBackend, scenario_from_dict


def _backend() -> ReferenceBackend:
    return ReferenceBackend(
        scenario_from_dict({**cases.PUBLICATION, "subscribers": cases.SUBSCRIBERS, "steps": []}, "races")
    )


def test_a_command_with_a_batched_identity_and_other_content_is_quarantined():
    out = cases.duplicate_identity_with_other_content(_backend())
    expected = cases.DUPLICATE_IDENTITY_EXPECTED
    assert cases.rejects(out) == expected["rejects"]
    assert cases.outcomes(out) == expected["outcomes"]
    assert cases.cities(out) == expected["cities"]


def test_duplicate_with_other_content_is_checked_before_duplicate_command():
    assert REJECT_REASONS.index("duplicate command with other content") + 1 == REJECT_REASONS.index("duplicate command")


def test_a_dropped_then_re_added_subscriptions_old_queue_is_never_applied():
    backend = _backend()
    out = cases.drop_then_add_before_a_run(backend)
    expected = cases.DROP_THEN_ADD_EXPECTED
    assert backend.generation_of("s1") == expected["generation"]
    assert cases.outcomes(out) == expected["outcomes"]
    assert cases.cities(out) == expected["cities"]


def test_an_oversize_delete_key_is_quarantined():
    out = cases.oversize_delete_key(_backend())
    expected = cases.OVERSIZE_KEY_EXPECTED
    assert cases.rejects(out) == expected["rejects"]
    assert cases.outcomes(out) == expected["outcomes"]
    assert cases.cities(out) == expected["cities"]


def test_retention_keeps_a_subscribed_subscribers_undelivered_conflicts_on_the_reference():
    scenario = scenario_from_dict(
        {**cases.RETENTION_PUBLICATION, "subscribers": cases.RETENTION_SUBSCRIBERS, "steps": []}, "races"
    )
    result = cases.retention_keeps_undelivered_conflicts(ReferenceBackend(scenario))
    assert {stage: cases.conflicted(outputs) for stage, outputs in result.items()} == cases.RETENTION_EXPECTED
