"""A process killed inside an Iceberg commit leaves the metastore's lock on that table
(HIVE_LOCKS), and the metastore qrepl embeds never times it out on its own (docs/reliability.md).
`make faults` met it on the run lock: the kill caught `qrepl run`'s lease keeper committing a
renewal, and the next run could not recover the dead run's lock. Here the same state is made on
purpose, with real processes: a run killed mid-apply, then a process that takes the metastore's
locks on `qrepl_run_lock` and on the article table the run was merging into, and is killed
holding them. The next ordinary run must recover all of it and finish the batch (its MERGE
commits to that article table) as the reference does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qrepl.tools.replay import ReferenceBackend, load_scenario, normalized_outputs, play

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

PROJECT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("crash_driver.py")
SCHEMA = "qrepl_kill"


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DRIVER), *args], env=env, capture_output=True, text=True,
                          start_new_session=True, timeout=1200)


def test_a_lock_left_by_a_process_killed_inside_a_commit_does_not_wedge_the_next_run(tmp_path):
    data = json.loads((PROJECT / "scenarios" / "publisher_wins_basic.json").read_text())
    data["steps"] = data["steps"][: next(i for i, s in enumerate(data["steps"]) if "run" in s) + 1]
    scenario_path = tmp_path / "first_batch.json"
    scenario_path.write_text(json.dumps(data))
    env = {**os.environ, "QREPL_STATE_DIR": str(tmp_path / "state"), "QREPL_RUN_LOCK_LEASE_SECONDS": "5"}

    crashed = _run(["crash", str(scenario_path), SCHEMA, "=model.qrepl.batch_applied merge into"], env)
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    abandoned = _run(["abandon-lock", str(scenario_path), SCHEMA, "qrepl_run_lock,customers"], env)
    assert abandoned.returncode == -9, abandoned.stderr[-2000:]
    for table in ("qrepl_run_lock", "customers"):
        assert f"on {SCHEMA}.{table}: ACQUIRED" in abandoned.stdout, abandoned.stdout[-2000:]

    out = tmp_path / "out.json"
    recovered = _run(["recover", str(scenario_path), SCHEMA, str(out)], env)
    assert recovered.returncode == 0 and out.exists(), recovered.stderr[-3000:]
    assert "recovered the run lock left by a dead process" in recovered.stdout
    actual = json.loads(out.read_text())
    assert actual.pop("history_batches") == [1] and actual.pop("leftover_tables") == []
    scenario = load_scenario(scenario_path)
    expected = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    for table, rows in expected.items():
        assert actual[table] == json.loads(json.dumps(rows, sort_keys=True, default=str)), table
