"""`make bench-statements`: one warm queue-reader run, statement by statement.

    QREPL_STATE_DIR=.qrepl_state/bench-statements .venv/bin/python bench/statements.py \
        [--changes 1000] [--rows 1000000] [--runs 2]

Loads the typical batch of `make bench` over a publication of `--rows` rows and runs the queue
reader on it, untimed (the JVM's first run: classes loaded, code generated). Then, `--runs`
times, queues the next batch of the same size and runs the reader again, recording every SQL
statement dbt and qrepl send to Spark in this process (`SparkSession.sql`, wrapped for the
run: the text's first words and its seconds). It prints, for the last run: per dbt node (and
per run hook) its statements, their seconds and its slowest statement; the run's totals; and
how much of the run's wall time was spent outside Spark's statements (dbt's own work: parsing
no project, but compiling each node, its adapter cache, its bookkeeping, and qrepl's Python).

This is the per-statement profile of docs/performance.md: what a warm run costs, where, and
what bounds it. Times, so run it alone on the machine.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import SCHEMA, load_batch, queue_batch, say  # noqa: E402  (the bench's own batch and publication)
from pyspark.sql import SparkSession  # noqa: E402

from qrepl.storage.dbt_runner import dbt_invoke, run_queue_reader  # noqa: E402
from qrepl.storage.spark import get_spark  # noqa: E402
from qrepl.storage.warehouse import Warehouse  # noqa: E402

# dbt's query comment: {"app": "dbt", ..., "node_id": "model.qrepl.x"} or "connection_name": "..."
COMMENT = re.compile(r"^\s*/\*\s*(\{.*?\})\s*\*/\s*", re.S)
NODE = re.compile(r'"node_id":\s*"[^"]*\.([^".]+)"|"connection_name":\s*"([^"]*)"')


class Recorder:
    """Every statement sent through SparkSession.sql while on: (node, seconds, first words)."""

    def __init__(self) -> None:
        self.on = False
        self.statements: list[tuple[str, float, str]] = []
        self._sql = SparkSession.sql
        recorder = self

        def sql(session, query, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return recorder._sql(session, query, *args, **kwargs)
            finally:
                if recorder.on:
                    recorder.record(query, time.perf_counter() - t0)

        SparkSession.sql = sql

    def record(self, query: str, seconds: float) -> None:
        node = "qrepl (outside dbt)"
        comment = COMMENT.match(query)
        if comment:
            found = NODE.search(comment.group(1))
            node = (found.group(1) or f"dbt: {found.group(2)}") if found else "dbt"
            query = query[comment.end() :]
        self.statements.append((node, seconds, " ".join(query.split())[:90]))


def main() -> None:
    ap = argparse.ArgumentParser(description="One warm queue-reader run, statement by statement.")
    ap.add_argument("--changes", type=int, default=1_000, help="queued changes per batch (default 1,000)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the publication (default 1,000,000)")
    ap.add_argument("--runs", type=int, default=2, help="warm runs; the last one is printed (default 2)")
    args = ap.parse_args()
    spark = get_spark()
    wh = Warehouse(spark, SCHEMA)
    say(f"loading {args.rows:,} publisher rows and {args.changes:,} queued changes ...")
    load_batch(spark, wh, "typical", args.changes, args.rows)
    dbt_invoke(["parse"], SCHEMA)
    say("the first run (untimed) ...")
    run_queue_reader(SCHEMA)
    recorder = Recorder()
    for run in range(args.runs):
        queue_batch(spark, wh, "typical", args.changes, args.rows, first=(run + 1) * 10 * args.changes)
        recorder.statements.clear()
        recorder.on = True
        t0 = time.perf_counter()
        res = run_queue_reader(SCHEMA)
        wall = time.perf_counter() - t0
        recorder.on = False
        say(f"warm run {run + 1}: {wall:.1f} s, {len(recorder.statements)} statements")
    report(recorder.statements, wall, res)


def report(statements: list[tuple[str, float, str]], wall: float, res) -> None:
    per_node: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for node, seconds, text in statements:
        per_node[node].append((seconds, text))
    node_seconds = {r.node.name: r.execution_time for r in res.result.results}
    print("\n| node | dbt's time | statements | in Spark | slowest statement |")
    print("|---|---:|---:|---:|---|")
    for node, items in per_node.items():
        slowest = max(items)
        own = f"{node_seconds[node]:.2f} s" if node in node_seconds else ""
        print(
            f"| {node} | {own} | {len(items)} | {sum(s for s, _ in items):.2f} s "
            f"| {slowest[0]:.2f} s `{slowest[1][:60]}` |"
        )
    in_spark = sum(s for _, s, _ in statements)
    writes = sum(1 for _, _, t in statements if re.match(r"(insert|merge|update|delete|create table|drop)", t, re.I))
    print(
        f"\nthe run: {wall:.1f} s wall, {len(node_seconds)} dbt nodes, {len(statements)} statements "
        f"({writes} of them writing or dropping), {in_spark:.1f} s in Spark's statements, "
        f"{wall - in_spark:.1f} s outside them"
    )


if __name__ == "__main__":
    main()
