"""Services behind the CLI: each does one job on the publisher's warehouse."""

from __future__ import annotations

import json
from decimal import Decimal
import os
from pathlib import Path
from typing import Any, Callable

import yaml

from .model import ConfigError, Publication, publication_from_dict

Echo = Callable[[str], None]


def default_schema() -> str:
    return os.environ.get("QREPL_SCHEMA", "qrepl")


def warehouse(schema: str | None = None):
    from .spark import get_spark
    from .warehouse import Warehouse

    return Warehouse(get_spark(), schema or default_schema())


def load_publication_file(path: Path) -> Publication:
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read publication config {path}: {exc}") from exc
    return publication_from_dict(data)


def create_publication(path: Path, schema: str | None = None, seed: bool = False, echo: Echo = print) -> Publication:
    """Create (or update) the publication's tables; with seed, load initial rows from seeds/."""
    pub = load_publication_file(path)
    wh = warehouse(schema)
    wh.write_publication(pub)
    if seed:
        from .dbt_runner import dbt_invoke

        echo("loading initial publisher rows from seeds/ (dbt seed)")
        dbt_invoke(["seed"], wh.schema)
        for article in pub.articles:
            seed_table = wh.table(f"demo_{article.name}")
            cols = ", ".join(article.columns)
            wh.spark.sql(f"insert into {wh.table(article.name)} select {cols}, uuid() from {seed_table}")
    return pub


def run_reader(schema: str | None = None, echo: Echo = print) -> dict[str, Any]:
    from .dbt_runner import run_queue_reader

    wh = warehouse(schema)
    wh.require_publication()
    echo(f"queue reader: dbt run on schema {wh.schema} ...")
    run_queue_reader(wh.schema)
    last = wh.spark.table(wh.table("queue_reader_history")).orderBy("batch_id", ascending=False).limit(1).collect()[0]
    return last.asDict()


def list_conflicts(schema: str | None = None, article: str | None = None, subscriber: str | None = None,
                   conflict_type: str | None = None) -> list[dict]:
    wh = warehouse(schema)
    if not wh.exists("conflicts"):
        return []
    df = wh.spark.table(wh.table("conflicts"))
    for column, value in (("article", article), ("subscriber", subscriber), ("conflict_type", conflict_type)):
        if value is not None:
            df = df.where(df[column] == value)
    rows = [r.asDict() for r in df.orderBy("detected_at", "subscriber", "tran_id", "command_seq").collect()]
    for r in rows:
        for image in ("publisher_row", "subscriber_row"):
            r[image] = json.loads(r[image], parse_float=Decimal) if r[image] else None
    return rows


def remove_conflicts(schema: str | None, conflict_ids: list[str]) -> int:
    """Delete reviewed conflicts by id (ids travel in a DataFrame, not in SQL text)."""
    wh = warehouse(schema)
    if not wh.exists("conflicts"):
        return 0
    ids = wh.spark.createDataFrame([(i,) for i in conflict_ids], "conflict_id STRING")
    ids.createOrReplaceTempView("qrepl_conflicts_to_remove")
    before = wh.spark.table(wh.table("conflicts")).count()
    wh.spark.sql(f"delete from {wh.table('conflicts')} where conflict_id in "
                 f"(select conflict_id from qrepl_conflicts_to_remove)")
    return before - wh.spark.table(wh.table("conflicts")).count()


def status_report(schema: str | None) -> list[str]:
    wh = warehouse(schema)
    pub = wh.require_publication()
    spark = wh.spark
    lines = [f"publication {pub.name}: policy {pub.policy}, articles {', '.join(a.name for a in pub.articles)}"]
    queue = spark.table(wh.table("replication_queue"))
    if wh.exists("int_batch_commands"):
        batched = spark.table(wh.table("int_batch_commands")).select(
            "subscriber", "tran_id", "command_seq", "enqueued_at")
        queue = queue.join(batched, ["subscriber", "tran_id", "command_seq", "enqueued_at"], "left_anti")
    depth = {r["subscriber"]: r["count"] for r in queue.groupBy("subscriber").count().collect()}
    conflicts = {}
    if wh.exists("conflicts"):
        conflicts = {(r["subscriber"], r["article"]): r["count"]
                     for r in spark.table(wh.table("conflicts")).groupBy("subscriber", "article").count().collect()}
    for s in wh.subscriptions():
        per_article = ", ".join(f"{a}: {n}" for (sub, a), n in sorted(conflicts.items()) if sub == s["subscriber"])
        lines.append(f"  {s['subscriber']:<12} {s['status']:<15} generation {s['generation']}  "
                     f"queued commands {depth.get(s['subscriber'], 0)}  conflicts {per_article or 0}")
    if wh.exists("queue_reader_history"):
        last = spark.table(wh.table("queue_reader_history")).orderBy("batch_id", ascending=False).limit(1).collect()
        if last:
            h = last[0]
            lines.append(f"last run: batch {h.batch_id} at {h.started_at}: {h.transactions_processed} transactions, "
                         f"{h.conflicts} conflicts, {h.rejected} rejected, {h.quarantined} quarantined")
    return lines
