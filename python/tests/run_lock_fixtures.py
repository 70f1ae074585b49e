"""A publication with one queued insert, and another process's run lock on it: shared by the
run-lock tests (`spark/test_run_lock.py`, `spark/test_run_lock_boundary.py`)."""

from __future__ import annotations

import socket
from datetime import datetime

from qrepl.core.publication import publication_from_dict
from qrepl.storage.run_lock import LOCK_TABLE
from qrepl.storage.warehouse import Warehouse

PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "articles": [{"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}],
}


def one_insert_queued(spark, schema: str) -> Warehouse:
    """`schema` made afresh with PUBLICATION, subscriber s1 and its one queued insert."""
    wh = Warehouse(spark, schema)
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.add_subscription("s1")
    wh.append_queue(
        [
            {
                "subscriber": "s1",
                "generation": 0,
                "tran_id": "t1",
                "tran_seq": 1,
                "command_seq": 1,
                "article": "customers",
                "op": "I",
                "row_key": '{"customer_id":1}',
                "old_version": None,
                "new_version": "11111111-0000-4000-8000-000000000001",
                "new_row": '{"customer_id":1,"city":"x"}',
                "old_row": None,
                "enqueued_at": datetime(2026, 1, 1),
            }
        ]
    )
    return wh


def hold_lock(
    wh: Warehouse,
    pid: int = 1,
    *,
    token: str = "0" * 32,
    invocation_id: str = "other",
    lease: int | None = None,
    age_seconds: int = 0,
) -> None:
    """What another process's run holds: the lock table naming it (`qrepl run pid=<pid>` on
    this host), with its lease row as that process wrote it. No lease: a plain dbt run.
    `age_seconds`: how long before the judge's clock it was last renewed (negative: a holder
    whose clock is ahead of the judge's)."""
    wh.spark.sql(
        f"create table {wh.table(LOCK_TABLE)} using iceberg tblproperties ("
        f"'qrepl.holder' = 'qrepl run pid={pid} host={socket.gethostname()}', "
        f"'qrepl.invocation_id' = '{invocation_id}', 'qrepl.acquired_at' = '2026-01-01 00:00:00 UTC') "
        f"as select '{token}' as token, cast(0 as bigint) as renewals, "
        f"current_timestamp() - make_interval(0, 0, 0, 0, 0, 0, {age_seconds}) as renewed_at, "
        f"cast({'null' if lease is None else lease} as int) as lease_seconds"
    )


def batches(wh: Warehouse) -> int:
    """How many runs finished a batch."""
    return len(wh.rows_of("queue_reader_history"))
