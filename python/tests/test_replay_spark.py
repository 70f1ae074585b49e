"""`qrepl replay` through the real pipeline (embedded Spark, Iceberg, the dbt models) equals
the sequential reference: every scenario in scenarios/ under its own policy, and the basic
one under the other two policies too."""

from __future__ import annotations

from pathlib import Path

import pytest

from qrepl.replay import ReferenceBackend, SparkBackend, load_scenario, normalized_outputs, play

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "scenarios").glob("*.json"))


CASES = [(p, None) for p in SCENARIOS] + [
    (p, policy) for p in SCENARIOS if p.stem == "publisher_wins_basic"
    for policy in ("publisher_wins_reinit", "subscriber_wins")
]


@pytest.mark.parametrize("path, policy", CASES, ids=[f"{p.stem}-{pol or 'own'}" for p, pol in CASES])
def test_spark_replay_equals_reference(spark, path, policy):
    """Two runs on the same state (the incremental path), a publisher change between them,
    quarantined rows, multi-row transactions: Spark + dbt output == reference output."""
    scenario = load_scenario(path, policy)
    expected = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    actual = normalized_outputs(scenario, play(scenario, SparkBackend(scenario)))
    assert actual == expected
