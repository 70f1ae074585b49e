"""`qrepl replay` through the real pipeline (embedded Spark, Iceberg, the dbt models) equals
the sequential reference, for every scenario in scenarios/ under every policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from qrepl.replay import ReferenceBackend, SparkBackend, load_scenario, normalized_outputs, play

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "scenarios").glob("*.json"))


@pytest.mark.parametrize("policy", ["publisher_wins", "publisher_wins_reinit", "subscriber_wins"])
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_spark_replay_equals_reference(spark, path, policy):
    """Two runs on the same state (the incremental path), a publisher change between them,
    quarantined rows, multi-row transactions: Spark + dbt output == reference output."""
    scenario = load_scenario(path, policy)
    expected = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    actual = normalized_outputs(scenario, play(scenario, SparkBackend(scenario)))
    assert actual == expected
