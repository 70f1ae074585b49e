"""`make bench-profile`: where one model's time goes, step by step, on a bench batch.

    QREPL_STATE_DIR=.qrepl_state/bench-profile .venv/bin/python bench/cte_profile.py \
        [--model int_batch_commands] [--size 100k] [--repeat 2]

The queue reader's models are written as named steps (CTEs). This loads one batch of
`bench/bench.py` (same shapes and sizes), runs the models the chosen one reads (`dbt run
--select +M --exclude M`), compiles the model for that batch, runs its pre-hooks in this
session as `dbt run` would (int_batch_commands' makes the view of the queue rows it reads),
and then times
`select * from <step>` for each of its steps in order, into Spark's `noop` sink: the query
runs whole and nothing is written (no Iceberg commit). A step's time includes every step it
reads, so its own cost is roughly the difference from the slowest of its inputs. Each step is
timed `--repeat` times (default 2) after one untimed run of the whole model; the shortest time
is printed.

With `--history N` (`make bench-profile HISTORY=...`) the queue reader first runs a batch of N
commands of the same shape, untimed, and the profiled batch is the next one: the case of a
production queue, read incrementally and checked against every command taken before.

With `--against REF` (a commit, `make bench-profile AGAINST=...`) it compares the whole model
instead: the same model compiled from REF's models and macros (`git archive`), on the same
batch, the two timed alternately `--repeat` times (default 2) in this one Spark session, after
one untimed run of each. It prints the shortest and the median of each and checks that both
give the same rows (in both directions, duplicates counted). Whole `make bench` runs differ by
20-40% from one run to the next on these machines, so a change to one model is judged here.
The models upstream are built from the working tree: give a REF whose upstream models are the
same. With `--write` too (`make bench-profile AGAINST=... WRITE=1`) each run writes the model's
rows into a new Iceberg table instead, so a change to what a model stores (columns, their
encoding) is timed with the Parquet encoding and the commit it costs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from bench import SCHEMA, SIZES, load_batch, queue_batch, say

from qrepl.storage.dbt_runner import dbt_invoke, run_queue_reader
from qrepl.storage.spark import get_spark
from qrepl.storage.warehouse import Warehouse

REPO = Path(__file__).resolve().parents[1]
STEP = re.compile(r"(\w+) as \(")  # a step at depth 0 (checked below); `{#- -#}` may join its first line
# a string literal or a comment (`--` to the end of the line, `/* */` as Spark nests it), in the
# order they start: a comment's apostrophe opens no string, a string's `--` no comment
NOT_CODE = re.compile(r"'(?:[^'\\]|\\.)*'|--[^\n]*|/\*")


def _blank_literals_and_comments(sql: str) -> str:
    """`sql` with every string literal's content and every comment made spaces (same length)."""
    out, at = [], 0
    while (m := NOT_CODE.search(sql, at)) is not None:
        out.append(sql[at : m.start()])
        if m.group() == "/*":
            depth, end = 1, m.end()
            while depth and end < len(sql):
                if sql.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif sql.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
            out.append(" " * (end - m.start()))
            at = end
        else:
            text = m.group()
            out.append("'" + " " * (len(text) - 2) + "'" if text.startswith("'") else " " * len(text))
            at = m.end()
    out.append(sql[at:])
    return "".join(out)


def steps_of(compiled: str) -> tuple[str, list[str]]:
    """The compiled model without its last `select * from final`, and its top-level steps in
    order (an ephemeral model inlined by dbt is one step: the steps inside it are not)."""
    body, _, _ = compiled.rpartition("select * from final")
    if not body:
        raise SystemExit("bench: the compiled model does not end in `select * from final`")
    plain = _blank_literals_and_comments(body)  # their brackets and words are not code
    steps = []
    for m in STEP.finditer(plain):
        before = plain[: m.start()]
        if before.count("(") == before.count(")"):
            steps.append(m.group(1))
    return body, steps


