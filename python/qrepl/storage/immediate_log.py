"""What immediate updating decided (docs/update-modes.md): one `immediate_transactions` row per
transaction decided at the publisher (applied, rejected, or a fallback to the queue), the
conflicting rows of a rejection in `immediate_rejections`, and the counts `qrepl status` and
the viewer show."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..core.values import dumps
from .warehouse import IMMEDIATE_REJECTIONS_SCHEMA, IMMEDIATE_TRANSACTIONS_SCHEMA, Warehouse


def record_outcome(
    wh: Warehouse, subscriber: str, tran_id: str, outcome: str, rows: int, at: datetime, mismatches: list[dict] = ()
) -> None:
    """One immediate_transactions row; for a rejection, its conflicting rows in immediate_rejections."""
    if mismatches:
        if not wh.exists("immediate_rejections"):
            wh.create_own("immediate_rejections")
        columns = [c.split()[0] for c in IMMEDIATE_REJECTIONS_SCHEMA.split(", ")]
        images = ("publisher_row", "subscriber_row")
        wh.spark.createDataFrame(
            [
                tuple((dumps(m[c]) if m[c] is not None else None) if c in images else m[c] for c in columns)
                for m in mismatches
            ],
            IMMEDIATE_REJECTIONS_SCHEMA,
        ).writeTo(wh.table("immediate_rejections")).append()
    if not wh.exists("immediate_transactions"):
        wh.create_own("immediate_transactions")
    wh.spark.createDataFrame([(subscriber, tran_id, outcome, rows, at)], IMMEDIATE_TRANSACTIONS_SCHEMA).writeTo(
        wh.table("immediate_transactions")
    ).append()


def immediate_stats(wh) -> dict[str, dict[str, Any]]:
    """Per subscriber: immediate transactions decided at the publisher, how many were
    rejected, the rejected share, the last rejection's time, and the last automatic fallback
    to the queue (publisher unreachable)."""
    if not wh.exists("immediate_transactions"):
        return {}
    from pyspark.sql import functions as F

    decided = F.col("outcome").isin("applied", "rejected")
    rows = (
        wh.spark.table(wh.table("immediate_transactions"))
        .groupBy("subscriber")
        .agg(
            F.sum(F.when(decided, 1).otherwise(0)).alias("transactions"),
            F.sum(F.when(F.col("outcome") == "rejected", 1).otherwise(0)).alias("rejected"),
            F.max(F.when(F.col("outcome") == "rejected", F.col("decided_at"))).alias("last_rejected_at"),
            F.max(F.when(F.col("outcome") == "fallback", F.col("decided_at"))).alias("last_fallback_at"),
        )
        .collect()
    )
    return {
        r["subscriber"]: {
            "subscriber": r["subscriber"],
            "transactions": r["transactions"],
            "rejected": r["rejected"],
            "rejected_rate": r["rejected"] / max(r["transactions"], 1),
            "last_rejected_at": r["last_rejected_at"],
            "last_fallback_at": r["last_fallback_at"],
        }
        for r in rows
    }
