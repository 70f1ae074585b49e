"""`make bench-writes`: what one queue-reader run writes, table by table.

    QREPL_STATE_DIR=.qrepl_state/bench-writes .venv/bin/python bench/run_writes.py [--changes N] [--rows N]

Loads the typical batch of `make bench` (transactions of 1-3 commands from 4 subscribers, 10%
with a stale version, 10% inserts, 10% deletes) over a fresh publication and runs the queue
reader on it, then on a second batch of the same size drawn over other rows (the next batch,
as a reader scheduled every few minutes meets it). For each run it reads back from Iceberg's
own metadata (each table's `snapshots`) every commit the run made: per table the commits,
the data rows added and the position deletes added. It prints each run's dbt nodes, its
Iceberg commits, and the rows written per queued change, the figures the rebuild of the
reader is judged by (docs/performance.md, "What a run writes"). The first run of a
publication creates every table, empty ones too; the next batch is the steady state.

Counts, not times: they do not depend on the machine, so this may run beside other work. The
run lock (`qrepl_run_lock`) is created and dropped by the run and is not in the table: one
commit (its CREATE TABLE AS SELECT) plus one per lease renewal, none in a short run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import SCHEMA, load_batch, queue_batch  # noqa: E402  (the bench's own batch and publication)
from qrepl.storage.dbt_runner import run_queue_reader  # noqa: E402
from qrepl.storage.spark import get_spark  # noqa: E402
from qrepl.storage.warehouse import Warehouse  # noqa: E402

COPIES = ("items_merge", "items_fold")  # the bench's comparison copies: never written by a run


def run_writes(spark, since) -> list[tuple[str, int, int, int]]:
    """(table, commits, data rows added, position deletes added) for every table of the schema
    committed to since `since` (a timestamp's text in the session's time zone), largest first."""
    out = []
    for table in spark.catalog.listTables(SCHEMA):
        if table.isTemporary or table.tableType == "VIEW" or table.name in COPIES:
            continue  # a view (the marts derived from the batch log) commits nothing
        # every table of a qrepl schema is an Iceberg table: one that is not fails here, loudly
        snaps = spark.sql(f"""
            select count(*) as commits,
                coalesce(sum(cast(summary['added-records'] as bigint)), 0) as rows_added,
                coalesce(sum(cast(summary['added-position-deletes'] as bigint)), 0) as deletes_added
            from {SCHEMA}.{table.name}.snapshots where committed_at >= timestamp'{since}'
        """).first()
        if snaps.commits:
            out.append((table.name, snaps.commits, snaps.rows_added, snaps.deletes_added))
    return sorted(out, key=lambda t: (-t[2], t[0]))


def main() -> None:
    ap = argparse.ArgumentParser(
        description="What one queue-reader run writes: its dbt nodes, its Iceberg "
        "commits per table, and the rows written per queued change."
    )
    ap.add_argument("--changes", type=int, default=10_000, help="queued changes in the batch (default 10,000)")
    ap.add_argument("--rows", type=int, default=100_000, help="rows of the publication (default 100,000)")
    args = ap.parse_args()
    spark = get_spark()
    wh = Warehouse(spark, SCHEMA)
    print(f"loading {args.rows:,} publisher rows and {args.changes:,} queued changes ...", flush=True)
    load_batch(spark, wh, "typical", args.changes, args.rows)
    report(spark, "the publication's first run (it creates every table)", args.changes)
    print(f"\nqueueing the next {args.changes:,} changes ...", flush=True)
    queue_batch(spark, wh, "typical", args.changes, args.rows, first=10 * args.changes)
    report(spark, "the next batch", args.changes)


def report(spark, title: str, changes: int) -> None:
    """Run the queue reader once and print what it wrote."""
    # as text in the session's time zone, read back in it: no trip through the driver's clock zone
    since = spark.sql("select cast(current_timestamp() as string)").first()[0]
    print(f"queue reader: {title} ...", flush=True)
    res = run_queue_reader(SCHEMA)
    nodes = [r.node.name for r in res.result.results]
    writes = run_writes(spark, since)
    commits = sum(w[1] for w in writes)
    rows = sum(w[2] for w in writes)
    publisher = sum(w[2] for w in writes if w[0] == "items")
    print(f"\n{title}:\n\n| table | commits | data rows added | position deletes added |\n|---|---:|---:|---:|")
    for table, n, added, deletes in writes:
        print(f"| `{table}` | {n} | {added:,} | {deletes:,} |")
    print(f"| all | {commits} | {rows:,} | {sum(w[3] for w in writes):,} |")
    print(
        f"\n{len(nodes)} dbt nodes ({', '.join(nodes)}); {commits} Iceberg commits on {len(writes)} tables; "
        f"{rows / changes:.2f} rows written per queued change "
        f"({(rows - publisher) / changes:.2f} outside the publisher's table)"
    )


if __name__ == "__main__":
    main()
