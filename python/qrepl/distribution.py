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

from typing import Callable

from .capture import replica_schema
from .model import ConfigError, check_identifier
from .warehouse import Warehouse

DELIVERIES_SCHEMA = "subscriber STRING, article STRING, snapshot_id BIGINT"
CONFLICT_DELIVERIES_SCHEMA = "subscriber STRING, batch_id BIGINT"
Progress = Callable[[str], None]


def current_snapshot(wh: Warehouse, article: str) -> int | None:
    """The publisher table's current snapshot id (None for a table never written)."""
    history = wh.spark.table(f"{wh.table(article)}.history")
    row = history.where("is_current_ancestor").orderBy(history.made_current_at.desc()).select("snapshot_id").first()
    return row.snapshot_id if row else None


def _table_at(wh: Warehouse, article: str, snapshot_id: int | None):
    if snapshot_id is None:
        return wh.spark.table(wh.table(article)).limit(0)
    return wh.spark.read.option("snapshot-id", snapshot_id).table(wh.table(article))


def _deliveries(wh: Warehouse) -> dict[tuple[str, str], int | None]:
    if not wh.exists("subscription_deliveries"):
        wh.spark.sql(f"create table {wh.table('subscription_deliveries')} ({DELIVERIES_SCHEMA}) using iceberg")
    return {(r.subscriber, r.article): r.snapshot_id
            for r in wh.spark.table(wh.table("subscription_deliveries")).collect()}


def has_snapshot(wh: Warehouse, subscriber: str) -> bool:
    """True once the subscriber's replica has been given a snapshot of every article (the
    snapshot records its deliveries last, so a crashed one does not count)."""
    delivered = _deliveries(wh)
    return all((subscriber, a.name) in delivered for a in wh.require_publication().articles)


def _record(wh: Warehouse, subscriber: str, snapshots: dict[str, int | None]) -> None:
    """Remember which publisher snapshot each of the subscriber's replica tables reflects."""
    _deliveries(wh)
    rows = [(subscriber, article, sid) for article, sid in snapshots.items()]
    wh.spark.createDataFrame(rows, DELIVERIES_SCHEMA).createOrReplaceTempView("qrepl_delivered")
    wh.spark.sql(f"merge into {wh.table('subscription_deliveries')} t using qrepl_delivered s "
                 f"on t.subscriber = s.subscriber and t.article = s.article "
                 f"when matched then update set t.snapshot_id = s.snapshot_id when not matched then insert *")


def snapshot_replica(wh: Warehouse, subscriber: str, progress: Progress = lambda _: None) -> None:
    """Replace the subscriber's replica with the publisher's current rows and record the
    snapshots it reflects (initial sync and reinitialization)."""
    spark = wh.spark
    schema = replica_schema(wh, subscriber)
    pending = _pending_compensations(wh, subscriber)
    spark.sql(f"create database if not exists {schema}")
    snapshots = {}
    for article in wh.require_publication().articles:
        sid = current_snapshot(wh, article.name)
        rows = _table_at(wh, article.name, sid)
        rows.writeTo(f"{schema}.{article.name}").using("iceberg").createOrReplace()
        snapshots[article.name] = sid
        progress(f"{subscriber}: snapshot of {article.name} ({rows.count()} rows)")
    _record(wh, subscriber, snapshots)
    _mark_compensations_delivered(wh, pending)  # the snapshot supersedes the ones read before it


def _pending_compensations(wh: Warehouse, subscriber: str):
    """The subscriber's undelivered compensating commands, read once (a small DataFrame of
    collected rows): exactly these are delivered and then stamped, so a command a concurrent
    run appends meanwhile stays pending for the next delivery."""
    schema = "subscriber STRING, batch_id BIGINT, seq INT, article STRING, row_key STRING"
    if not wh.exists("compensating_commands"):
        return wh.spark.createDataFrame([], schema)
    comp = wh.spark.table(wh.table("compensating_commands"))
    rows = comp.where((comp.subscriber == subscriber) & comp.delivered_at.isNull()) \
        .select("subscriber", "batch_id", "seq", "article", "row_key").collect()
    return wh.spark.createDataFrame([tuple(r) for r in rows], schema)