def timed(spark, query: str, into: str | None = None) -> float:
    """Seconds to run `query` whole into Spark's noop sink, or, with `into`, into a new
    Iceberg table of that name (Parquet encoding and an Iceberg commit included)."""
    t0 = time.perf_counter()
    if into:
        spark.sql(f"create or replace table {into} using iceberg tblproperties ('format-version' = '2') as {query}")
    else:
        spark.sql(query).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t0


def run_pre_hooks(spark, target: Path, model: str) -> None:
    """Run the model's pre-hooks in this session, as `dbt run` would before the model: a hook
    may make what the model reads (int_batch_commands' makes the temporary view of the queue
    rows it takes)."""
    manifest = json.loads((target / "manifest.json").read_text())
    node = next(n for n in manifest["nodes"].values() if n["resource_type"] == "model" and n["name"] == model)
    for hook in node["config"].get("pre-hook", []):
        res = dbt_invoke(["compile", "--inline", hook["sql"], "--log-level", "none"], SCHEMA)
        sql = res.result.results[0].node.compiled_code.strip()
        if sql:
            spark.sql(sql)


def compiled_at(ref: str, model: str) -> str:
    """`model` compiled from commit `ref` of this repository (its models and macros), for the
    same schema and batch time as the working tree's compile."""
    from dbt.cli.main import dbtRunner

    tree = Path(tempfile.mkdtemp(prefix="qrepl-profile-ref-"))
    try:
        archive = subprocess.run(["git", "archive", ref], cwd=REPO, check=True, capture_output=True).stdout
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"bench: --against {ref!r}: {e.stderr.decode().strip()}") from None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    saved = os.environ["DBT_TARGET_PATH"]
    os.environ["DBT_TARGET_PATH"] = str(tree / "target")
    try:
        res = dbtRunner().invoke(
            [
                "--quiet",
                "compile",
                "--select",
                model,
                "--log-level",
                "none",
                "--project-dir",
                str(tree),
                "--profiles-dir",
                str(REPO),
            ]
        )
    finally:
        os.environ["DBT_TARGET_PATH"] = saved
    if not res.success:
        raise SystemExit(f"bench: {model} does not compile at {ref}")
    return next((tree / "target").rglob(f"compiled/**/{model}.sql")).read_text()


def compare(spark, model: str, ref: str, here: str, there: str, repeat: int, write: bool = False) -> None:
    """Time the working tree's and REF's model alternately; check both give the same rows
    (with `write`, each run writes a new Iceberg table with CREATE TABLE AS, where dbt appends)."""
    into = f"{SCHEMA}.profile_written" if write else None
    queries = {
        "working tree": steps_of(here)[0] + "select * from final",
        ref: steps_of(there)[0] + "select * from final",
    }
    for name, query in queries.items():
        say(f"  {name}: untimed warm-up {timed(spark, query, into):.1f} s")
    times: dict[str, list[float]] = {name: [] for name in queries}
    for i in range(max(1, repeat)):
        for name, query in queries.items():
            times[name].append(timed(spark, query, into))
            say(f"  round {i + 1}: {name} {times[name][-1]:.1f} s")
    a, b = (spark.sql(q) for q in queries.values())
    if a.columns != b.columns:
        raise SystemExit(f"bench: the two versions of {model} give different columns")
    differing = a.exceptAll(b).count() + b.exceptAll(a).count()
    for name, ts in times.items():
        say(f"{model} at {name}: shortest {min(ts):.1f} s, median {statistics.median(ts):.1f} s")
    ratio = min(times["working tree"]) / min(times[ref])
    say(f"working tree / {ref}: {ratio:.2f} (shortest); rows differing: {differing}")
    if differing:
        raise SystemExit(f"bench: the two versions of {model} give different rows ({differing})")


