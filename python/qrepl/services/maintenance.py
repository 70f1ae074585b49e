"""`qrepl maintain`: compaction and snapshot expiry for the publisher tables.

Merge-on-read leaves delete files behind every run; compaction rewrites them into plain data
files. Snapshots are expired only up to the oldest one a subscriber's replica still reflects,
so the next delivery can still diff against it (docs/architecture.md §9), or that a
subscription add or reinitialization in progress pinned. A dropped subscription's records keep
nothing.
"""

from __future__ import annotations

from ..core.vocabulary import Progress
from ..storage.dbt_runner import COMMIT_ATTEMPTS, lost_to_a_concurrent_commit, stamp_publisher
from ..storage.open import warehouse
from ..storage.replica import deliveries, snapshot_pins


def maintain(schema: str | None, progress: Progress = lambda _: None) -> list[str]:
    """Compact every publisher table's data files (merge-on-read leaves delete files behind)
    and expire the snapshots no subscriber's replica still refers to: the oldest snapshot in
    `subscription_deliveries` or `snapshot_pins` of a current subscription, per article, and
    everything after it are kept.

    Per article the newest snapshot is read before the records: a snapshot an add or a
    reinitialization reads after its pin is at least as new, so when this maintenance did
    not see the pin it expires nothing that snapshot needs."""
    wh = warehouse(schema)
    spark = wh.spark
    # the publisher's trigger first, so that expiry keeps only from the snapshot it examined.
    # A write committed after it and compacted below is still stamped next time: the trigger
    # reads the files a compaction replaced as of the compaction's parent, which is newer
    # than that snapshot and so is kept
    stamp_publisher(wh)
    stamped = wh.last_stamps()
    report = []
    for article in wh.require_publication().articles:
        table = wh.article_table(article)
        rewritten = _compact(spark, table, progress)
        history = spark.table(f"{table}.snapshots")
        newest = history.agg({"committed_at": "max"}).first()[0]
        # records, then subscriptions: a subscription is written before its first record
        records = list(deliveries(wh).items()) + list(snapshot_pins(wh).items())
        subscribed = {s["subscriber"] for s in wh.subscriptions()}
        needed = [sid for (s, a), sid in records if a == article.name and s in subscribed and sid is not None]
        if stamped.get(article.name) is not None:  # the next stamp reads the table as of it
            needed.append(stamped[article.name])
        oldest = None
        if stamped.get(article.name) == 0:
            # examined "before the first snapshot" (a table empty at the stamp): the next stamp
            # reads every commit in its history, so nothing is expired
            oldest = history.agg({"committed_at": "min"}).first()[0]
        elif needed:
            oldest = history.where(history.snapshot_id.isin(needed)).agg({"committed_at": "min"}).first()[0]
        # nobody needs an older snapshot than the newest: keep that one only
        keep_from = newest if oldest is None or oldest > newest else oldest
        # CALL takes no parameter markers; keep_from is a datetime read from the table's own
        # metadata, so its strftime text is all digits and separators
        expired = spark.sql(
            f"call spark_catalog.system.expire_snapshots(table => '{table}', older_than => "
            f"timestamp '{keep_from.strftime('%Y-%m-%d %H:%M:%S.%f')}', retain_last => 1)"
        ).first()
        line = (
            f"{article.name}: {rewritten.rewritten_data_files_count} data file(s) rewritten into "
            f"{rewritten.added_data_files_count}; {expired.deleted_data_files_count + expired.deleted_position_delete_files_count + expired.deleted_equality_delete_files_count} "
            f"file(s) of expired snapshots deleted; snapshots from {keep_from} kept"
        )
        progress(line)
        report.append(line)
    return report


def _compact(spark, table: str, progress: Progress):
    """Iceberg's rewrite_data_files of one table. A rewrite that lost to another writer's
    commit (a job's delete into a file it rewrote) is made again from the table as it is now:
    a compaction changes no row, so making it again is always safe."""
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        try:
            return spark.sql(
                f"call spark_catalog.system.rewrite_data_files(table => '{table}', options => map('rewrite-all', 'true'))"
            ).first()
        except Exception as exc:  # noqa: BLE001 - only a lost commit is made again
            if attempt == COMMIT_ATTEMPTS or not lost_to_a_concurrent_commit(exc):
                raise
            progress(
                f"{table}: another writer committed during its compaction; compacting again "
                f"(attempt {attempt + 1} of {COMMIT_ATTEMPTS})"
            )
