"""Conflicts: list them, write the HTML viewer, resolve one by hand, remove reviewed ones from
the lists (docs/conflicts.md). The conflicts mart is written by dbt alone; a resolution or a
removal is a conflict_reviews row written by a dbt macro."""

from __future__ import annotations

import getpass
import json
import os
import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from ..core.vocabulary import ConfigError
from ..storage.dbt_runner import dbt_invoke
from ..storage.immediate_log import immediate_stats
from ..storage.open import warehouse
from .viewer import GROUP_FIELDS, ROW_FIELDS, VIEWER_ORDER, write_viewer

# a conflict_reviews row that removes its conflict from the lists (macro qrepl_remove_conflicts)
REMOVED = "removed"


def list_conflicts(
    schema: str | None = None,
    article: str | None = None,
    subscriber: str | None = None,
    conflict_type: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    conflict_id: str | None = None,
    publication: str | None = None,
    partition: str | None = None,
) -> list[dict]:
    """Conflicts, oldest first; filters travel as DataFrame predicates, never as SQL text.
    `since` is inclusive and `until` exclusive, both compared with detected_at (UTC).
    `partition` as each conflict names it ("orders: region = 'north'", `_with_partition`)."""
    wh = warehouse(schema)
    if not wh.exists("conflicts"):
        return []
    df = listed_conflicts(wh)
    for column, value in (
        ("article", article),
        ("subscriber", subscriber),
        ("conflict_type", conflict_type),
        ("conflict_id", conflict_id),
        ("publication", publication),
        ("partition", partition),
    ):
        if value is not None:
            df = df.where(df[column] == value)
    if since is not None:
        df = df.where(df["detected_at"] >= since)
    if until is not None:
        df = df.where(df["detected_at"] < until)
    rows = [r.asDict() for r in df.orderBy("detected_at", "subscriber", "tran_id", "command_seq").collect()]
    reviews = _conflict_reviews(wh)
    for r in rows:
        for image in ("publisher_row", "subscriber_row"):
            r[image] = json.loads(r[image], parse_float=Decimal) if r[image] else None
        r["review"] = reviews.get(r["conflict_id"])
    return rows


def write_conflict_viewer(schema: str | None, out_dir: Path, title: str = "qrepl conflicts") -> Path:
    """`qrepl viewer`: the HTML conflict viewer of every conflict (qrepl.services.viewer). Spark counts
    the conflicts per group (the page's counts, filters and charts); the rows stream in the
    viewer's order into chunks, from the same snapshot of `conflicts`. Returns index.html."""
    from pyspark.sql import functions as F

    wh = warehouse(schema)
    immediate = sorted(immediate_stats(wh).values(), key=lambda s: s["subscriber"])
    snapshot = wh.current_snapshot("conflicts") if wh.exists("conflicts") else None
    if snapshot is None:
        return write_viewer([], [], out_dir, title, immediate)
    df = listed_conflicts(wh, snapshot)
    order = [F.col(f).desc() if descending else F.col(f).asc() for f, descending in VIEWER_ORDER]
    groups = [r.asDict() for r in df.groupBy(*GROUP_FIELDS).count().orderBy(*order[:-1]).collect()]
    reviews = _conflict_reviews(wh)
    own = [f for f in ROW_FIELDS if f != "review"]

    def rows():
        for r in df.select(*GROUP_FIELDS, *own).orderBy(*order).toLocalIterator():
            row = r.asDict()
            for image in ("publisher_row", "subscriber_row"):
                row[image] = json.loads(row[image], parse_float=Decimal) if row[image] else None
            row["review"] = reviews.get(row["conflict_id"])
            yield row

    return write_viewer(groups, rows(), out_dir, title, immediate)


def _conflict_reviews(wh) -> dict[str, dict]:
    """How each conflict resolved by hand was resolved (conflict_reviews, written only by
    macros/conflicts/qrepl_resolve_conflict.sql): keep, outcome, resolved_by, resolved_at."""
    if not wh.exists("conflict_reviews"):
        return {}
    reviews = wh.spark.table(wh.table("conflict_reviews"))
    return {
        r["conflict_id"]: {k: r[k] for k in ("keep", "outcome", "resolved_by", "resolved_at", "written_version")}
        for r in reviews.where(reviews.outcome != REMOVED).collect()
    }


