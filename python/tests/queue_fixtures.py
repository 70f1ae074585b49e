"""A one-article publication on Spark for tests that drive the queue reader run by run: its
customers article with a few publisher rows, one subscriber, the single-command updates it
queues, and the snapshot a table stands at, and what the latest run decided (shared by test_queue_read,
test_idle_run and test_replay_spark)."""

from __future__ import annotations

import json
from datetime import datetime

from qrepl.core.model import publication_from_dict
from qrepl.storage.warehouse import Warehouse

CUSTOMERS = {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}
V = "00000000-0000-4000-8000-{:012d}".format


def queued_update(seq: int, key: int, old: str, new: str) -> dict:
    """Subscriber s1's transaction t<seq>: one update of customer <key> from version `old` to `new`."""
    return {
        "subscriber": "s1",
        "generation": 0,
        "tran_id": f"t{seq}",
        "tran_seq": seq,
        "command_seq": 1,
        "article": "customers",
        "op": "U",
        "row_key": f'{{"customer_id":{key}}}',
        "old_version": old,
        "new_version": new,
        "new_row": f'{{"customer_id":{key},"city":"city {seq}"}}',
        "old_row": None,
        "enqueued_at": datetime(2026, 1, 1, 0, 0, seq),
    }


def customers_publication(spark, schema: str, publication: dict, customers: int) -> Warehouse:
    """`schema` made afresh with `publication`, subscriber s1, and customers 1..`customers`
    at the publisher (city 'home k', version V(k))."""
    wh = Warehouse(spark, schema)
    wh.drop_schema()
    wh.write_publication(publication_from_dict(publication))
    wh.add_subscription("s1")
    spark.createDataFrame(
        [(k, f"home {k}", V(k)) for k in range(1, customers + 1)],
        "customer_id INT, city STRING, msrepl_tran_version STRING",
    ).writeTo(wh.table("customers")).append()
    return wh


def current_snapshot(wh: Warehouse, table: str) -> int:
    return wh.spark.sql(f"select snapshot_id from {wh.table(table)}.refs where name = 'main'").first()[0]


def latest_decisions(wh: Warehouse) -> dict:
    """What the latest run decided at run time (queue_reader_history.decisions)."""
    return json.loads(max(wh.rows_of("queue_reader_history"), key=lambda h: h["batch_id"])["decisions"])
