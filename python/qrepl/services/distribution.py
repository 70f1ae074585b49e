"""Distribution agent: brings every active subscriber's replica up to the publisher.

Iceberg snapshots are the publisher's log. For each subscriber and article we keep the
publisher snapshot its replica reflects (`subscription_deliveries`); a delivery reads the
rows that differ between that snapshot and the current one — whoever wrote them: the queue
reader's MERGE of other subscribers' transactions or a publisher-local job — plus the rows of
the subscriber's pending compensating commands, and merges the publisher's *current* row (or
a delete) for each of them into the replica in one MERGE per article. So:

* a subscriber only ever receives its own compensating commands, and a compensated row ends
  equal to the publisher's newest row: an older row image never overwrites a newer one;
* rows the publisher did not change since the last delivery are left alone, so a replica's
  still-queued local changes stay visible to its subscriber;
* delivering twice changes nothing (the second delivery finds no difference).

Conflicts are delivered to their originating subscriber too when the publication's conflicts
are not centralized. Reinitialization replaces a replica with the publisher's current
snapshot. Snapshots that distribution still needs must not be expired.
"""

from __future__ import annotations

from ..core.filter_meaning import spark_sql
from ..core.modes import REINITIALIZING
from ..core.partitions import Partition
from ..core.vocabulary import ConfigError, Progress, check_identifier
from ..storage.replica import (
    deliveries,
    mark_compensations_delivered,
    pending_compensations,
    record_delivery,
    replica_schema,
    retry_on_commit_conflict,
    snapshot_replica,
    table_at,
)
from ..storage.dbt_runner import stamp_publisher
from ..storage.tables import CONFLICT_DELIVERIES_SCHEMA
from ..storage.open import warehouse
from ..storage.warehouse import JSON_OPTIONS, Warehouse


def _deliver_article(
    wh: Warehouse,
    subscriber: str,
    article_name: str,
    since: int | None,
    now: int | None,
    pending_keys,
    partition: Partition | None = None,
    taken: tuple[str, ...] | None = None,
) -> int:
    """Merge into the replica the publisher's current row for every row changed between the
    two snapshots or named by a pending compensating command; returns the rows merged. With a
    row filter on the article (docs/spec.md §11) the replica holds only the rows it meets: a
    changed row that now meets it is delivered, one that no longer does is deleted. With a
    column filter (`taken`) the replica holds those columns and the row's version, which moves
    with a change to any column."""
    from pyspark.sql import functions as F

    article = wh.article(article_name)
    every = list(article.columns) + ["msrepl_tran_version"]
    cols = list(taken or article.columns) + ["msrepl_tran_version"]
    changes = F.md5(F.to_json(F.struct(*every), JSON_OPTIONS))  # microseconds: a change of one is a change
    image = F.md5(F.to_json(F.struct(*cols), JSON_OPTIONS))  # the row as the replica holds it
    before = table_at(wh, article, since).select(*article.key, changes.alias("before_image"))
    current = table_at(wh, article, now)
    after = current.select(*article.key, changes.alias("after_image"))
    tree = (partition or {}).get(article.name)
    if tree is not None:
        current = current.where(spark_sql(tree))  # rendered from the checked tree, never from text
    changed = (
        before.join(after, list(article.key), "full_outer")
        .where(~F.col("before_image").eqNullSafe(F.col("after_image")))
        .select(*article.key)
    )
    keys = changed.unionByName(pending_keys.select(*article.key)).distinct()
    replica = wh.spark.table(f"{replica_schema(wh, subscriber)}.{article.name}").select(
        *article.key, image.alias("replica_image")
    )
    source = (
        keys.join(
            current.withColumn("qrepl_present", F.lit(True)).withColumn("qrepl_image", image), list(article.key), "left"
        )
        .join(replica, list(article.key), "left")
        .where(
            F.when(F.col("qrepl_present"), ~F.col("replica_image").eqNullSafe(F.col("qrepl_image"))).otherwise(
                F.col("replica_image").isNotNull()
            )
        )
        .drop("replica_image", "qrepl_image")
    )  # rows the replica already holds as they are: nothing to send
    view = f"qrepl_delivery_{subscriber}_{article.name}"
    source.createOrReplaceTempView(view)
    count = source.count()
    if count:
        on = " and ".join(f"t.{k} <=> s.{k}" for k in article.key)
        assignments = ", ".join(f"t.{c} = s.{c}" for c in cols)
        statement = (
            f"merge into {replica_schema(wh, subscriber)}.{article.name} t using {view} s on {on} "
            f"when matched and s.qrepl_present is null then delete "
            f"when matched then update set {assignments} "
            f"when not matched and s.qrepl_present then insert ({', '.join(cols)}) "
            f"values ({', '.join('s.' + c for c in cols)})"
        )
        retry_on_commit_conflict(lambda: wh.spark.sql(statement))
    wh.spark.catalog.dropTempView(view)
    return count