def resolve_conflict(schema: str | None, conflict_id: str, keep: str, resolved_by: str | None = None) -> dict:
    """Resolve a conflict by hand (docs/conflicts.md): `keep` subscriber writes the losing row to
    the publisher by compare-and-swap, publisher closes it. The dbt macro
    qrepl_resolve_conflict does the work (the same as `dbt run-operation`); returns the review."""
    wh = warehouse(schema)
    user = resolved_by or os.environ.get("USER") or getpass.getuser()
    dbt_invoke(
        [
            "run-operation",
            "qrepl_resolve_conflict",
            "--args",
            json.dumps({"conflict_id": conflict_id, "keep": keep, "resolved_by": user}),
        ],
        wh.schema,
    )
    return _conflict_reviews(wh)[conflict_id]


def remove_conflicts(schema: str | None, conflict_ids: list[str], removed_by: str | None = None) -> int:
    """Remove reviewed conflicts from the lists: the dbt macro qrepl_remove_conflicts records
    one conflict_reviews row per conflict (outcome removed), the same as `dbt run-operation`.
    The conflicts mart itself is written only by dbt's model. Returns how many were removed
    now (not those removed before, nor ids no conflict has)."""
    wh = warehouse(schema)
    for conflict_id in conflict_ids:
        if not re.fullmatch(r"[0-9a-f]{32}", conflict_id):
            raise ConfigError(f"a conflict id is the 32 hex digits `qrepl conflicts` shows, got {conflict_id[:40]!r}")
    before = _removed_conflicts(wh).count()
    user = removed_by or os.environ.get("USER") or getpass.getuser()
    dbt_invoke(
        [
            "run-operation",
            "qrepl_remove_conflicts",
            "--args",
            json.dumps({"conflict_ids": list(conflict_ids), "removed_by": user}),
        ],
        wh.schema,
    )
    return _removed_conflicts(wh).count() - before


def _removed_conflicts(wh):
    """The ids of the conflicts removed from the lists (conflict_reviews, outcome removed), as a
    one-column DataFrame, or an empty one."""
    if not wh.exists("conflict_reviews"):
        return wh.spark.createDataFrame([], "conflict_id STRING")
    reviews = wh.spark.table(wh.table("conflict_reviews"))
    return reviews.where(reviews.outcome == REMOVED).select("conflict_id").distinct()


def listed_conflicts(wh, snapshot: int | None = None, with_partition: bool = True):
    """The conflicts mart without the conflicts removed from the lists, each with its partition
    (`_with_partition`) unless `with_partition` is False (for counts)."""
    reader = wh.spark.read.option("snapshot-id", snapshot) if snapshot is not None else wh.spark.read
    listed = reader.table(wh.table("conflicts")).join(_removed_conflicts(wh), "conflict_id", "left_anti")
    return _with_partition(wh, listed) if with_partition else listed


def _with_partition(wh, conflicts):
    """Each conflict with `partition`: its article's row filter in the subscriber's partition as
    it stood when the conflict's batch was cut (docs/spec.md §11), as `subscription add --filter`
    takes it ("orders: region = 'north'"; "orders: every row" for an article without one). It
    is read from that batch's frozen copy of the subscriptions (int_batch_subscriptions), so a
    filter changed since does not relabel older conflicts; null where the copy is missing."""
    from pyspark.sql import functions as F

    if not wh.exists("int_batch_subscriptions"):
        return conflicts.withColumn("partition", F.lit(None).cast("string"))
    cut = wh.spark.table(wh.table("int_batch_subscriptions"))
    spec = F.col("partition_spec") if "partition_spec" in cut.columns else F.lit(None).cast("string")
    cut = cut.select(
        F.col("batch_id").alias("_cut_batch"),
        F.col("subscriber").alias("_cut_subscriber"),
        F.from_json(spec, "map<string, struct<filter: string>>").alias("_cut_spec"),
    )
    joined = conflicts.join(
        cut, (conflicts.batch_id == cut._cut_batch) & (conflicts.subscriber == cut._cut_subscriber), "left"
    )
    condition = F.coalesce(F.element_at(F.col("_cut_spec"), F.col("article")).getField("filter"), F.lit("every row"))
    partition = F.when(F.col("_cut_subscriber").isNotNull(), F.concat(F.col("article"), F.lit(": "), condition))
    return joined.withColumn("partition", partition).drop("_cut_batch", "_cut_subscriber", "_cut_spec")
