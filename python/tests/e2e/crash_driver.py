"""A process to kill: replays a scenario through the real pipeline and dies (SIGKILL of its
whole process group, so the Spark JVM dies with it) right after write K of its last run.

    python crash_driver.py crash SCENARIO SCHEMA K     # dies; exit status -9
    python crash_driver.py crash SCENARIO SCHEMA =P    # dies right after the first write whose label starts with P
    python crash_driver.py recover SCENARIO SCHEMA OUT [resolve-kill]
                                                       # the next ordinary run, outputs to OUT; with
                                                       # resolve-kill it then resolves the scenario's first
                                                       # update_update conflict by hand (keep subscriber)
                                                       # and dies right after that publisher write
    python crash_driver.py resolve SCENARIO SCHEMA OUT  # resolves that conflict again, twice; outputs to OUT
    python crash_driver.py abandon-lock SCENARIO SCHEMA TABLE[,TABLE...]
                                                       # takes the metastore's lock on each SCHEMA.TABLE, as
                                                       # an Iceberg commit does, and dies holding them

Every mode uses the state directory in $QREPL_STATE_DIR. The scenario's last step must be the run
that is killed; `recover` recovers the dead run's lock once its lease expires and runs the queue reader once, on the
scenario's clock, as a scheduler's next run would.
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

from qrepl.storage import faults
from qrepl.storage.dbt_runner import run_queue_reader
from qrepl.tools.replay import SCENARIO_EPOCH, SparkBackend, load_scenario, normalized_outputs, play
from qrepl.storage.run_lock import wait_until_free


def _announced_kill(k: int, label: str) -> None:
    print(f"killing at write {k}\t{label}", flush=True)
    faults.kill_process_group(k, label)


class KilledRun(SparkBackend):
    def __init__(self, scenario, schema: str, point: str) -> None:
        super().__init__(scenario, schema)
        self.point = point

    def run(self, batch_time) -> None:
        if self.point.startswith("="):
            faults.arm_at_label(self.point[1:], _announced_kill)
        else:
            faults.arm(int(self.point), _announced_kill)
        super().run(batch_time)


def _update_update(schema: str) -> dict:
    """The scenario's first update_update conflict the publisher won: the one resolved by hand."""
    from qrepl.services.service import list_conflicts

    return next(
        c for c in list_conflicts(schema) if c["conflict_type"] == "update_update" and c["winner"] == "publisher"
    )


def _resolve_and_die(schema: str) -> int:
    """Resolve the scenario's first update_update conflict (keep subscriber) and die right after
    the resolve's publisher write."""
    from qrepl.services.service import resolve_conflict

    conflict = _update_update(schema)

    def after_publisher_write(k: int, label: str) -> None:
        if "merge into" in label:
            _announced_kill(k, label)
        faults._State.armed_at, faults._State.action = k + 1, after_publisher_write

    faults.arm(1, after_publisher_write)
    resolve_conflict(schema, conflict["conflict_id"], "subscriber", "dba")
    print("the resolve finished without its publisher write", file=sys.stderr)
    return 3


def _resolve(scenario, schema: str, argv: list[str]) -> int:
    """Resolve the conflict a killed resolve left half done, then once more."""
    from qrepl.services.service import resolve_conflict

    backend = SparkBackend.attach(scenario, schema)
    conflict = _update_update(schema)
    first = resolve_conflict(schema, conflict["conflict_id"], "subscriber", "dba")
    second = resolve_conflict(schema, conflict["conflict_id"], "subscriber", "someone-else")
    out = {
        "conflict": conflict,
        "first": first,
        "second": second,
        "reviews": len(backend.wh.rows_of("conflict_reviews", "conflict_id")),
        "publisher": backend.wh.publisher_rows(conflict["article"]),
    }
    Path(argv[3]).write_text(json.dumps(out, sort_keys=True, default=str))
    return 0


def _abandon_lock(schema: str, tables: list[str], gap_seconds: float = 0.0) -> int:
    """Take the metastore's exclusive lock on each schema.table (HIVE_LOCKS, as Iceberg's
    MetastoreLock does for a commit), `gap_seconds` apart, and die holding them: processes
    killed inside commits, one after the other."""
    import os
    import signal
    import time

    from qrepl.storage.spark import get_spark, hive_conf

    spark = get_spark()
    metastore = spark._jvm.org.apache.hadoop.hive.metastore
    client = metastore.HiveMetaStoreClient(hive_conf(spark))
    for n, table in enumerate(tables):
        if n:
            time.sleep(gap_seconds)
        component = metastore.LockComponentBuilder().setDbName(schema).setTableName(table).setExclusive().build()
        request = (
            metastore.LockRequestBuilder("qrepl-crash-driver").addLockComponent(component).setUser("qrepl").build()
        )
        response = client.lock(request)
        print(
            f"holding metastore lock {response.getLockid()} on {schema}.{table}: {response.getState().toString()}",
            flush=True,
        )
    os.killpg(0, signal.SIGKILL)
    return 0


def main(argv: list[str]) -> int:
    mode, scenario_path, schema = argv[:3]
    if mode == "abandon-lock":
        return _abandon_lock(schema, argv[3].split(","), float(argv[4]) if argv[4:] else 0.0)
    scenario = load_scenario(Path(scenario_path))
    if mode == "resolve":
        return _resolve(scenario, schema, argv)
    if mode == "crash":
        play(scenario, KilledRun(scenario, schema, argv[3]))
        print("the run finished before write", argv[3], file=sys.stderr)
        return 3
    backend = SparkBackend.attach(scenario, schema)
    # the dead run's lease (QREPL_RUN_LOCK_LEASE_SECONDS, short in the test) expires, then its lock is recovered
    wait_until_free(backend.wh, 300, lambda line: print(line, flush=True), poll_seconds=1)
    run_queue_reader(schema, SCENARIO_EPOCH + timedelta(seconds=len(scenario.steps)))
    tables = normalized_outputs(scenario, backend.outputs())
    tables["history_batches"] = [h["batch_id"] for h in backend.wh.rows_of("queue_reader_history", "batch_id")]
    tables["leftover_tables"] = sorted(
        t.name
        for t in backend.wh.spark.catalog.listTables(schema)
        if t.name.startswith("qrepl_resolve_") or t.name == "qrepl_run_lock"
    )
    Path(argv[3]).write_text(json.dumps(tables, sort_keys=True, default=str))
    if argv[4:] == ["resolve-kill"]:  # the recovered state has the scenario's conflicts: resolve one and die
        return _resolve_and_die(schema)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
