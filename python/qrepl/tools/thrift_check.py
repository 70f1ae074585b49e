"""Support for `make thrift-test`: the first run of a scenario, executed by dbt through Thrift."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .replay import ReferenceBackend, Scenario, SparkBackend, load_scenario, normalized_outputs, play


def first_run(scenario: Scenario) -> Scenario:
    steps = []
    for step in scenario.steps:
        steps.append(step)
        if "run" in step:
            break
    return Scenario(scenario.name, scenario.publication, scenario.subscribers, steps)


def prepare(path: Path, schema: str) -> None:
    """Everything of the scenario's first run but the run itself, on the embedded Spark."""
    scenario = first_run(load_scenario(path))
    without_run = Scenario(
        scenario.name, scenario.publication, scenario.subscribers, [s for s in scenario.steps if "run" not in s]
    )
    play(without_run, SparkBackend(without_run, schema))
    print(f"prepared {scenario.name} in schema {schema}")


def verify(path: Path, schema: str) -> int:
    scenario = first_run(load_scenario(path))
    expected = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    actual = normalized_outputs(scenario, SparkBackend.attach(scenario, schema).outputs())
    for name in expected:
        if name in ("conflicts",):  # detected_at comes from the run's clock, not the scenario's
            for rows in (expected[name], actual[name]):
                for r in rows:
                    r.pop("detected_at", None)
        if expected[name] != actual[name]:
            print(f"thrift run differs from the reference in {name}:")
            print(" expected:", json.dumps(expected[name], default=str)[:2000])
            print(" actual:  ", json.dumps(actual[name], default=str)[:2000])
            return 1
    print(
        f"thrift run matches the reference on {scenario.name}: " + ", ".join(f"{k} {len(v)}" for k, v in actual.items())
    )
    return 0


if __name__ == "__main__":
    import os

    schema = os.environ.get("QREPL_SCHEMA", "qrepl_thrift")
    action, scenario_path = sys.argv[1], Path(sys.argv[2])
    if action == "prepare":
        prepare(scenario_path, schema)
    else:
        sys.exit(verify(scenario_path, schema))