def _mark_compensations_delivered(wh: Warehouse, pending) -> None:
    """Stamp exactly the given compensating commands delivered (keys travel in a DataFrame)."""
    if pending.isEmpty():
        return
    pending.createOrReplaceTempView("qrepl_compensated")
    wh.spark.sql(f"merge into {wh.table('compensating_commands')} t using qrepl_compensated s "
                 f"on t.subscriber = s.subscriber and t.batch_id = s.batch_id and t.seq = s.seq "
                 f"when matched and t.delivered_at is null then update set t.delivered_at = current_timestamp()")


def _deliver_article(wh: Warehouse, subscriber: str, article_name: str, since: int | None, now: int | None,
                     pending_keys) -> int:
    """Merge into the replica the publisher's current row for every row changed between the
    two snapshots or named by a pending compensating command; returns the rows merged."""
    from pyspark.sql import functions as F

    article = wh.article(article_name)
    cols = list(article.columns) + ["msrepl_tran_version"]
    image = F.md5(F.to_json(F.struct(*cols)))
    before = _table_at(wh, article.name, since).select(*article.key, image.alias("before_image"))
    current = _table_at(wh, article.name, now)
    after = current.select(*article.key, image.alias("after_image"))
    changed = before.join(after, list(article.key), "full_outer") \
        .where(~F.col("before_image").eqNullSafe(F.col("after_image"))).select(*article.key)
    keys = changed.unionByName(pending_keys.select(*article.key)).distinct()
    replica = wh.spark.table(f"{replica_schema(wh, subscriber)}.{article.name}") \
        .select(*article.key, image.alias("replica_image"))
    source = keys.join(current.withColumn("qrepl_present", F.lit(True)).withColumn("qrepl_image", image),
                       list(article.key), "left") \
        .join(replica, list(article.key), "left") \
        .where(F.when(F.col("qrepl_present"), ~F.col("replica_image").eqNullSafe(F.col("qrepl_image")))
               .otherwise(F.col("replica_image").isNotNull())) \
        .drop("replica_image", "qrepl_image")  # rows the replica already holds as they are: nothing to send
    view = f"qrepl_delivery_{subscriber}_{article.name}"
    source.createOrReplaceTempView(view)
    count = source.count()
    if count:
        on = " and ".join(f"t.{k} <=> s.{k}" for k in article.key)
        assignments = ", ".join(f"t.{c} = s.{c}" for c in cols)
        wh.spark.sql(
            f"merge into {replica_schema(wh, subscriber)}.{article.name} t using {view} s on {on} "
            f"when matched and s.qrepl_present is null then delete "
            f"when matched then update set {assignments} "
            f"when not matched and s.qrepl_present then insert ({', '.join(cols)}) "
            f"values ({', '.join('s.' + c for c in cols)})")
    wh.spark.catalog.dropTempView(view)
    return count


