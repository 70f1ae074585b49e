"""Distribution agent, first cut: compensating commands to their originating subscriber."""

from __future__ import annotations

import json

from .capture import ReplicaWarehouse, replica_schema
from .warehouse import Warehouse


def distribute_compensations(wh: Warehouse) -> dict[str, int]:
    """Apply undelivered compensating commands to each subscriber's replica, in order, once."""
    if not wh.exists("compensating_commands"):
        return {}
    spark = wh.spark
    pending = spark.table(wh.table("compensating_commands")).where("delivered_at is null") \
        .orderBy("subscriber", "batch_id", "seq").collect()
    delivered: dict[str, int] = {}
    for c in pending:
        replica = ReplicaWarehouse(wh, replica_schema(wh, c.subscriber))
        if not spark.catalog.databaseExists(replica.schema):
            continue
        if c.op == "upsert":
            replica.upsert_rows(c.article, [json.loads(c.row)])
        else:
            replica.delete_rows(c.article, [json.loads(c.row_key)])
        delivered[c.subscriber] = delivered.get(c.subscriber, 0) + 1
    if pending:
        spark.sql(f"update {wh.table('compensating_commands')} set delivered_at = current_timestamp() "
                  f"where delivered_at is null")
    return delivered