def main() -> None:
    ap = argparse.ArgumentParser(
        description="Time each step (CTE) of one queue-reader model on a bench batch, "
        "without writing: where the model's time goes."
    )
    ap.add_argument("--model", default="int_batch_commands", help="a model of models/ (default: int_batch_commands)")
    ap.add_argument("--size", choices=list(SIZES), default="100k", help="the bench batch (default: 100k)")
    ap.add_argument(
        "--repeat", type=int, default=2, help="times each step is run; the shortest is printed (default: 2)"
    )
    ap.add_argument(
        "--history",
        type=int,
        default=0,
        metavar="N",
        help="first run the queue reader on a batch of N commands (untimed), so the profiled batch is a "
        "later one: read incrementally from the queue, checked against N earlier commands",
    )
    ap.add_argument(
        "--against",
        metavar="REF",
        help="compare the whole model with the same model at commit REF "
        "(timed alternately, rows checked equal) instead of timing each step",
    )
    ap.add_argument(
        "--write",
        action="store_true",
        help="with --against: time writing the model into an Iceberg "
        "table (Parquet encoding and a commit) instead of running it into Spark's noop sink",
    )
    args = ap.parse_args()
    if args.write and not args.against:
        raise SystemExit("bench: --write times a comparison: give --against REF too")
    if not re.fullmatch(r"\w+", args.model):
        raise SystemExit(f"bench: --model must be a model name, got {args.model!r}")
    if args.against:  # before the batch is loaded: a wrong ref is one line, at once
        if subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"], cwd=REPO, capture_output=True
        ).returncode:
            raise SystemExit(f"bench: --against {args.against!r} is not a commit of this repository")
    target = Path(tempfile.mkdtemp(prefix="qrepl-profile-target-"))
    os.environ["DBT_TARGET_PATH"] = str(target)  # this compile's own target/, not the checkout's
    # compiled_at calls dbt directly (not through dbt_invoke, which sets these for its own call
    # only): the bench's schema, on this process's session
    os.environ["QREPL_SCHEMA"] = SCHEMA
    os.environ.setdefault("QREPL_TARGET", "in_process")
    changes, rows, shape = SIZES[args.size]
    spark = get_spark()
    wh = Warehouse(spark, SCHEMA)
    if args.history:
        say(
            f"[{args.size}] history first: {rows:,} publisher rows and {args.history:,} queued changes, "
            f"run by the queue reader (untimed) ..."
        )
        load_batch(spark, wh, shape, args.history, rows)
        run_queue_reader(SCHEMA)
        say(f"[{args.size}] queueing {changes:,} more changes ({shape}) ...")
        queue_batch(spark, wh, shape, changes, rows, first=args.history)
    else:
        say(f"[{args.size}] loading {rows:,} publisher rows and {changes:,} queued changes ({shape}) ...")
        load_batch(spark, wh, shape, changes, rows)
    if args.against and not os.environ.get("QREPL_BATCH_TIME"):
        os.environ["QREPL_BATCH_TIME"] = "2026-01-01 00:00:00"  # both compiles see one batch time
    say(f"running what {args.model} reads ...")
    dbt_invoke(["run", "--select", f"+{args.model}", "--exclude", args.model], SCHEMA)
    dbt_invoke(["compile", "--select", args.model, "--log-level", "none"], SCHEMA)  # no echo of the SQL
    compiled = next(target.rglob(f"compiled/**/{args.model}.sql"))
    run_pre_hooks(spark, target, args.model)
    if args.against:
        say(f"{args.model}: the working tree against {args.against}, {max(1, args.repeat)} rounds ...")
        compare(
            spark,
            args.model,
            args.against,
            compiled.read_text(),
            compiled_at(args.against, args.model),
            args.repeat,
            args.write,
        )
        return
    body, steps = steps_of(compiled.read_text())
    say(f"{args.model}: {len(steps)} steps; compiled SQL in {compiled}")
    whole = timed(spark, body + "select * from final")
    say(f"  the whole model, untimed warm-up: {whole:.1f} s")
    for step in steps:
        seconds = min(timed(spark, f"{body}select * from {step}") for _ in range(max(1, args.repeat)))
        say(f"  {step:32s} {seconds:6.1f} s")


if __name__ == "__main__":
    main()
