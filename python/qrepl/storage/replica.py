"""A subscriber's replica: its schema (`<publisher schema>__<subscriber>`), its rows, its
initial snapshot, and which publisher snapshot each of its tables reflects
(`subscription_deliveries`). Capture writes replicas, distribution and reinitialization bring
them up to the publisher, maintenance keeps the snapshots they still need.
"""

from __future__ import annotations

import time
from typing import Any

from ..core.filter_meaning import spark_sql
from ..core.publication import Article
from ..core.rows import canonical_key, typed_row
from ..core.vocabulary import Progress, check_identifier
from .dbt_runner import stamp_publisher
from .tables import DELIVERIES_SCHEMA
from .warehouse import Warehouse, readable


def replica_schema(warehouse: Warehouse, subscriber: str) -> str:
    return f"{warehouse.schema}__{check_identifier(subscriber, 'subscriber')}"


class Replica:
    """A subscriber's copy of the publication's articles (its own schema)."""

    def __init__(self, warehouse: Warehouse, subscriber: str) -> None:
        self.subscriber = subscriber
        self.wh = Warehouse(warehouse.spark, replica_schema(warehouse, subscriber))
        self.publisher = warehouse

    def snapshot_from_publisher(self, progress: Progress = lambda _: None) -> None:
        """Replace the replica with the publisher's current rows (initial sync, reinitialization)."""
        snapshot_replica(self.publisher, self.subscriber, progress)

    def row(self, article: str, key_values: dict[str, Any]) -> dict | None:
        """The replica's row with this key (a key filter, not a scan collected to the driver)."""
        a = self.publisher.article(article)
        if canonical_key(a, key_values) is None:
            return None
        typed = typed_row(a, key_values)
        # the key as a one-row DataFrame (Spark's own conversion of each value), not as literals:
        # pyspark turns a datetime or date literal into java.sql.Timestamp/Date, whose calendar
        # is not the proleptic one before 1582 (a year-0001 key would not be found)
        key = self.wh.spark.createDataFrame([tuple(typed[k] for k in a.key)], a.key_ddl)
        df = self.wh.spark.table(self.wh.table(a.name)).join(key, list(a.key), "left_semi")
        found = readable(df, a).limit(1).collect()
        return found[0].asDict() if found else None

    def rows(self, article: str) -> list[dict]:
        a = self.publisher.article(article)
        return [r.asDict() for r in readable(self.wh.spark.table(self.wh.table(a.name)), a).collect()]


class ReplicaWarehouse(Warehouse):
    """Replica tables in the subscriber's schema, typed by the publisher's articles."""

    def __init__(self, publisher: Warehouse, schema: str) -> None:
        super().__init__(publisher.spark, schema)
        self.publisher = publisher

    def require_publication(self):
        return self.publisher.require_publication()

    def article_table(self, article) -> str:
        """A replica's table is named after its article, wherever the publisher's table is."""
        return self.table(article.name)


def current_snapshot(wh: Warehouse, name: str) -> int | None:
    """A publisher-side table's current snapshot id (None for a table never written)."""
    return wh.current_snapshot(name)


def table_at(wh: Warehouse, article: Article, snapshot_id: int | None):
    """The article's publisher table as of a snapshot (no rows for None)."""
    table = wh.article_table(article)
    if snapshot_id is None:
        return wh.spark.table(table).limit(0)
    return wh.spark.read.option("snapshot-id", snapshot_id).table(table)


def deliveries(wh: Warehouse) -> dict[tuple[str, str], int | None]:
    if not wh.exists("subscription_deliveries"):
        wh.create_own("subscription_deliveries")
    return {
        (r.subscriber, r.article): r.snapshot_id for r in wh.spark.table(wh.table("subscription_deliveries")).collect()
    }


def has_snapshot(wh: Warehouse, subscriber: str) -> bool:
    """True once the subscriber's replica has been given a snapshot of every article (the
    snapshot records its deliveries last, so a crashed one does not count)."""
    delivered = deliveries(wh)
    return all((subscriber, a.name) in delivered for a in wh.require_publication().articles)


def record_delivery(wh: Warehouse, subscriber: str, snapshots: dict[str, int | None]) -> None:
    """Remember which publisher snapshot each of the subscriber's replica tables reflects."""
    deliveries(wh)
    _merge_snapshots(wh, "subscription_deliveries", subscriber, snapshots)


