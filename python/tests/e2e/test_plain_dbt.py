"""Plain dbt on the embedded `local` target, no wrapper (profiles.yml, docs/operating in the
README): the Python layer writes a publication and its queue, then `dbt build` and `dbt docs
generate` run from the checkout as a user types them, with nothing set but the state directory;
the batch equals the sequential reference's (the same check `qrepl run` passes in
test_replay_spark.py).

Each step is a process of its own: the embedded Derby metastore admits one JVM at a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from qrepl.tools.replay import ReferenceBackend, normalized_outputs, play, scenario_from_dict

pytestmark = pytest.mark.e2e

PROJECT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("plain_dbt_driver.py")
SCENARIO = PROJECT / "scenarios" / "publisher_wins_basic.json"
# the batch's clock: the reference runs on the scenario's, plain dbt on the wall clock
CLOCK_COLUMNS = ("detected_at", "delivered_at", "reinit_requested_at")


def _reference_first_batch() -> dict[str, list[dict]]:
    data = json.loads(SCENARIO.read_text())
    data["steps"] = data["steps"][: next(i for i, s in enumerate(data["steps"]) if "run" in s) + 1]
    scenario = scenario_from_dict(data, SCENARIO.stem)
    tables = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    return json.loads(json.dumps(tables, sort_keys=True, default=str))


def _without_clock(tables: dict[str, list[dict]]) -> dict[str, list[dict]]:
    return {
        name: [{k: v for k, v in row.items() if k not in CLOCK_COLUMNS} for row in rows]
        for name, rows in tables.items()
    }


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"{' '.join(cmd[-2:])}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def test_plain_dbt_build_and_docs_on_the_local_target(tmp_path):
    # a user's shell: the venv on PATH, the state directory, nothing else of qrepl's; dbt's
    # target/ in tmp_path so the suite's own (the checkout's) is left alone
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QREPL_", "DBT_"))}
    env.update(
        QREPL_STATE_DIR=str(tmp_path / "state"),
        PATH=f"{Path(sys.executable).parent}:{env['PATH']}",
        DBT_TARGET_PATH=str(tmp_path / "target"),
        DBT_LOG_PATH=str(tmp_path / "logs"),
    )
    _run([sys.executable, str(DRIVER), "setup", str(SCENARIO)], env)

    build = _run(["dbt", "build"], env)
    assert "Completed successfully" in build.stdout
    assert "qrepl.conflicts" in build.stdout and "PASS" in build.stdout  # models and their tests

    out = tmp_path / "outputs.json"
    _run([sys.executable, str(DRIVER), "outputs", str(SCENARIO), str(out)], env)
    actual, expected = _without_clock(json.loads(out.read_text())), _without_clock(_reference_first_batch())
    assert expected["conflicts"], "the batch must have conflicts to compare"
    for table in expected:
        assert actual[table] == expected[table], f"{table}: plain dbt build differs from the reference"

    _run(["dbt", "docs", "generate"], env)
    catalog = json.loads((tmp_path / "target" / "catalog.json").read_text())
    assert "model.qrepl.conflicts" in catalog["nodes"]

    # while a reader holds the run lock, a build that runs none of the reader's models (its data
    # tests alone, as a downstream project's `dbt build --select my_model` reads the marts) runs
    # and leaves the lock alone; one that runs a reader model fails naming the holder
    _run([sys.executable, str(DRIVER), "lock", "another_reader"], env)
    tests_only = _run(["dbt", "build", "--select", "assert_transactions_processed_once"], env)
    assert "Completed successfully" in tests_only.stdout and "PASS" in tests_only.stdout
    reader = subprocess.run(
        ["dbt", "build", "--select", "conflicts"], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=1200
    )
    assert reader.returncode != 0 and "already running (another_reader" in reader.stdout


def test_a_plain_dbt_run_killed_by_a_ci_timeout_leaves_a_lease_that_expires(tmp_path):
    """CI kills a plain `dbt run` (SIGKILL to its process group: dbt and its Spark JVM) once
    its run lock is taken and its first model has started. Its lock carries a lease
    (QREPL_PLAIN_RUN_LEASE_SECONDS) that nothing renews any more: the next `qrepl run` watches
    it stay unrenewed for that long, recovers it and finishes the batch, equal to the
    reference. Before, a plain run's lock had no lease and every later run failed until someone
    ran `qrepl unlock`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QREPL_", "DBT_"))}
    env.update(
        QREPL_STATE_DIR=str(tmp_path / "state"),
        PATH=f"{Path(sys.executable).parent}:{env['PATH']}",
        DBT_TARGET_PATH=str(tmp_path / "target"),
        DBT_LOG_PATH=str(tmp_path / "logs"),
        QREPL_PLAIN_RUN_LEASE_SECONDS="10",
    )
    _run([sys.executable, str(DRIVER), "setup", str(SCENARIO)], env)

    dbt = subprocess.Popen(
        ["dbt", "run"],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    try:
        for line in dbt.stdout:  # the lock is taken in on-run-start, before the first model
            seen.append(line)
            if " START sql " in line:
                break
    finally:
        os.killpg(dbt.pid, signal.SIGKILL)
        dbt.wait(timeout=120)
    assert any(" START sql " in line for line in seen), "".join(seen)[-3000:]

    recovered = subprocess.run(
        [str(Path(sys.executable).parent / "qrepl"), "run", "--wait", "120"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert recovered.returncode == 0, f"{recovered.stdout[-3000:]}\n{recovered.stderr[-3000:]}"
    assert "recovered the run lock left by a dead process (dbt invocation" in recovered.stdout, recovered.stdout

    out = tmp_path / "outputs.json"
    _run([sys.executable, str(DRIVER), "outputs", str(SCENARIO), str(out)], env)
    actual, expected = _without_clock(json.loads(out.read_text())), _without_clock(_reference_first_batch())
    for table in expected:
        assert actual[table] == expected[table], f"{table}: the recovered batch differs from the reference"