class DistributionFailed(RuntimeError):
    """Delivery failed for some subscribers; the others were delivered (`report`)."""

    def __init__(self, failed: dict[str, str], report: dict[str, dict]) -> None:
        reasons = "; ".join(f"{name}: {why}" for name, why in failed.items())
        super().__init__(
            f"distribution failed for {len(failed)} of {len(report)} subscriber(s): {', '.join(failed)} ({reasons})"
        )
        self.failed, self.report = failed, report


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def distribute(schema: str | None, progress: Progress = lambda _: None) -> dict[str, dict[str, int]]:
    """Deliver everything pending to every active subscriber; returns counts per subscriber.
    The publisher's trigger runs first, so a row an outside writer changed reaches the
    subscribers with the new version it was given. A subscriber whose delivery fails is
    reported with one line and the others are still delivered; DistributionFailed at the end
    names the failed ones (a rerun resends only what is not there yet)."""
    wh = warehouse(schema)
    pub = wh.require_publication()
    stamp_publisher(wh)
    delivered = deliveries(wh)
    report: dict[str, dict[str, int]] = {}
    failed: dict[str, str] = {}
    subscriptions = wh.subscriptions()
    for n, sub in enumerate(subscriptions, 1):
        name = sub["subscriber"]
        report[name] = counts = {"compensations": 0, "rows_delivered": 0, "conflicts": 0}
        try:
            line = _deliver_subscriber(wh, pub, sub, delivered, counts)
        except Exception as exc:  # one subscriber's failure (a missing replica table, an expired snapshot, ...)
            failed[name] = _first_line(exc)
            line = f"failed: {failed[name]}"
        progress(f"[{n}/{len(subscriptions)}] {name}: {line}")
    if failed:
        raise DistributionFailed(failed, report)
    return report


def _deliver_subscriber(wh: Warehouse, pub, sub: dict, delivered: dict, counts: dict[str, int]) -> str:
    """One subscriber's delivery (counts filled in); returns its progress line."""
    from pyspark.sql import functions as F

    name = sub["subscriber"]
    has_replica = wh.spark.catalog.databaseExists(replica_schema(wh, name))
    if sub["status"] != "active" or not has_replica:
        return f"skipped ({sub['status']}, replica {'present' if has_replica else 'missing'})"
    if not any(s == name for s, _ in delivered):  # records itself last (replica.snapshot_replica)
        return "skipped (its initial snapshot is not finished)"
    pending = pending_compensations(wh, name)
    counts["compensations"] = pending.count()
    partition, columns = wh.partition(sub), wh.columns(sub)
    snapshots = {}
    for article in pub.articles:
        since = delivered.get((name, article.name))
        now = wh.article_snapshot(article)
        if since == now and not counts["compensations"]:
            continue
        keys = (
            pending.where(pending.article == article.name)
            .select(F.from_json("row_key", article.key_ddl).alias("k"))
            .select("k.*")
        )
        counts["rows_delivered"] += _deliver_article(
            wh, name, article.name, since, now, keys, partition, columns.get(article.name)
        )
        snapshots[article.name] = now
    if snapshots:
        record_delivery(wh, name, snapshots)
    mark_compensations_delivered(wh, pending)
    if not pub.centralized_conflicts:
        counts["conflicts"] = _deliver_conflicts(wh, name)
    return (
        f"{counts['rows_delivered']} row(s) delivered ({counts['compensations']} compensating "
        f"command(s)), {counts['conflicts']} conflict(s)"
    )


def deliver_conflicts(schema: str | None, subscriber: str) -> int:
    """The subscriber's conflicts not delivered yet, to its replica; returns how many."""
    return _deliver_conflicts(warehouse(schema), check_identifier(subscriber, "subscriber"))


def _deliver_conflicts(wh: Warehouse, subscriber: str) -> int:
    """Append the subscriber's conflicts of batches after its mark in `conflict_deliveries`
    to its replica schema's `conflicts`, then move the mark (the retention purge keeps a
    subscribed subscriber's conflicts above its mark: macro purge_expired_conflicts)."""
    spark = wh.spark
    if not wh.exists("conflicts"):
        return 0
    wh.create_own("conflict_deliveries")
    marks = spark.table(wh.table("conflict_deliveries"))
    since = marks.where(marks.subscriber == subscriber).agg({"batch_id": "max"}).first()[0] or 0
    all_conflicts = spark.table(wh.table("conflicts"))
    conflicts = all_conflicts.where((all_conflicts.subscriber == subscriber) & (all_conflicts.batch_id > since))
    newest = conflicts.agg({"batch_id": "max"}).first()[0]
    if newest is None:
        return 0
    target = f"{replica_schema(wh, subscriber)}.conflicts"
    if not spark.catalog.tableExists(target):
        conflicts.limit(0).writeTo(target).using("iceberg").create()
    # a delivery that crashed after its append and before its mark must not append twice
    conflicts = conflicts.join(spark.table(target).select("conflict_id"), "conflict_id", "left_anti")
    count = conflicts.count()
    if count:
        conflicts.writeTo(target).append()
    spark.createDataFrame([(subscriber, newest)], CONFLICT_DELIVERIES_SCHEMA).writeTo(
        wh.table("conflict_deliveries")
    ).append()
    return count


def reinitialize(schema: str | None, subscriber: str, progress: Progress = lambda _: None) -> int:
    """Deliver a fresh snapshot: replica replaced by the publisher's rows, status active,
    generation + 1 (queued rows of the older generation will be rejected_reinit).

    The generation moves first, with the status `reinitializing`: from then on a capture is
    refused, and one that queued at the older generation before sees the new one after its
    replica write and puts the publisher's rows back (capture.Subscriber), so no change of a
    rejected_reinit transaction stays in the new replica. Setting `active` is the commit
    point; a rerun after a crash before it goes on with the same generation."""
    wh = warehouse(schema)
    sub = wh.subscription(check_identifier(subscriber, "subscriber"))
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    generation = sub["generation"]
    if sub["status"] != REINITIALIZING:
        generation += 1
        wh.update_subscription(subscriber, REINITIALIZING, generation, sub["reinit_requested_at"], sub["reinit_reason"])
    snapshot_replica(wh, subscriber, progress)
    wh.update_subscription(subscriber, "active", generation, None, None)
    return generation
