"""Issue 39 ("Races and windows") on Spark + dbt: the cases of python/tests/races_cases.py,
whose reference results unit/test_races_reference.py checks, give the same results here."""

from __future__ import annotations

import pytest

import races_cases as cases
from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, scenario_from_dict

pytestmark = pytest.mark.spark
SCHEMA = "qrepl_races"


def _scenario():
    return scenario_from_dict({**cases.PUBLICATION, "subscribers": cases.SUBSCRIBERS, "steps": []}, "races")


def _both(spark, case):
    scenario = _scenario()
    return scenario, case(ReferenceBackend(scenario)), case(SparkBackend(scenario, SCHEMA))


def test_a_command_with_a_batched_identity_and_other_content_is_quarantined_on_spark(spark):
    scenario, expected, actual = _both(spark, cases.duplicate_identity_with_other_content)
    want = cases.DUPLICATE_IDENTITY_EXPECTED
    assert cases.rejects(actual) == want["rejects"]
    assert cases.outcomes(actual) == want["outcomes"]
    assert cases.cities(actual) == want["cities"]
    assert normalized_outputs(scenario, actual) == normalized_outputs(scenario, expected)


def test_a_dropped_then_re_added_subscriptions_old_queue_is_never_applied_on_spark(spark):
    scenario = _scenario()
    reference, spark_backend = ReferenceBackend(scenario), SparkBackend(scenario, SCHEMA)
    expected, actual = cases.drop_then_add_before_a_run(reference), cases.drop_then_add_before_a_run(spark_backend)
    want = cases.DROP_THEN_ADD_EXPECTED
    assert spark_backend.generation_of("s1") == want["generation"]
    assert cases.outcomes(actual) == want["outcomes"]
    assert cases.cities(actual) == want["cities"]
    assert normalized_outputs(scenario, actual) == normalized_outputs(scenario, expected)


def test_an_oversize_delete_key_is_quarantined_on_spark(spark):
    scenario, expected, actual = _both(spark, cases.oversize_delete_key)
    want = cases.OVERSIZE_KEY_EXPECTED
    assert cases.rejects(actual) == want["rejects"]
    assert cases.outcomes(actual) == want["outcomes"]
    assert cases.cities(actual) == want["cities"]
    assert normalized_outputs(scenario, actual) == normalized_outputs(scenario, expected)


def test_retention_keeps_a_subscribed_subscribers_undelivered_conflicts_on_spark(spark):
    scenario = scenario_from_dict(
        {**cases.RETENTION_PUBLICATION, "subscribers": cases.RETENTION_SUBSCRIBERS, "steps": []}, "races"
    )
    expected = cases.retention_keeps_undelivered_conflicts(ReferenceBackend(scenario))
    actual = cases.retention_keeps_undelivered_conflicts(SparkBackend(scenario, SCHEMA))
    assert {stage: cases.conflicted(outputs) for stage, outputs in actual.items()} == cases.RETENTION_EXPECTED
    for stage in ("offline", "delivered"):
        assert normalized_outputs(scenario, actual[stage]) == normalized_outputs(scenario, expected[stage])
