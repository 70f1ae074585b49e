"""Queue reader vs a bare Iceberg MERGE of the same changes, side by side in one Spark session.

    QREPL_STATE_DIR=/tmp/qrepl-bench .venv/bin/python bench/queue_reader_vs_merge.py --rows 100000 --changes 10000

Prints both timings and their ratio: what conflict detection, resolution and logging cost on
top of applying the changes.
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime

from qrepl.dbt_runner import run_queue_reader
from qrepl.model import publication_from_dict
from qrepl.spark import get_spark
from qrepl.warehouse import Warehouse

PUB = {"publication": "bench", "policy": "publisher_wins",
       "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int"}}]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--changes", type=int, default=10_000)
    ap.add_argument("--subscribers", type=int, default=4)
    ap.add_argument("--conflict-every", type=int, default=10, help="every Nth change carries a stale version")
    args = ap.parse_args()
    spark = get_spark()
    wh = Warehouse(spark, "qrepl_bench")
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUB))
    for s in range(args.subscribers):
        wh.add_subscription(f"s{s}")
    print(f"loading {args.rows} publisher rows and {args.changes} queued changes ...", flush=True)
    spark.sql(f"insert into {wh.table('items')} select cast(id as int), 0, "
              f"concat('00000000-0000-4000-8000-', lpad(cast(id as string), 12, '0')) from range({args.rows})")
    now = datetime(2026, 1, 1)
    changes = spark.sql(f"""
        select concat('s', cast(id % {args.subscribers} as string)) as subscriber, 0 as generation,
            concat('t', cast(id as string)) as tran_id, id as tran_seq, 1 as command_seq,
            'items' as article, 'U' as op,
            concat('{{"item_id":', cast(id * 7 % {args.rows} as string), '}}') as row_key,
            case when id % {args.conflict_every} = 0 then concat('ffffffff-0000-4000-8000-', lpad(cast(id as string), 12, '0'))
                else concat('00000000-0000-4000-8000-', lpad(cast(id * 7 % {args.rows} as string), 12, '0')) end
                as old_version,
            uuid() as new_version,
            concat('{{"item_id":', cast(id * 7 % {args.rows} as string), ',"qty":1}}') as new_row,
            cast(null as string) as old_row,
            timestamp'{now:%Y-%m-%d %H:%M:%S}' + make_interval(0, 0, 0, 0, 0, 0, id / 1000000.0) as enqueued_at
        from range({args.changes})
    """)
    changes.writeTo(wh.table("replication_queue")).append()
    spark.sql(f"create table {wh.schema}.items_copy using iceberg tblproperties ('format-version'='2', "
              f"'write.merge.mode'='merge-on-read') as select * from {wh.table('items')}")

    t0 = time.perf_counter()
    spark.sql(f"""
        merge into {wh.schema}.items_copy as target
        using (select from_json(new_row, 'item_id INT, qty INT') as r, new_version
               from {wh.table('replication_queue')}) as source
        on target.item_id = source.r.item_id
        when matched then update set target.qty = source.r.qty, target.msrepl_tran_version = source.new_version
    """)
    merge_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    run_queue_reader(wh.schema)
    reader_s = time.perf_counter() - t0
    h = spark.table(wh.table("queue_reader_history")).collect()[-1]
    print(f"bare MERGE of {args.changes} changes into {args.rows} rows: {merge_s:.1f} s")
    print(f"queue reader (dbt run, {h.transactions_processed} transactions, {h.conflicts} conflicts): {reader_s:.1f} s")
    print(f"ratio queue reader / bare MERGE: {reader_s / merge_s:.1f}x")


if __name__ == "__main__":
    main()
