"""SIGKILL of `qrepl run` (the Python process and its Spark JVM together) at a write point;
the next ordinary run recovers the dead run's lock, finishes the batch, and the result equals
the sequential reference (docs/spec.md, failure contract).

CI kills right after the first compare-and-swap MERGE into an article table (the apply step
half done), found by its label as the run goes; `make faults` counts the run's writes first and
kills at every one of them (QREPL_KILL_POINTS=all). The first kill (CI's, and the first of each
part of the sweep) is followed by a process that takes the metastore's commit locks on
`qrepl_run_lock` and the article table and is killed holding them, as a process killed inside
an Iceberg commit leaves them, the article table's 20 s after the other; the next run clears
them (before that fix it failed after about 15 minutes of lock waits), the article table's
from its lease keeper during the run (the run's start finds it too young to remove). Every kill also
checks that no table is left behind (a killed run once left a work table's directory without
its metastore entry and wedged every later run; the resolution has had no work tables since).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qrepl.storage import faults
from qrepl.storage.spark import on_rest_catalog
from qrepl.tools.replay import ReferenceBackend, SparkBackend, load_scenario, normalized_outputs, play

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

PROJECT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("crash_driver.py")


def _first_batch_scenario(tmp: Path) -> Path:
    """publisher_wins_basic up to its first run: the run to kill is the last step."""
    data = json.loads((PROJECT / "scenarios" / "publisher_wins_basic.json").read_text())
    first_run = next(i for i, s in enumerate(data["steps"]) if "run" in s)
    data["steps"] = data["steps"][: first_run + 1]
    path = tmp / "first_batch.json"
    path.write_text(json.dumps(data))
    return path


class _Counted(SparkBackend):
    def run(self, batch_time) -> None:
        faults.arm(10**9, faults.raise_fault)
        try:
            super().run(batch_time)
        finally:
            faults.disarm()
            self.labels = faults.labels()


# CI: right after the first compare-and-swap MERGE into an article table, the one point where
# the batch is half applied at the publisher; it comes before the write that records the batch
# in queue_reader_history (that model reads batch_applied), so the killed batch is unfinished
CI_POINT = "model.qrepl.batch_applied merge into"


def _kill_points(spark, scenario_path: Path) -> list[tuple[str, bool]]:
    """The points to kill at, each (the crash driver's point argument, whether the batch is
    finished once that write is done). `make faults` counts the run's writes first."""
    sweep = os.environ.get("QREPL_KILL_POINTS", "")
    if not sweep:
        return [("=" + CI_POINT, False)]
    scenario = load_scenario(scenario_path)
    backend = _Counted(scenario, "qrepl_kill_count")
    play(scenario, backend)
    labels = backend.labels
    # from the write that records the batch in queue_reader_history on, the batch is finished
    finished_at = next(i for i, label in enumerate(labels, 1) if label.startswith("model.qrepl.queue_reader_history"))
    picks = range(1, len(labels) + 1) if sweep == "all" else [int(k) for k in sweep.split(",")]
    return [(str(k), k >= finished_at) for k in picks]


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    # a session of its own, so the kill takes the JVM too and never this test process
    return subprocess.run(
        [sys.executable, str(DRIVER), *args],
        env=env,
        capture_output=True,
        text=True,
        start_new_session=True,
        timeout=1200,
    )


def _check_resolve_recovered(
    crashed: subprocess.CompletedProcess, scenario_path: Path, env: dict, tmp_path: Path
) -> None:
    """`qrepl conflicts --resolve ID --keep subscriber` killed (SIGKILL, JVM included) right
    after it wrote the subscriber's row to the publisher and before it recorded the review: the
    next resolve finds its own write (the version is derived from the conflict id), records
    the review once, and a resolve after that changes nothing (docs/conflicts.md)."""
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    killed = [line for line in crashed.stdout.splitlines() if line.startswith("killing at write ")]
    assert len(killed) == 1 and "merge into" in killed[0], crashed.stdout[-2000:]
    out = tmp_path / "resolved.json"
    resolved = _run(["resolve", str(scenario_path), "qrepl_kill", str(out)], env)
    assert resolved.returncode == 0, resolved.stderr[-3000:]
    result = json.loads(out.read_text())
    first, second, conflict = result["first"], result["second"], result["conflict"]
    assert first["outcome"] == "subscriber row applied" and first["resolved_by"] == "dba"
    assert second == first and result["reviews"] == 1  # the second resolve changed nothing
    key = json.loads(conflict["row_key"])
    kept = {k: v for k, v in conflict["subscriber_row"].items() if k != "msrepl_tran_version"}
    row = next(r for r in result["publisher"] if all(r[k] == v for k, v in key.items()))
    assert {k: row[k] for k in kept} == kept  # the subscriber's row, as its capture had it
    assert row["msrepl_tran_version"] == first["written_version"] != conflict["publisher_version"]


