"""qrepl's half of test_rest_pyiceberg_writer.py, one process (one JVM) on the REST catalog the
environment names: publishes in place the table pyiceberg created (`qrepl publication
describe`'s declaration, `qrepl publication create`), `qrepl subscription add s1`, captures one
transaction per row, prints CAPTURED and waits for a line on stdin (pyiceberg writes then, in
the test's process), then `qrepl run` and `qrepl distribute`; prints one JSON line of what the
run decided. The rows themselves the test reads with pyiceberg."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import yaml

SCHEMA = "qrepl_pyiceberg"
TABLE = "orders"


def cli(*args: str) -> None:
    from qrepl.cli.app import main

    main([*args, "--schema", SCHEMA], standalone_mode=False)


def main(work: Path) -> None:
    from qrepl.services.capture import Subscriber
    from qrepl.services.publication import describe_table
    from qrepl.storage.spark import get_spark, stop_spark
    from qrepl.storage.warehouse import Warehouse

    declared = yaml.safe_load(describe_table(f"{SCHEMA}.{TABLE}", ["order_id"], SCHEMA))
    config = work / "orders.yml"
    config.write_text(yaml.safe_dump({"publication": "orders", "policy": "publisher_wins", "articles": declared}))
    cli("publication", "create", "--config", str(config))
    cli("subscription", "add", "s1")
    s1 = Subscriber(SCHEMA, "s1")
    changes = {
        "t1": ("update", 1, {"customer": "s1 on 1"}),  # pyiceberg upserts row 1 (keeping its version)
        "t2": ("update", 2, {"amount": Decimal("2.22")}),  # pyiceberg deletes row 2
        "t3": ("delete", 3, None),  # pyiceberg overwrites row 3 (no version)
        "t4": (
            "update",
            4,
            {
                "customer": "Søren 🚲 s1",
                "amount": Decimal("-9876543210.01"),
                "placed_at": datetime(2026, 2, 3, 4, 5, 6, 7),
                "paid_at": datetime(2026, 2, 3, 4, 5, 6, 700001, tzinfo=timezone.utc),
            },
        ),  # pyiceberg leaves rows 4 and 5 alone (partition south)
        "t7": ("update", 7, {"customer": "s1 on 7"}),  # nor 7, but its file (north) it rewrites
        "t6": (
            "insert",
            6,
            {
                "region": "north",
                "customer": "s1 inserts 6",
                "amount": Decimal("6.00"),
                "placed_at": None,
                "paid_at": None,
            },
        ),  # pyiceberg appends row 6 (no version)
    }
    for tran_id, (op, key, values) in changes.items():
        with s1.transaction(tran_id) as t:
            if op == "update":
                t.update(TABLE, {"order_id": key}, values)
            elif op == "delete":
                t.delete(TABLE, {"order_id": key})
            else:
                t.insert(TABLE, {"order_id": key, **values})
    print("CAPTURED", flush=True)
    sys.stdin.readline()  # the test's pyiceberg writes are done
    cli("run")
    cli("distribute")
    wh = Warehouse(get_spark(), SCHEMA)
    history = wh.rows_of("queue_reader_history", "batch_id")[-1]
    result = {
        "declared": declared,
        "history": {k: history[k] for k in ("transactions_processed", "conflicts", "rejected")},
        "outcomes": {o["tran_id"]: o["outcome"] for o in wh.rows_of("transaction_outcomes", "tran_pos")},
        "conflicts": {
            c["tran_id"]: {k: c[k] for k in ("conflict_type", "winner", "row_key", "publisher_version")}
            for c in wh.rows_of("conflicts", "subscriber,tran_id,command_seq")
        },
        "compensations": sorted(
            (c["tran_id"], c["op"], c["row_key"]) for c in wh.rows_of("compensating_commands", "tran_id")
        ),
    }
    stop_spark()
    print("RESULT " + json.dumps(result, sort_keys=True, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
