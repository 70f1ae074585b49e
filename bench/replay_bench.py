"""`make bench-replay`: `qrepl replay` of a scenario of N one-command transactions, each its own
`enqueue` step (the shape of a long offline session), against the same scenario on the
sequential reference, side by side in one process.

Prints the wall time of each, the time the Spark replay spent before its queue-reader run
(loading the publisher and enqueueing), and checks that both wrote the same outputs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from qrepl.tools import replay as replay_module


def scenario(transactions: int) -> dict:
    """N customers, N single-row updates by 3 subscribers (every 10th with a stale version)."""
    rows = [
        {
            "customer_id": i,
            "name": f"c{i}",
            "city": "London",
            "msrepl_tran_version": f"00000000-0000-4000-8000-{i:012d}",
        }
        for i in range(1, transactions + 1)
    ]
    steps: list[dict] = [{"publisher_rows": {"customers": rows}}]
    for i in range(1, transactions + 1):
        stale = i % 10 == 0
        old = f"00000000-0000-4000-9000-{i:012d}" if stale else f"00000000-0000-4000-8000-{i:012d}"
        steps.append(
            {
                "enqueue": [
                    {
                        "subscriber": f"s{i % 3 + 1}",
                        "tran_id": f"t{i}",
                        "commands": [
                            {
                                "article": "customers",
                                "op": "U",
                                "row": {"customer_id": i, "name": f"c{i}", "city": "Paris"},
                                "old_version": old,
                                "new_version": f"10000000-0000-4000-8000-{i:012d}",
                            }
                        ],
                    }
                ]
            }
        )
    steps.append({"run": {}})
    return {
        "publication": "sales",
        "policy": "publisher_wins",
        "articles": [
            {
                "name": "customers",
                "key": ["customer_id"],
                "columns": {"customer_id": "int", "name": "string", "city": "string"},
            }
        ],
        "subscribers": ["s1", "s2", "s3"],
        "steps": steps,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transactions", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="qrepl-replay-bench-") as tmp:
        path = Path(tmp) / "offline_session.json"
        path.write_text(json.dumps(scenario(args.transactions)))
        started = time.perf_counter()
        list(replay_module.replay([path], Path(tmp) / "ref", reference=True))
        reference_s = time.perf_counter() - started

        from qrepl.storage import dbt_runner

        before_run: list[float] = []
        real_run = dbt_runner.run_queue_reader

        def timed_run(*a, **kw):
            before_run.append(time.perf_counter() - started)
            return real_run(*a, **kw)

        dbt_runner.run_queue_reader = timed_run
        started = time.perf_counter()
        list(replay_module.replay([path], Path(tmp) / "spark", progress=print))
        spark_s = time.perf_counter() - started
        same = all(
            (Path(tmp) / "ref" / p.relative_to(Path(tmp) / "spark")).read_text() == p.read_text()
            for p in (Path(tmp) / "spark").rglob("*")
            if p.is_file()
        )
    print(f"\nreplay of {args.transactions:,} one-command transactions, each its own enqueue step")
    print("| replay | wall time | before the queue-reader run |")
    print("|---|---:|---:|")
    print(f"| sequential reference (pure Python) | {reference_s:.1f} s | |")
    print(
        f"| Spark + dbt | {spark_s:.1f} s | {before_run[0]:.1f} s |"
        if before_run
        else f"| Spark + dbt | {spark_s:.1f} s | (no run) |"
    )
    print(f"outputs equal: {same}")
    if not same:
        raise SystemExit("the Spark replay's outputs differ from the reference's")


if __name__ == "__main__":
    main()
