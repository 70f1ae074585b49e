"""Services behind the CLI: each does one job on the publisher's warehouse."""

from __future__ import annotations

import json
import os
from datetime import datetime
from decimal import Decimal
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


def add_subscription(schema: str | None, subscriber: str, echo: Echo = print) -> None:
    """Subscribe and deliver the initial snapshot. The subscription row is written first and
    the snapshot records itself last, so a rerun after a crash at any point finishes the
    subscription instead of failing on it."""
    from .replica import has_snapshot, snapshot_replica

    wh = warehouse(schema)
    existing = wh.subscription(subscriber)
    if existing is None:
        wh.add_subscription(subscriber)
    elif has_snapshot(wh, subscriber):
        raise ConfigError(f"subscriber {subscriber} is already subscribed to {wh.require_publication().name}")
    else:
        echo(f"{subscriber}: subscribed earlier, its initial snapshot was not finished: delivering it now")
    snapshot_replica(wh, subscriber, echo)


def run_reader(schema: str | None = None, echo: Echo = print, wait_seconds: float = 0) -> dict[str, Any]:
    """One queue-reader run. Fails fast (RunLocked) while another reader holds the run lock,
    or waits up to `wait_seconds` for it; a lock left by a dead qrepl process on this host is
    recovered first."""
    from .dbt_runner import run_queue_reader
    from .run_lock import wait_until_free

    wh = warehouse(schema)
    wh.require_publication()
    wait_until_free(wh, wait_seconds, echo)
    echo(f"queue reader: dbt run on schema {wh.schema} ...")
    run_queue_reader(wh.schema, progress=echo)
    last = wh.spark.table(wh.table("queue_reader_history")).orderBy("batch_id", ascending=False).limit(1).collect()[0]
    return last.asDict()


def list_conflicts(schema: str | None = None, article: str | None = None, subscriber: str | None = None,
                   conflict_type: str | None = None, since: datetime | None = None, until: datetime | None = None,
                   conflict_id: str | None = None, publication: str | None = None) -> list[dict]:
    """Conflicts, oldest first; filters travel as DataFrame predicates, never as SQL text.
    `since` is inclusive and `until` exclusive, both compared with detected_at (UTC)."""
    wh = warehouse(schema)
    if not wh.exists("conflicts"):
        return []
    df = wh.spark.table(wh.table("conflicts"))
    for column, value in (("article", article), ("subscriber", subscriber), ("conflict_type", conflict_type),
                          ("conflict_id", conflict_id), ("publication", publication)):
        if value is not None:
            df = df.where(df[column] == value)
    if since is not None:
        df = df.where(df["detected_at"] >= since)
    if until is not None:
        df = df.where(df["detected_at"] < until)
    rows = [r.asDict() for r in df.orderBy("detected_at", "subscriber", "tran_id", "command_seq").collect()]
    for r in rows:
        for image in ("publisher_row", "subscriber_row"):
            r[image] = json.loads(r[image], parse_float=Decimal) if r[image] else None
    return rows


def conflict_detail(c: dict) -> list[str]:
    """A conflict's detail: the winning and losing rows side by side, differing columns marked '*'."""
    publisher, subscriber = c.get("publisher_row"), c.get("subscriber_row")
    winner_is_publisher = c.get("winner") == "publisher"
    left = f"publisher ({'winner' if winner_is_publisher else 'loser'})"
    right = f"subscriber ({'loser' if winner_is_publisher else 'winner'})"
    columns = list(dict.fromkeys([*(publisher or {}), *(subscriber or {})]))
    cells = [("", "column", left, right)]
    for col in columns:
        pv = "(absent)" if publisher is None else _cell(publisher.get(col))
        sv = ("(deleted)" if c["conflict_type"].startswith("delete") else "(absent)") if subscriber is None \
            else _cell(subscriber.get(col))
        cells.append(("*" if pv != sv else "", col, pv, sv))
    if not columns:
        cells.append(("*", "(row)", "(absent)", "(absent)"))
    widths = [max(len(row[i]) for row in cells) for i in range(4)]
    lines = [
        f"conflict {c['conflict_id']}: {c['conflict_type']} (code {c['conflict_type_code']}), winner {c['winner']}",
        f"  {c['reason_text']}",
        f"  article {c['article']} row {c['row_key']}; subscriber {c['subscriber']} transaction {c['tran_id']} "
        f"command {c['command_seq']}; batch {c['batch_id']} at {c['detected_at']}; policy {c['policy']}",
        f"  versions: publisher {c['publisher_version']}, subscriber saw {c['old_version']}, "
        f"subscriber wrote {c['new_version'] or '(a delete)'}",
        "",
    ]
    for row in cells:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    return lines


def _cell(value: Any) -> str:
    return "null" if value is None else str(value)


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
            kept = getattr(h, "publisher_rows_kept", 0) or 0
            lines.append(f"last run: batch {h.batch_id} at {h.started_at}: {h.transactions_processed} transactions, "
                         f"{h.conflicts} conflicts, {h.rejected} rejected, {h.quarantined} quarantined"
                         + (f", {kept} publisher row(s) kept (changed at the publisher during the run)" if kept else ""))
    from .run_lock import current_holder

    holder = current_holder(wh)
    if holder is not None:
        lines.append(f"run lock: held by {holder.holder} since {holder.acquired_at}")
    return lines
