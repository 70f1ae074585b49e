"""`make bench-profile`: where one model's time goes, step by step, on a bench batch.

    QREPL_STATE_DIR=.qrepl_state/bench-profile .venv/bin/python bench/cte_profile.py \
        [--model int_batch_commands] [--size 100k] [--repeat 2]

The queue reader's models are written as named steps (CTEs). This loads one batch of
`bench/bench.py` (same shapes and sizes), runs the models the chosen one reads (`dbt run
--select +M --exclude M`), compiles the model for that batch, and then times
`select * from <step>` for each of its steps in order, into Spark's `noop` sink: the query
runs whole and nothing is written (no Iceberg commit). A step's time includes every step it
reads, so its own cost is roughly the difference from the slowest of its inputs. Each step is
timed `--repeat` times (default 2) after one untimed run of the whole model; the shortest time
is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path

from bench import SCHEMA, SIZES, load_batch, say

from qrepl.dbt_runner import dbt_invoke
from qrepl.spark import get_spark
from qrepl.warehouse import Warehouse

STEP = re.compile(r"(\w+) as \((?:\s*--[^\n]*)?$", re.M)
QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'")


def steps_of(compiled: str) -> tuple[str, list[str]]:
    """The compiled model without its last `select * from final`, and its top-level steps in
    order (an ephemeral model inlined by dbt is one step: the steps inside it are not)."""
    body, _, _ = compiled.rpartition("select * from final")
    if not body:
        raise SystemExit("bench: the compiled model does not end in `select * from final`")
    plain = QUOTED.sub(lambda m: "'" + " " * (len(m.group()) - 2) + "'", body)  # parentheses in literals
    steps = []
    for m in STEP.finditer(plain):
        before = plain[:m.start()]
        if before.count("(") == before.count(")"):
            steps.append(m.group(1))
    return body, steps


def timed(spark, query: str) -> float:
    t0 = time.perf_counter()
    spark.sql(query).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description="Time each step (CTE) of one queue-reader model on a bench batch, "
                                 "without writing: where the model's time goes.")
    ap.add_argument("--model", default="int_batch_commands", help="a model of models/ (default: int_batch_commands)")
    ap.add_argument("--size", choices=list(SIZES), default="100k", help="the bench batch (default: 100k)")
    ap.add_argument("--repeat", type=int, default=2, help="times each step is run; the shortest is printed (default: 2)")
    args = ap.parse_args()
    if not re.fullmatch(r"\w+", args.model):
        raise SystemExit(f"bench: --model must be a model name, got {args.model!r}")
    target = Path(tempfile.mkdtemp(prefix="qrepl-profile-target-"))
    os.environ["DBT_TARGET_PATH"] = str(target)  # this compile's own target/, not the checkout's
    changes, rows, shape = SIZES[args.size]
    spark = get_spark()
    wh = Warehouse(spark, SCHEMA)
    say(f"[{args.size}] loading {rows:,} publisher rows and {changes:,} queued changes ({shape}) ...")
    load_batch(spark, wh, shape, changes, rows)
    say(f"running what {args.model} reads ...")
    dbt_invoke(["run", "--select", f"+{args.model}", "--exclude", args.model], SCHEMA)
    dbt_invoke(["compile", "--select", args.model, "--log-level", "none"], SCHEMA)  # no echo of the SQL
    compiled = next(target.rglob(f"compiled/**/{args.model}.sql"))
    body, steps = steps_of(compiled.read_text())
    say(f"{args.model}: {len(steps)} steps; compiled SQL in {compiled}")
    whole = timed(spark, body + "select * from final")
    say(f"  the whole model, untimed warm-up: {whole:.1f} s")
    for step in steps:
        seconds = min(timed(spark, f"{body}select * from {step}") for _ in range(max(1, args.repeat)))
        say(f"  {step:32s} {seconds:6.1f} s")


if __name__ == "__main__":
    main()
