"""Two queue readers started at the same moment against one Spark Thrift server (a CI job and
a scheduler): the run lock lets one of them run; the other fails fast with the lock's message
(or, if they did not overlap at all, runs the next batch after it). Either way no batch is
cut twice. Run by scripts/thrift_test.sh while its Thrift server is up:

    python thrift_two_runs.py SCHEMA
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pyhive import hive

from qrepl.core.model import check_identifier

PROJECT = Path(__file__).resolve().parents[3]


def main(schema: str) -> int:
    schema = check_identifier(schema, "schema")
    dbt = str(Path(sys.executable).with_name("dbt"))
    cmd = [dbt, "run", "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT), "--target", "thrift"]
    env = {**os.environ, "QREPL_TARGET": "thrift", "QREPL_SCHEMA": schema}
    runs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)
    ]
    outputs = [(r.wait(timeout=1200), r.stdout.read()) for r in runs]
    refused = [out for code, out in outputs if code != 0]
    print(f"two concurrent runs: {len(outputs) - len(refused)} ran, {len(refused)} refused")
    for out in refused:
        # the lock's own sentence when the second run saw the lock; when both passed the check
        # at the same moment, the metastore lets one CREATE TABLE through and fails the other
        lines = [
            x.strip()
            for x in out.splitlines()
            if any(w in x for w in ("already running", "xists", "concurrently", "Exception:"))
        ]
        print(f"  refused: {lines[0][:300] if lines else out.strip().splitlines()[-1][:300]}")
    if len(refused) == 2:
        print("FAIL: both runs were refused")
        return 1
    cursor = hive.connect(
        host="127.0.0.1",
        port=int(os.environ.get("QREPL_THRIFT_PORT", "10000")),
        username=os.environ.get("QREPL_THRIFT_USER", "qrepl"),
        auth="CUSTOM",
        password=os.environ["QREPL_THRIFT_PASSWORD"],
    ).cursor()
    cursor.execute(f"select batch_id, count(*) from {schema}.queue_reader_history group by batch_id")
    counts = dict(cursor.fetchall())
    cursor.execute(
        f"select count(*) from (select subscriber, tran_id, command_seq, enqueued_at, count(*) as n "
        f"from {schema}.int_batch_commands group by 1, 2, 3, 4 having n > 1)"
    )
    doubled = cursor.fetchall()[0][0]
    cursor.execute(f"show tables in {schema} like 'qrepl_run_lock'")
    lock_left = cursor.fetchall()
    ok = (
        sorted(counts) == list(range(1, len(counts) + 1))
        and set(counts.values()) == {1}
        and doubled == 0
        and not lock_left
    )
    print(
        f"history batches {sorted(counts)} (each once: {set(counts.values()) == {1}}), "
        f"commands in two batches: {doubled}, lock left: {bool(lock_left)}"
    )
    print("PASS: no batch cut twice" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