def _merge_snapshots(wh: Warehouse, table: str, subscriber: str, snapshots: dict[str, int | None]) -> None:
    rows = [(subscriber, article, sid) for article, sid in snapshots.items()]
    wh.spark.createDataFrame(rows, DELIVERIES_SCHEMA).createOrReplaceTempView("qrepl_delivered")
    wh.spark.sql(
        f"merge into {wh.table(table)} t using qrepl_delivered s "
        f"on t.subscriber = s.subscriber and t.article = s.article "
        f"when matched then update set t.snapshot_id = s.snapshot_id when not matched then insert *"
    )


def snapshot_pins(wh: Warehouse) -> dict[tuple[str, str], int | None]:
    """The snapshots a subscription add or a reinitialization in progress is about to read
    (`snapshot_pins`): maintenance keeps them as it keeps delivered ones."""
    if not wh.exists("snapshot_pins"):
        return {}
    return {(r.subscriber, r.article): r.snapshot_id for r in wh.spark.table(wh.table("snapshot_pins")).collect()}


def pin_snapshots(wh: Warehouse, subscriber: str, articles: list[Article]) -> None:
    """Before a snapshot reads the publisher: pin each article's current snapshot. The one it
    reads (the one the publisher's trigger then examines) is this one or a later one, so a
    `qrepl maintain` that sees the pin keeps it, and one that does not see it read the table's
    newest snapshot before the pin, so it expires nothing as new as the snapshot read
    (maintenance.maintain)."""
    if not wh.exists("snapshot_pins"):
        wh.create_own("snapshot_pins")
    _merge_snapshots(wh, "snapshot_pins", subscriber, {a.name: wh.article_snapshot(a) for a in articles})


def unpin_snapshots(wh: Warehouse, subscriber: str) -> None:
    """Remove the subscriber's pins once its deliveries are recorded (they keep the snapshots)."""
    if wh.exists("snapshot_pins"):
        view = wh._temp_view([(subscriber,)], "subscriber STRING")
        wh.spark.sql(f"delete from {wh.table('snapshot_pins')} where subscriber in (select subscriber from {view})")


def snapshot_replica(wh: Warehouse, subscriber: str, progress: Progress = lambda _: None) -> None:
    """Replace the subscriber's replica with the publisher's current rows (those its partition
    holds, with the columns it takes: docs/spec.md §11) and record the snapshots it reflects (initial sync and
    reinitialization). The rows are read as of the
    snapshot the publisher's trigger examined right before, so every row copied carries the
    version the trigger gave it: a job's write that set no version reaches the replica under
    its new version, never under the old one (which would meet a conflict it does not have)."""
    spark = wh.spark
    schema = replica_schema(wh, subscriber)
    pending = pending_compensations(wh, subscriber)
    spark.sql(f"create database if not exists {schema}")
    articles = wh.require_publication().articles
    subscription = wh.subscription(subscriber) or {}
    partition, columns = wh.partition(subscription), wh.columns(subscription)
    pin_snapshots(wh, subscriber, articles)
    stamp_publisher(wh)
    stamped = wh.last_stamps()
    snapshots = {}
    for article in articles:
        examined = stamped.get(article.name)
        # 0: the trigger saw the table before its first snapshot; no record: the table as it is
        sid = wh.article_snapshot(article) if examined is None else (examined or None)
        rows = table_at(wh, article, sid)
        if article.name in partition:  # rendered from the checked tree, never from text
            rows = rows.where(spark_sql(partition[article.name]))
        if article.name in columns:  # a column filter: the columns it takes (§11)
            rows = rows.select(*columns[article.name], "msrepl_tran_version")
        rows.writeTo(f"{schema}.{article.name}").using("iceberg").createOrReplace()
        snapshots[article.name] = sid
        count = _rows_written(wh, f"{schema}.{article.name}")
        progress(f"{subscriber}: snapshot of {article.name} ({count} row{'' if count == 1 else 's'})")
    record_delivery(wh, subscriber, snapshots)
    unpin_snapshots(wh, subscriber)
    mark_compensations_delivered(wh, pending)  # the snapshot supersedes the ones read before it


def _rows_written(wh: Warehouse, table: str) -> int:
    """How many rows a replica table holds after its snapshot was written: its current Iceberg
    snapshot's `total-records`, so the count reads no data (counting the rows the snapshot
    wrote would read the publisher's table a second time). A table written with no rows may
    have no snapshot; a summary without the figure (another writer's) is counted by a scan."""
    row = wh.spark.sql(
        f"select cast(s.summary['total-records'] as bigint) as n from {table}.refs as r "
        f"inner join {table}.snapshots as s on r.snapshot_id = s.snapshot_id where r.name = 'main'"
    ).first()
    if row is None:
        return 0
    return row.n if row.n is not None else wh.spark.table(table).count()


