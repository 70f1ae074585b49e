"""`make partition-check`: partitions that do not overlap never conflict (docs/spec.md §11).

Two subscribers, north and south, each queue N one-row updates against one publisher of 2N
orders (N per region), through the real pipeline (Spark + dbt, one queue-reader run) and the
sequential reference, twice with the same generator and seed:

* partitioned: each subscriber holds its region's rows (`region = 'north'` / `'south'`) and
  updates N distinct rows of its own replica: zero conflicts;
* unpartitioned: each holds every row and updates N distinct rows of all 2N: the rows both
  picked meet in conflicts, exactly as many as the reference predicts.

Prints the counts and the time of each replay, and fails unless Spark + dbt equals the
reference on every output both times.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, play, scenario_from_dict

REGIONS = ("north", "south")


def version(kind: int, n: int) -> str:
    return f"{kind:08d}-0000-4000-8000-{n:012d}"


def workload(transactions: int, partitioned: bool, seed: int = 7) -> dict:
    """The scenario: 2N orders, N per region; each subscriber N one-row updates of distinct rows
    it holds (its region's when partitioned, any otherwise), in one queue append."""
    rng = random.Random(seed)
    rows = [
        {"order_id": i, "region": REGIONS[i % 2], "qty": 1, "msrepl_tran_version": version(0, i)}
        for i in range(2 * transactions)
    ]
    trans = []
    for s, region in enumerate(REGIONS, 1):
        held = [r for r in rows if not partitioned or r["region"] == region]
        for n, row in enumerate(rng.sample(held, transactions)):
            command = {
                "article": "orders",
                "op": "U",
                "row": {"order_id": row["order_id"], "region": row["region"], "qty": n + 2},
                "old_version": row["msrepl_tran_version"],
                "new_version": version(s, n),
            }
            trans.append({"subscriber": region, "tran_id": f"{region}-{n}", "commands": [command]})
    rng.shuffle(trans)  # the two subscribers' transactions reach the queue interleaved
    return {
        "publication": "sales",
        "policy": "publisher_wins",
        "articles": [
            {"name": "orders", "key": ["order_id"], "columns": {"order_id": "int", "region": "string", "qty": "int"}}
        ],
        "subscribers": list(REGIONS),
        "filters": {r: {"orders": f"region = '{r}'"} for r in REGIONS} if partitioned else {},
        "steps": [{"publisher_rows": {"orders": rows}}, {"enqueue": trans}, {"run": {}}],
    }


def replay_both(data: dict) -> tuple[dict, dict, float, float]:
    """(Spark + dbt outputs, reference outputs, seconds of each)."""
    scenario = scenario_from_dict(data, "partition_check")
    started = time.monotonic()
    expected = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    reference_s = time.monotonic() - started
    started = time.monotonic()
    actual = normalized_outputs(scenario, play(scenario, SparkBackend(scenario)))
    return actual, expected, time.monotonic() - started, reference_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=10_000, help="per subscriber (default 10000)")
    args = parser.parse_args()
    ok = True
    for partitioned in (True, False):
        label = "partitioned" if partitioned else "unpartitioned"
        print(f"{label}: {2 * args.transactions} transactions queued, replaying ...", flush=True)
        actual, expected, spark_s, reference_s = replay_both(workload(args.transactions, partitioned))
        outcomes = {}
        for o in actual["transaction_outcomes"]:
            outcomes[o["outcome"]] = outcomes.get(o["outcome"], 0) + 1
        same = actual == expected
        ok &= same
        print(
            f"{label}: {len(actual['conflicts'])} conflicts (reference: {len(expected['conflicts'])}), "
            f"outcomes {outcomes}, Spark + dbt {'equals' if same else 'DIFFERS FROM'} the reference; "
            f"Spark + dbt {spark_s:.0f} s, reference {reference_s:.0f} s",
            flush=True,
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
