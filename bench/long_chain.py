"""One row updated N times in one batch vs N rows updated once, side by side in one Spark session.

    QREPL_STATE_DIR=/tmp/qrepl-bench .venv/bin/python bench/long_chain.py --updates 10000

Both queues hold N single-command transactions of one subscriber. In the first, every update
expects the version the previous one wrote (a chain of length N on one row); in the second,
each update touches its own row (N chains of length 1). Prints each run's time, the
resolution's passes and pointer-doubling steps, and the ratio: the chain must cost
log2(N) doubling steps, not N passes.
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


def version(expr: str) -> str:
    return f"concat('00000000-0000-4000-8000-', lpad(cast({expr} as string), 12, '0'))"


def prepare(spark, schema: str, updates: int, chain: bool) -> Warehouse:
    wh = Warehouse(spark, schema)
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUB))
    wh.add_subscription("s0")
    rows = 1 if chain else updates
    spark.sql(f"insert into {wh.table('items')} select cast(id as int), 0, {version('id')} from range({rows})")
    key = "0" if chain else "id"
    old = version("id")  # the chain's update i expects what update i - 1 wrote
    new = version("id + 1") if chain else version(f"id + {updates}")
    now = datetime(2026, 1, 1)
    spark.sql(f"""
        select 's0' as subscriber, 0 as generation, concat('t', cast(id as string)) as tran_id,
            id + 1 as tran_seq, 1 as command_seq, 'items' as article, 'U' as op,
            concat('{{"item_id":', cast({key} as string), '}}') as row_key,
            {old} as old_version, {new} as new_version,
            concat('{{"item_id":', cast({key} as string), ',"qty":', cast(id as string), '}}') as new_row,
            cast(null as string) as old_row,
            timestamp'{now:%Y-%m-%d %H:%M:%S}' + make_interval(0, 0, 0, 0, 0, 0, id / 1000000.0) as enqueued_at
        from range({updates})
    """).writeTo(wh.table("replication_queue")).append()
    return wh


def run(wh: Warehouse) -> tuple[float, str, int]:
    notes: list[str] = []
    t0 = time.perf_counter()
    run_queue_reader(wh.schema, progress=lambda line: notes.append(line.strip()))
    elapsed = time.perf_counter() - t0
    resolved = next((n for n in notes if "resolved in" in n), "resolution: not logged")
    applied = wh.spark.table(wh.table("transaction_outcomes")).where("outcome = 'applied'").count()
    return elapsed, resolved, applied


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--updates", type=int, default=10_000)
    args = ap.parse_args()
    spark = get_spark()
    print(f"queueing {args.updates} updates of one row, and {args.updates} updates of as many rows ...", flush=True)
    chain = prepare(spark, "qrepl_bench_chain", args.updates, chain=True)
    flat = prepare(spark, "qrepl_bench_flat", args.updates, chain=False)
    chain_s, chain_note, chain_applied = run(chain)
    flat_s, flat_note, flat_applied = run(flat)
    final = chain.spark.table(chain.table("items")).collect()[0]
    assert chain_applied == args.updates and flat_applied == args.updates, (chain_applied, flat_applied)
    assert final.msrepl_tran_version.endswith(f"{args.updates:012d}"), final
    print(f"one row, chain of {args.updates}: {chain_s:.1f} s ({chain_note})")
    print(f"{args.updates} rows, chains of 1: {flat_s:.1f} s ({flat_note})")
    print(f"ratio chain / flat: {chain_s / flat_s:.2f}x; all {args.updates} updates applied in both, "
          f"the row ends at the chain's last version")


if __name__ == "__main__":
    main()