def _delivered_compensations(wh: Warehouse):
    """Every delivered compensating command (subscriber, batch_id, seq, delivered_at), the one
    rule for "delivered": a row of `compensation_deliveries`, which only this module writes (the
    mart `compensating_commands` is dbt's alone), or, in a store from before that table, a mark
    in the mart's own `delivered_at` column, which still counts: in the mart table, or in that
    table kept as `compensating_commands_before_view` once the mart became a view over the
    batch log (macros/materializations/qrepl_view.sql). None when nothing was ever delivered."""
    parts = []
    for name in ("compensating_commands", "compensating_commands_before_view"):
        if not wh.exists(name):
            continue
        comp = wh.spark.table(wh.table(name))
        if "delivered_at" in comp.columns:
            parts.append(
                comp.where(comp.delivered_at.isNotNull()).select("subscriber", "batch_id", "seq", "delivered_at")
            )
    if wh.exists("compensation_deliveries"):
        parts.append(
            wh.spark.table(wh.table("compensation_deliveries")).select("subscriber", "batch_id", "seq", "delivered_at")
        )
    if not parts:
        return None
    done = parts[0]
    for part in parts[1:]:
        done = done.unionByName(part)
    return done


def pending_compensations(wh: Warehouse, subscriber: str):
    """The subscriber's undelivered compensating commands (_delivered_compensations), read once
    (a small DataFrame of collected rows): exactly these are delivered and then recorded, so a
    command a concurrent run appends meanwhile stays pending for the next delivery."""
    schema = "subscriber STRING, batch_id BIGINT, seq INT, article STRING, row_key STRING"
    if not wh.exists("compensating_commands"):
        return wh.spark.createDataFrame([], schema)
    comp = wh.spark.table(wh.table("compensating_commands"))
    comp = comp.where(comp.subscriber == subscriber)
    done = _delivered_compensations(wh)
    if done is not None:
        comp = comp.join(
            done.where(done.subscriber == subscriber).select("batch_id", "seq"), ["batch_id", "seq"], "left_anti"
        )
    rows = comp.select("subscriber", "batch_id", "seq", "article", "row_key").collect()
    return wh.spark.createDataFrame([tuple(r) for r in rows], schema)


def mark_compensations_delivered(wh: Warehouse, pending) -> None:
    """Record exactly the given compensating commands delivered: one row each in
    `compensation_deliveries` (keys travel in a DataFrame). A rerun after a crash records
    only those not yet recorded."""
    if pending.isEmpty():
        return
    wh.create_own("compensation_deliveries")
    pending.createOrReplaceTempView("qrepl_compensated")
    wh.spark.sql(
        f"merge into {wh.table('compensation_deliveries')} t using qrepl_compensated s "
        f"on t.subscriber = s.subscriber and t.batch_id = s.batch_id and t.seq = s.seq "
        f"when not matched then insert (subscriber, batch_id, seq, delivered_at) "
        f"values (s.subscriber, s.batch_id, s.seq, current_timestamp())"
    )


def compensation_delivery_times(wh: Warehouse) -> dict[tuple[str, int, int], Any]:
    """When each delivered compensating command was delivered, by (subscriber, batch_id, seq)
    (_delivered_compensations)."""
    done = _delivered_compensations(wh)
    return (
        {} if done is None else {(r["subscriber"], r["batch_id"], r["seq"]): r["delivered_at"] for r in done.collect()}
    )


# How Iceberg says a write lost to a concurrent commit, before anything of it was committed:
# its commit was refused (the first two), or, in a MERGE or DELETE, the table changed between
# the scan's planning and its runtime filtering (an IllegalStateException, seen in `make
# deploy-test` when a capture committed to the replica during a delivery).
COMMIT_CONFLICTS = ("ValidationException", "CommitFailedException", "Runtime file filtering is not possible")


def retry_on_commit_conflict(write, attempts: int = 5):
    """Run a replica write again when Iceberg refuses its commit because a concurrent writer
    committed first (a delivery and the subscriber's own capture, in two processes): the
    MERGE is re-planned against the new state, so nothing is lost and nothing is merged twice."""
    for attempt in range(1, attempts + 1):
        try:
            return write()
        except Exception as exc:  # py4j wraps the Java exception; its text names it
            if attempt == attempts or not any(name in str(exc) for name in COMMIT_CONFLICTS):
                raise
            time.sleep(0.5 * attempt)