# `make faults` splits the kill sweep into parts for its pytest-xdist workers: part p kills at
# every SWEEP_PARTS-th point, and part 0 also kills the resolve
SWEEP_PARTS = max(1, int(os.environ.get("QREPL_SWEEP_PARTS", "1"))) if os.environ.get("QREPL_KILL_POINTS") else 1


@pytest.mark.parametrize("part", range(SWEEP_PARTS))
def test_a_killed_run_and_a_killed_resolve_are_each_finished_by_the_next(spark, tmp_path, part):
    """A run killed mid-apply converges on the next run; on that recovered state, a resolve by
    hand killed after its publisher write converges on the next resolve. One scenario serves
    both kills (each SIGKILL costs a JVM start and a replay)."""
    scenario_path = _first_batch_scenario(tmp_path)
    scenario = load_scenario(scenario_path)
    expected = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    points = list(enumerate(_kill_points(spark, scenario_path)))[part::SWEEP_PARTS]
    assert points, f"no kill point in part {part}"
    for n, (point, finished) in points:
        # a short lease: the next run recovers the dead run's lock once it expires
        env = {**os.environ, "QREPL_STATE_DIR": str(tmp_path / f"state_{n}"), "QREPL_RUN_LOCK_LEASE_SECONDS": "5"}
        crashed = _run(["crash", str(scenario_path), "qrepl_kill", point], env)
        assert crashed.returncode == -9, f"write {point}: {crashed.stderr[-2000:]}"
        # the driver names the write it dies after: "killing at write K<TAB>LABEL"
        killed = [line for line in crashed.stdout.splitlines() if line.startswith("killing at write ")]
        assert len(killed) == 1, crashed.stdout[-2000:]
        label = killed[0].split("\t", 1)[1]
        if point.startswith("="):
            assert label.startswith(point[1:]), label
        if n == 0 and not on_rest_catalog():  # a REST catalog has no commit locks to leave
            # and what a process killed inside an Iceberg commit leaves: the metastore's commit
            # locks on the run lock's table (a lease renewal caught mid-commit, found by `make
            # faults`) and on an article table, which the embedded metastore never times out on
            # its own; the next run must clear them, not wait on them (docs/reliability.md)
            # the article table's lock 20 s after the run lock's: the recovery removes the run
            # lock's once it is old enough, and the run then meets the article table's while
            # it is still too young to remove; the run's own lease keeper must remove it later
            abandoned = _run(["abandon-lock", str(scenario_path), "qrepl_kill", "qrepl_run_lock,customers", "20"], env)
            assert abandoned.returncode == -9, abandoned.stderr[-2000:]
            # ACQUIRED, or WAITING when the killed run itself died inside a commit to that table
            # and left its own lock there first: either way an abandoned lock the next run must clear
            for table in ("qrepl_run_lock", "customers"):
                assert re.search(rf"on qrepl_kill\.{table}: (ACQUIRED|WAITING)$", abandoned.stdout, re.M), (
                    abandoned.stdout[-2000:]
                )
        out = tmp_path / f"out_{n}.json"
        # the first recovered state also serves the resolve kill
        recovered = _run(
            ["recover", str(scenario_path), "qrepl_kill", str(out), *(["resolve-kill"] if n == 0 else [])], env
        )
        if not out.exists():
            pytest.fail(f"recovery after a kill at {label}: {recovered.stderr[-3000:]}")
        if n != 0:
            assert recovered.returncode == 0, f"recovery after a kill at {label}: {recovered.stderr[-3000:]}"
        if not (label.startswith("python drop") and "qrepl_run_lock" in label):  # the lock was left behind
            assert "recovered the run lock left by a dead process" in recovered.stdout, label
        actual = json.loads(out.read_text())
        # killed before the history row, the next run finishes batch 1; killed once it was
        # written (only the lock's release was left), the batch is finished and the next run,
        # with nothing queued, has nothing to do and writes no history row (docs/spec.md 5.10):
        # either way batch 1 alone, once
        assert actual.pop("history_batches") == [1], (label, finished)
        assert actual.pop("leftover_tables") == []
        for table, rows in expected.items():
            assert actual[table] == json.loads(json.dumps(rows, sort_keys=True, default=str)), (
                f"{table} differs after a kill at {label}"
            )
        print(f"run killed after {killed[0].removeprefix('killing at ')}: converged", flush=True)
        if n == 0:
            _check_resolve_recovered(recovered, scenario_path, env, tmp_path)
            print("resolve killed after its publisher write: converged", flush=True)