def distribute(wh: Warehouse, progress: Progress = lambda _: None) -> dict[str, dict[str, int]]:
    """Deliver everything pending to every active subscriber; returns counts per subscriber."""
    from pyspark.sql import functions as F

    spark = wh.spark
    pub = wh.require_publication()
    delivered = _deliveries(wh)
    report: dict[str, dict[str, int]] = {}
    subscriptions = wh.subscriptions()
    for n, sub in enumerate(subscriptions, 1):
        name = sub["subscriber"]
        counts = {"compensations": 0, "rows_delivered": 0, "conflicts": 0}
        report[name] = counts
        has_replica = spark.catalog.databaseExists(replica_schema(wh, name))
        if sub["status"] != "active" or not has_replica:
            progress(f"[{n}/{len(subscriptions)}] {name}: skipped ({sub['status']}, replica "
                     f"{'present' if has_replica else 'missing'})")
            continue
        pending = _pending_compensations(wh, name)
        counts["compensations"] = pending.count()
        snapshots = {}
        for article in pub.articles:
            since = delivered.get((name, article.name))
            now = current_snapshot(wh, article.name)
            if since == now and not counts["compensations"]:
                continue
            keys = pending.where(pending.article == article.name) \
                .select(F.from_json("row_key", article.key_ddl).alias("k")).select("k.*")
            counts["rows_delivered"] += _deliver_article(wh, name, article.name, since, now, keys)
            snapshots[article.name] = now
        if snapshots:
            _record(wh, name, snapshots)
        _mark_compensations_delivered(wh, pending)
        if not pub.centralized_conflicts:
            counts["conflicts"] = _deliver_conflicts(wh, name)
        progress(f"[{n}/{len(subscriptions)}] {name}: {counts['rows_delivered']} row(s) delivered "
                 f"({counts['compensations']} compensating command(s)), {counts['conflicts']} conflict(s)")
    return report


def _deliver_conflicts(wh: Warehouse, subscriber: str) -> int:
    spark = wh.spark
    if not wh.exists("conflicts"):
        return 0
    if not wh.exists("conflict_deliveries"):
        spark.sql(f"create table {wh.table('conflict_deliveries')} ({CONFLICT_DELIVERIES_SCHEMA}) using iceberg")
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
        wh.table("conflict_deliveries")).append()
    return count


def reinitialize(wh: Warehouse, subscriber: str, progress: Progress = lambda _: None) -> int:
    """Deliver a fresh snapshot: replica replaced by the publisher's rows, status active,
    generation + 1 (queued rows of the older generation will be rejected_reinit)."""
    sub = wh.subscription(check_identifier(subscriber, "subscriber"))
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    snapshot_replica(wh, subscriber, progress)
    generation = sub["generation"] + 1
    wh.update_subscription(subscriber, "active", generation, None, None)
    return generation


def maintain(wh: Warehouse, progress: Progress = lambda _: None) -> list[str]:
    """Compact every publisher table's data files (merge-on-read leaves delete files behind)
    and expire the snapshots no subscriber's replica still refers to: the oldest snapshot in
    `subscription_deliveries` per article and everything after it are kept."""
    spark = wh.spark
    delivered = _deliveries(wh)
    report = []
    for article in wh.require_publication().articles:
        table = f"{wh.schema}.{article.name}"
        rewritten = spark.sql(f"call spark_catalog.system.rewrite_data_files(table => '{table}', "
                              f"options => map('rewrite-all', 'true'))").first()
        needed = [sid for (_, a), sid in delivered.items() if a == article.name and sid is not None]
        history = spark.table(f"{wh.table(article.name)}.snapshots")
        keep_from = None
        if needed:
            keep_from = history.where(history.snapshot_id.isin(needed)).agg({"committed_at": "min"}).first()[0]
        if keep_from is None:  # nobody needs an old snapshot: keep the current one only
            keep_from = history.agg({"committed_at": "max"}).first()[0]
        # CALL takes no parameter markers; keep_from is a datetime read from the table's own
        # metadata, so its strftime text is all digits and separators
        expired = spark.sql(f"call spark_catalog.system.expire_snapshots(table => '{table}', older_than => "
                            f"timestamp '{keep_from.strftime('%Y-%m-%d %H:%M:%S.%f')}', retain_last => 1)").first()
        line = (f"{article.name}: {rewritten.rewritten_data_files_count} data file(s) rewritten into "
                f"{rewritten.added_data_files_count}; {expired.deleted_data_files_count + expired.deleted_position_delete_files_count + expired.deleted_equality_delete_files_count} "
                f"file(s) of expired snapshots deleted; snapshots from {keep_from} kept")
        progress(line)
        report.append(line)
    return report
