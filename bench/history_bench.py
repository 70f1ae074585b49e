"""`make bench-history`: what a publication's history costs a small batch.

    QREPL_STATE_DIR=.qrepl_state/bench-history .venv/bin/python bench/history_bench.py [--history N] [--batch N]

The queue and the batch log (`int_batch_commands`) keep every command ever queued: the queue
reader needs them to cut each command into exactly one batch and to quarantine a reused
`tran_id` or `new_version` from any earlier batch. This bench times the same small batch
twice, in one Spark session, per model:

* **fresh**: the batch alone on a new publication (1M rows), after an untimed warm-up run;
* **after history**: the same-sized batch after a first batch of `--history` commands was run.

Batches are the typical ones of `bench/bench.py` (I/U/D, multi-row transactions, 4 subscribers).
"""

from __future__ import annotations

import argparse
import time

from bench import SCHEMA, load_batch, queue_batch, say

from qrepl.storage.dbt_runner import dbt_invoke, run_queue_reader
from qrepl.storage.spark import get_spark
from qrepl.storage.warehouse import Warehouse

ROWS = 1_000_000


def timed_run() -> tuple[float, dict]:
    t0 = time.perf_counter()
    res = run_queue_reader(SCHEMA)
    return time.perf_counter() - t0, {r.node.name: r.execution_time for r in res.result.results}


def main() -> None:
    ap = argparse.ArgumentParser(
        description="A small batch's cost on a fresh publication and after a long "
        "history, per model, in one Spark session."
    )
    ap.add_argument("--history", type=int, default=1_000_000, help="commands run before the timed batch")
    ap.add_argument("--batch", type=int, default=1_000, help="commands in the timed batch")
    args = ap.parse_args()
    spark = get_spark()
    wh = Warehouse(spark, SCHEMA)

    say(f"warming up: {args.batch:,} commands on a new publication of {ROWS:,} rows (untimed) ...")
    load_batch(spark, wh, "typical", args.batch, ROWS)
    dbt_invoke(["parse"], SCHEMA)  # the first invocation parses the project: not part of any batch
    timed_run()  # the process's first run also warms the JVM: not part of any batch either
    say(f"fresh: {args.batch:,} commands on a new publication of {ROWS:,} rows ...")
    load_batch(spark, wh, "typical", args.batch, ROWS)
    fresh_s, fresh = timed_run()
    say(f"fresh: {fresh_s:.1f} s")

    say(f"history: {args.history:,} commands run first (untimed) ...")
    load_batch(spark, wh, "typical", args.history, ROWS)
    history_s, _ = timed_run()
    say(f"history: {history_s:.1f} s; now {args.batch:,} more commands ...")
    queue_batch(spark, wh, "typical", args.batch, ROWS, first=args.history)
    after_s, after = timed_run()
    say(f"after history: {after_s:.1f} s")

    print(f"\n| model | {args.batch:,} fresh | {args.batch:,} after {args.history:,} | ratio |")
    print("|---|---:|---:|---:|")
    for name in after:
        ratio = after[name] / fresh[name] if fresh.get(name) else float("nan")
        print(f"| {name} | {fresh.get(name, 0):.1f} s | {after[name]:.1f} s | {ratio:.2f}× |")
    print(f"| **the run** | {fresh_s:.1f} s | {after_s:.1f} s | {after_s / fresh_s:.2f}× |")


if __name__ == "__main__":
    main()
