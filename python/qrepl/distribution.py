"""Distribution agent: compensating commands to their originating subscriber, publisher
changes to every subscriber, conflicts to the originating subscriber when conflicts are not
centralized. Idempotent: each subscriber's delivered batch is recorded, so delivering twice
changes nothing; within a batch, compensations (the publisher's row as of the rejected
transaction) are applied before the batch's net publisher changes, so an older row image
never overwrites a newer one.
"""

from __future__ import annotations

import json
from typing import Callable

from .capture import ReplicaWarehouse, replica_schema
from .warehouse import Warehouse

DELIVERIES_SCHEMA = "subscriber STRING, batch_id BIGINT"


def _replica(wh: Warehouse, subscriber: str) -> ReplicaWarehouse | None:
    replica = ReplicaWarehouse(wh, replica_schema(wh, subscriber))
    return replica if wh.spark.catalog.databaseExists(replica.schema) else None


def _apply(replica: ReplicaWarehouse, article: str, op: str, row: str | None, row_key: str) -> None:
    """One upsert (row image JSON) or delete (by canonical key) on a replica."""
    if op == "upsert":
        replica.upsert_rows(article, [json.loads(row)])
    else:
        replica.delete_rows(article, [json.loads(row_key)])


def distribute_compensations(wh: Warehouse) -> dict[str, int]:
    """Apply undelivered compensating commands to each subscriber's replica, in order, once."""
    if not wh.exists("compensating_commands"):
        return {}
    spark = wh.spark
    pending = spark.table(wh.table("compensating_commands")).where("delivered_at is null") \
        .orderBy("subscriber", "batch_id", "seq").collect()
    delivered: dict[str, int] = {}
    for c in pending:
        replica = _replica(wh, c.subscriber)
        if replica is None:
            continue
        _apply(replica, c.article, c.op, c.row, c.row_key)
        delivered[c.subscriber] = delivered.get(c.subscriber, 0) + 1
    if pending:
        spark.sql(f"update {wh.table('compensating_commands')} set delivered_at = current_timestamp() "
                  f"where delivered_at is null")
    return delivered


def distribute(wh: Warehouse, progress: Callable[[str], None] = lambda _: None) -> dict[str, dict[str, int]]:
    """Deliver everything pending to every active subscriber; returns counts per subscriber."""
    spark = wh.spark
    pub = wh.require_publication()
    if not wh.exists("subscription_deliveries"):
        spark.sql(f"create table {wh.table('subscription_deliveries')} ({DELIVERIES_SCHEMA}) using iceberg")
    report: dict[str, dict[str, int]] = {}
    compensations = distribute_compensations(wh)
    last = {r.subscriber: r.batch_id for r in spark.table(wh.table("subscription_deliveries")).collect()}
    has_changes = wh.exists("publisher_changes")
    newest = 0
    if wh.exists("queue_reader_history"):
        newest = spark.table(wh.table("queue_reader_history")).agg({"batch_id": "max"}).collect()[0][0] or 0
    for sub in wh.subscriptions():
        name = sub["subscriber"]
        counts = {"compensations": compensations.get(name, 0), "publisher_changes": 0, "conflicts": 0}
        replica = _replica(wh, name)
        if replica is None or sub["status"] != "active":
            report[name] = counts
            continue
        since = last.get(name, 0)
        progress(f"{name}: batches {since + 1}..{newest}")
        if has_changes:
            all_changes = spark.table(wh.table("publisher_changes"))
            changes = all_changes.where(all_changes.batch_id > int(since)).orderBy("batch_id").collect()
            for ch in changes:
                _apply(replica, ch.article, ch.change_op, ch.row, ch.row_key)
            counts["publisher_changes"] = len(changes)
        if not pub.centralized_conflicts and wh.exists("conflicts"):
            all_conflicts = spark.table(wh.table("conflicts"))
            conflicts = all_conflicts.where((all_conflicts.subscriber == name) & (all_conflicts.batch_id > int(since)))
            target = replica.table("conflicts")
            if not spark.catalog.tableExists(target):
                conflicts.limit(0).writeTo(target).using("iceberg").create()
            conflicts.writeTo(target).append()
            counts["conflicts"] = conflicts.count()
        if newest > since:
            spark.createDataFrame([(name, newest)], DELIVERIES_SCHEMA).createOrReplaceTempView("qrepl_delivered")
            spark.sql(f"merge into {wh.table('subscription_deliveries')} t using qrepl_delivered s "
                      f"on t.subscriber = s.subscriber when matched then update set t.batch_id = s.batch_id "
                      f"when not matched then insert *")
        report[name] = counts
    return report


def reinitialize(wh: Warehouse, subscriber: str) -> int:
    """Deliver a fresh snapshot: replica replaced by the publisher's rows, status active,
    generation + 1 (queued rows of the older generation will be rejected_reinit)."""
    from .capture import Replica

    sub = wh.subscription(subscriber)
    if sub is None:
        from .model import ConfigError

        raise ConfigError(f"no subscription for subscriber {subscriber}")
    Replica(wh, subscriber).snapshot_from_publisher()
    generation = sub["generation"] + 1
    wh.update_subscription(subscriber, "active", generation, None, None)
    return generation
