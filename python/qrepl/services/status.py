"""`qrepl status`: the publication, each subscription's queue depth, conflicts and immediate
transactions, the last run, the run lock's holder and the identity ranges, as data."""

from __future__ import annotations

from typing import Any

from ..storage.immediate_log import immediate_stats
from ..storage.open import warehouse
from ..storage.run_lock import current_holder
from .conflicts import listed_conflicts
from .identity_ranges import identity_ranges
from .partitions import overlaps_of
from .reader import unapplied_queue


def status(schema: str | None) -> dict[str, Any]:
    """The publication, each subscription with its queue depth and conflicts per article, the
    last run (a queue_reader_history row) and the run lock's holder, if any."""
    wh = warehouse(schema)
    pub = wh.require_publication()
    spark = wh.spark
    queue = unapplied_queue(wh)
    depth = {r["subscriber"]: r["count"] for r in queue.groupBy("subscriber").count().collect()}
    conflicts: dict[str, dict[str, int]] = {}
    if wh.exists("conflicts"):
        for r in listed_conflicts(wh, with_partition=False).groupBy("subscriber", "article").count().collect():
            conflicts.setdefault(r["subscriber"], {})[r["article"]] = r["count"]
    immediate = immediate_stats(wh)
    stored = wh.subscriptions()
    subscriptions = [
        {
            **s,
            "queued_commands": depth.get(s["subscriber"], 0),
            "conflicts": dict(sorted(conflicts.get(s["subscriber"], {}).items())),
            "immediate": immediate.get(s["subscriber"]),
        }
        for s in stored
    ]
    last_run = None
    if wh.exists("queue_reader_history"):
        last = spark.table(wh.table("queue_reader_history")).orderBy("batch_id", ascending=False).limit(1).collect()
        last_run = last[0].asDict() if last else None
    return {
        "publication": pub,
        "subscriptions": subscriptions,
        "last_run": last_run,
        "run_lock": current_holder(wh),
        "identity_ranges": identity_ranges(schema) if any(a.identity for a in pub.articles) else [],
        # rows two partitions both hold (docs/spec.md §11), when some subscription has a filter
        "partition_overlap": overlaps_of(wh, stored)["total"] if any(s.get("partition_spec") for s in stored) else None,
    }
