"""`make bench-stamp`: the publisher's trigger (macros/stamp/qrepl_stamp_publisher.sql) on a
large publisher table, beside the queue reader's run and a bare MERGE, in one Spark session.

Measured, each on the same table of --rows rows:
* the stamp with no commit since the last one (an idle publisher);
* the stamp after a queue-reader batch of --changes updates (its own writes: the batch recorded
  its MERGE as examined, macro qrepl_stamp_own_merge, so there is nothing to read);
* the stamp after --changes plain SQL UPDATEs that set no version (an outside writer), with
  the rows it stamped counted and checked;
* a queue-reader run of --changes updates, and a bare Iceberg MERGE of --changes rows, for scale.
Prints a markdown table; with --markdown, writes it there too.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timedelta
from pathlib import Path

SCHEMA = "qrepl_stamp_bench"


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--changes", type=int, default=1_000)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()

    from qrepl.storage.dbt_runner import dbt_invoke, run_queue_reader, stamp_publisher
    from qrepl.core.publication import publication_from_dict
    from qrepl.tools.replay import Scenario, queue_rows_for
    from qrepl.storage.spark import get_spark
    from qrepl.storage.warehouse import Warehouse

    spark = get_spark()
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    pub = publication_from_dict(
        {
            "publication": "bench",
            "articles": [
                {
                    "name": "customers",
                    "key": ["customer_id"],
                    "columns": {"customer_id": "int", "name": "string", "city": "string"},
                }
            ],
        }
    )
    wh.write_publication(pub)
    wh.add_subscriptions(["s1"])
    table = wh.table("customers")
    print(f"loading {args.rows:,} rows", flush=True)
    spark.sql(f"insert into {table} select cast(id as int), concat('c', id), 'London', uuid() from range({args.rows})")
    print("first stamp (the table's rows all hold versions: nothing to stamp)", flush=True)
    first = timed(lambda: stamp_publisher(wh))
    idle = timed(lambda: stamp_publisher(wh))
    # the run-operation itself (dbt's start, the macro's metadata reads), nothing committed since
    overhead = timed(lambda: dbt_invoke(["run-operation", "qrepl_stamp_publisher"], SCHEMA))

    # a queue-reader batch of updates to rows spread over the table
    step = max(args.rows // args.changes, 1)
    ids = [i * step for i in range(args.changes)]
    versions = {
        r.customer_id: r.msrepl_tran_version
        for r in spark.sql(
            f"select customer_id, msrepl_tran_version from {table} where customer_id % {step} = 0 "
            f"and customer_id < {args.changes * step}"
        ).collect()
    }
    scenario = Scenario("bench", pub, ["s1"], [])
    transactions = [
        {
            "subscriber": "s1",
            "tran_id": f"t{i}",
            "commands": [
                {
                    "article": "customers",
                    "op": "U",
                    "row": {"customer_id": i, "name": f"c{i}", "city": "Paris"},
                    "old_version": versions[i],
                    "new_version": f"10000000-0000-4000-8000-{i:012d}",
                }
            ],
        }
        for i in ids
    ]
    wh.append_queue(queue_rows_for(scenario, transactions, datetime(2026, 1, 1), {}, lambda s: 0))
    run = timed(lambda: run_queue_reader(SCHEMA, datetime(2026, 1, 1) + timedelta(minutes=1)))
    after_reader = timed(lambda: stamp_publisher(wh))

    # an outside writer: plain UPDATEs that set no version
    spark.sql(
        f"update {table} set city = 'Rome' where customer_id % {step} = 1 and customer_id < {args.changes * step}"
    )
    before = spark.sql(f"select count(*) from {table} where city = 'Rome'").first()[0]
    after_foreign = timed(lambda: stamp_publisher(wh))
    stamped = spark.sql(
        f"select stamped_rows from {wh.table('publisher_stamps')} order by stamp_seq desc limit 1"
    ).first()[0]
    assert stamped == before, f"stamped {stamped} rows, the outside writer changed {before}"

    # a bare MERGE of as many rows, for scale
    spark.sql(
        f"create or replace temporary view bench_src as select cast(id * {step} + 2 as int) as customer_id, "
        f"'Oslo' as city, uuid() as v from range({args.changes})"
    )
    merge = timed(
        lambda: spark.sql(
            f"merge into {table} t using bench_src s on t.customer_id = s.customer_id "
            f"when matched then update set t.city = s.city, t.msrepl_tran_version = s.v"
        )
    )
    lines = [
        f"| step, on {args.rows:,} publisher rows | seconds |",
        "|---|---:|",
        f"| stamp, first (every row checked for a missing version) | {first:.1f} |",
        f"| stamp, nothing committed since the last one (a metadata check; dbt is not started) | {idle:.1f} |",
        f"| `dbt run-operation qrepl_stamp_publisher` with nothing to examine (dbt's own start) | {overhead:.1f} |",
        f"| stamp, after a queue-reader batch of {args.changes:,} updates (the batch recorded its own MERGE) | {after_reader:.1f} |",
        f"| stamp, after {args.changes:,} outside UPDATEs without a version ({stamped:,} rows stamped) | {after_foreign:.1f} |",
        f"| the queue-reader run of that batch (stamp included) | {run:.1f} |",
        f"| a bare Iceberg MERGE of {args.changes:,} rows | {merge:.1f} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(f"# `make bench-stamp`, {datetime.now():%Y-%m-%d %H:%M}\n\n{text}")


if __name__ == "__main__":
    main()
