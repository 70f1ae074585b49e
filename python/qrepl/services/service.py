"""Services behind the CLI: each does one job on the publisher's warehouse."""

from __future__ import annotations

import getpass
import json
import os
import re
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import yaml

from ..core.model import (
    PUBLISHER_RANGE_OWNER,
    ConfigError,
    Publication,
    check_identifier,
    check_type,
    normalize_policy,
    normalize_update_mode,
    publication_from_dict,
    switch_refusal,
)

Echo = Callable[[str], None]

# a conflict_reviews row that removes its conflict from the lists (macro qrepl_remove_conflicts)
REMOVED = "removed"


def default_schema() -> str:
    return os.environ.get("QREPL_SCHEMA", "qrepl")


def warehouse(schema: str | None = None):
    from ..storage.spark import get_spark
    from ..storage.warehouse import Warehouse

    return Warehouse(get_spark(), schema or default_schema())


def project_file(*parts: str) -> Path:
    """A file of the dbt project qrepl runs (the checkout, or the copy an installed package holds)."""
    from ..storage.spark import PROJECT_DIR

    return PROJECT_DIR.joinpath(*parts)


def output_dir(*parts: str) -> Path:
    """Where qrepl writes its outputs: beside the checkout, or in the working directory of an
    installed package."""
    from ..storage.spark import WORK_DIR

    return WORK_DIR.joinpath(*parts)


def run_dbt(schema: str | None, args: list[str], quiet: bool = True) -> None:
    """Any dbt command on the embedded Spark, on the publication in `schema` (`qrepl dbt`)."""
    from ..storage.dbt_runner import dbt_invoke

    dbt_invoke(args, check_identifier(schema or default_schema(), "schema"), quiet=quiet)


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
    # a table published in place: every row it already holds gets a version
    from ..storage.dbt_runner import stamp_publisher

    stamp_publisher(wh)
    # identity ranges: the publisher's, and every subscriber's (an identity declared later included)
    from ..storage.identity_ranges import ensure_ranges

    ensure_ranges(wh, PUBLISHER_RANGE_OWNER, pub.articles)
    for sub in wh.subscriptions():
        ensure_ranges(wh, sub["subscriber"], pub.articles)
    if seed:
        from ..storage.dbt_runner import dbt_invoke

        echo("loading initial publisher rows from seeds/ (dbt seed)")
        dbt_invoke(["seed"], wh.schema)
        for article in pub.articles:
            seed_table = wh.table(f"demo_{article.name}")
            cols = ", ".join(article.columns)
            wh.spark.sql(f"insert into {wh.article_table(article)} select {cols}, uuid() from {seed_table}")
    return pub


def describe_table(table: str, key: list[str], publication_schema: str | None = None) -> str:
    """The YAML article declaration of an existing table (`qrepl publication describe`); a
    table outside `publication_schema` is named by the article's `table:`."""
    parts = table.split(".")
    if len(parts) != 2:
        raise ConfigError(f"--table must be SCHEMA.TABLE, got {table!r}")
    schema, name = (check_identifier(p, "table") for p in parts)
    wh = warehouse(schema)
    if not wh.exists(name):
        raise ConfigError(f"no table {schema}.{name}")
    columns = wh.table_columns(name)
    columns.pop("msrepl_tran_version", None)
    for c, t in columns.items():
        check_type(t, c)
    missing = [k for k in key if k not in columns]
    if missing:
        raise ConfigError(f"key column(s) {', '.join(missing)} not in {schema}.{name} ({', '.join(columns)})")
    article = {"name": name, "key": list(key), "columns": columns}
    if publication_schema is not None and schema.lower() != publication_schema.lower():
        article["table"] = f"{schema}.{name}"
    publication_from_dict({"publication": "check", "articles": [article]})  # the rules a declaration obeys
    return yaml.safe_dump([article], sort_keys=False, default_flow_style=None)


def add_subscription(schema: str | None, subscriber: str, echo: Echo = print, update_mode: str = "queued") -> dict:
    """Subscribe (with an update mode, docs/update-modes.md) and deliver the initial
    snapshot; returns the subscription. The subscription row is written first and the snapshot records itself last, so
    a rerun after a crash at any point finishes the subscription instead of failing on it."""
    from ..storage.replica import has_snapshot, snapshot_pins, snapshot_replica, unpin_snapshots

    mode = normalize_update_mode(update_mode)
    wh = warehouse(schema)
    wh.require_publication()  # one line if the schema has none
    existing = wh.subscription(subscriber)
    if existing is None:
        wh.add_subscription(subscriber, mode)
    elif has_snapshot(wh, subscriber):
        if any(s == subscriber for s, _ in snapshot_pins(wh)):  # crashed after recording, before unpinning
            unpin_snapshots(wh, subscriber)
            echo(f"{subscriber}: subscribed earlier, its initial snapshot was recorded: finished")
            return wh.subscription(subscriber)
        raise ConfigError(f"subscriber {subscriber} is already subscribed to {wh.require_publication().name}")
    else:
        echo(f"{subscriber}: subscribed earlier, its initial snapshot was not finished: delivering it now")
    from ..storage.identity_ranges import ensure_ranges

    ensure_ranges(wh, subscriber, wh.require_publication().articles)
    snapshot_replica(wh, subscriber, echo)
    return wh.subscription(subscriber)


def assign_identity_range(schema: str | None, owner: str, article: str | None = None) -> list[tuple[str, int, int]]:
    """Give the publisher (owner PUBLISHER_RANGE_OWNER) or a subscriber the next identity range
    of an article (every identity article when None): what a used-up range asks for. Returns
    (article, start, end) per range assigned."""
    from ..storage.identity_ranges import assign_range

    wh = warehouse(schema)
    pub = wh.require_publication()
    if owner != PUBLISHER_RANGE_OWNER and wh.subscription(owner) is None:
        raise ConfigError(f"no subscription for subscriber {owner}")
    chosen = [a for a in pub.articles if a.identity and (article is None or a.name == article)]
    if not chosen:
        raise ConfigError(f"article {article} has no identity column" if article
                          else f"publication {pub.name} has no article with an identity column")
    return [(a.name, *assign_range(wh, owner, a)) for a in chosen]


def identity_ranges(schema: str | None) -> list[dict]:
    """Every owner's current identity range, per identity article, and the values it has left."""
    from ..storage.identity_ranges import claimed_value, current_range, highest_value

    wh = warehouse(schema)
    pub = wh.require_publication()
    out = []
    owners = [PUBLISHER_RANGE_OWNER] + [s["subscriber"] for s in wh.subscriptions()]
    for a in pub.articles:
        if not a.identity:
            continue
        for owner in owners:
            rng = current_range(wh, owner, a.name)
            if rng is None:
                continue
            table = wh.article_table(a) if owner == PUBLISHER_RANGE_OWNER else f"{wh.schema}__{owner}.{a.name}"
            held = highest_value(wh, table, a, rng) if wh.spark.catalog.tableExists(table) else None
            highest = max([v for v in (held, claimed_value(wh, owner, a.name)) if v is not None], default=None)
            out.append({"article": a.name, "owner": owner or "publisher", "range_start": rng[0], "range_end": rng[1],
                        "left": rng[1] - max(highest or rng[0] - 1, rng[0] - 1)})
    return out


def drop_publication(schema: str | None, subscribers: tuple[str, ...] = ()) -> None:
    """Drop a publication's schema with every table in it, and the replica schemas of its
    subscriptions (and of `subscribers`, named whether or not they are subscribed). For a
    demo or a test; a user's table published in place in the publication's schema goes with
    it, one in another schema (an article's `table:`) is kept, unmarked (docs/publishing.md)."""
    from ..storage.replica import replica_schema
    from ..storage.warehouse import Warehouse

    wh = warehouse(schema)
    names = set(subscribers)
    if wh.exists("subscriptions"):
        names |= {s["subscriber"] for s in wh.subscriptions()}
    for name in sorted(names):
        Warehouse(wh.spark, replica_schema(wh, name)).drop_schema()
    if wh.exists("qrepl_publication"):
        wh.unpublish_tables()
    wh.drop_schema()


def publication(schema: str | None) -> Publication:
    """The publication's settings and articles (one line if the schema has none)."""
    return warehouse(schema).require_publication()


def set_policy(schema: str | None, policy: str) -> Publication:
    """Change the conflict policy (only while the publication has no subscriptions)."""
    return warehouse(schema).set_policy(normalize_policy(policy))


def list_subscriptions(schema: str | None) -> list[dict]:
    """Every subscription with its status, generation and update mode."""
    return warehouse(schema).subscriptions()


def drop_subscription(schema: str | None, subscriber: str) -> None:
    """Drop a subscription; its queued rows the queue reader has not taken are never applied."""
    warehouse(schema).drop_subscription(subscriber)


def unlock(schema: str | None, force: bool = False, echo: Echo = print):
    """Remove the queue reader's run lock left by a process that died; returns the holder
    removed (a run_lock.LockHolder), or None when no lock was held."""
    from ..storage.run_lock import release

    return release(warehouse(schema), force=force, echo=echo)


def transaction_outcomes(schema: str | None = None) -> list[dict]:
    """What the queue reader decided for each transaction, in processing order."""
    wh = warehouse(schema)
    if not wh.exists("transaction_outcomes"):
        return []
    return [r.asDict() for r in wh.spark.table(wh.table("transaction_outcomes")).orderBy("tran_pos").collect()]


def _unapplied_queue(wh):
    """The queued commands no finished queue-reader batch has taken (a DataFrame)."""
    from pyspark.sql import functions as F

    from ..storage.warehouse import QUEUE_COLUMNS

    queue = wh.spark.table(wh.table("replication_queue"))
    if wh.exists("int_batch_commands") and wh.exists("queue_reader_history"):
        finished = wh.spark.table(wh.table("queue_reader_history")).select("batch_id")
        taken = wh.spark.table(wh.table("int_batch_commands")).join(finished, "batch_id", "left_semi") \
            .select(*QUEUE_COLUMNS).distinct().alias("taken")
        # a row is taken only if a batch took that very content (as staging reads it: op upper
        # case, versions lower case); a row with a taken command's identity but other content
        # is still to come (the next batch quarantines it)
        staged = {"op": F.upper, "old_version": F.lower, "new_version": F.lower}
        same = [staged.get(c, lambda col: col)(F.col(f"queued.{c}")).eqNullSafe(F.col(f"taken.{c}"))
                for c in QUEUE_COLUMNS]
        queue = queue.alias("queued").join(taken, same, "left_anti")
    return queue


def _reader_ran_since_init(wh, subscription: dict) -> bool:
    """Whether a finished queue-reader batch was cut with the subscription at its current
    generation (the queue reader has run once since its initialization)."""
    if not (wh.exists("int_batch_subscriptions") and wh.exists("queue_reader_history")):
        return False
    cut = wh.spark.table(wh.table("int_batch_subscriptions"))
    cut = cut.where((cut.subscriber == subscription["subscriber"]) & (cut.generation == subscription["generation"]))
    finished = wh.spark.table(wh.table("queue_reader_history")).select("batch_id")
    return not cut.join(finished, "batch_id", "left_semi").isEmpty()


def set_mode(schema: str | None, subscriber: str, mode: str) -> dict:
    """Switch a failover subscription between queued and immediate (SQL Server's
    sp_setreplfailovermode); refused with one line when the rules of docs/update-modes.md say no."""
    wh = warehouse(schema)
    sub = wh.subscription(subscriber)
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    target = mode.strip().lower()
    pending = _unapplied_queue(wh)
    pending = pending.where(pending.subscriber == subscriber).count() if target == "immediate" else 0
    ran = target != "immediate" or _reader_ran_since_init(wh, sub)
    why = switch_refusal(subscriber, sub["update_mode"], target, pending, ran)
    if why:
        raise ConfigError(why)
    wh.set_current_mode(subscriber, target)
    return {**sub, "current_mode": target}


def run_reader(schema: str | None = None, echo: Echo = print, wait_seconds: float = 0) -> dict[str, Any]:
    """One queue-reader run. Fails fast (RunLocked) while another reader holds the run lock,
    or waits up to `wait_seconds` for it; a lock whose holder's lease expired (a qrepl run that
    died) is recovered first."""
    from ..storage.dbt_runner import run_queue_reader
    from ..storage.run_lock import wait_until_free

    from ..storage.table_formats import run_refusal

    wh = warehouse(schema)
    for article in wh.require_publication().articles:  # the trigger reads their files: fail in one line
        refusal = run_refusal(wh.spark, wh.article_table(article))
        if refusal:
            raise ConfigError(refusal)
    wait_until_free(wh, wait_seconds, echo)
    echo(f"queue reader: dbt run on schema {wh.schema} ...")
    started = datetime.now(timezone.utc).replace(tzinfo=None)
    run_queue_reader(wh.schema, progress=echo)
    last = wh.spark.table(wh.table("queue_reader_history")).orderBy("batch_id", ascending=False).limit(1).collect()[0]
    history = last.asDict()
    # rows the publisher's trigger gave a version at this run's start (writers that set none);
    # not the stamps made since the last run by publication create, distribution or an
    # immediate commit, which are recorded under the same next batch id
    history["stamped_rows"] = 0
    if wh.exists("publisher_stamps"):
        stamps = wh.spark.table(wh.table("publisher_stamps"))
        mine = stamps.where((stamps["batch_id"] == last["batch_id"]) & (stamps["stamped_at"] >= started))
        history["stamped_rows"] = int(mine.agg({"stamped_rows": "sum"}).collect()[0][0] or 0)
    return history


def list_conflicts(schema: str | None = None, article: str | None = None, subscriber: str | None = None,
                   conflict_type: str | None = None, since: datetime | None = None, until: datetime | None = None,
                   conflict_id: str | None = None, publication: str | None = None) -> list[dict]:
    """Conflicts, oldest first; filters travel as DataFrame predicates, never as SQL text.
    `since` is inclusive and `until` exclusive, both compared with detected_at (UTC)."""
    wh = warehouse(schema)
    if not wh.exists("conflicts"):
        return []
    df = _listed_conflicts(wh)
    for column, value in (("article", article), ("subscriber", subscriber), ("conflict_type", conflict_type),
                          ("conflict_id", conflict_id), ("publication", publication)):
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

    from .viewer import GROUP_FIELDS, ROW_FIELDS, VIEWER_ORDER, write_viewer

    wh = warehouse(schema)
    immediate = sorted(_immediate_stats(wh).values(), key=lambda s: s["subscriber"])
    snapshot = wh.current_snapshot("conflicts") if wh.exists("conflicts") else None
    if snapshot is None:
        return write_viewer([], [], out_dir, title, immediate)
    df = _listed_conflicts(wh, snapshot)
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
    return {r["conflict_id"]: {k: r[k] for k in ("keep", "outcome", "resolved_by", "resolved_at", "written_version")}
            for r in reviews.where(reviews.outcome != REMOVED).collect()}


def resolve_conflict(schema: str | None, conflict_id: str, keep: str, resolved_by: str | None = None) -> dict:
    """Resolve a conflict by hand (docs/conflicts.md): `keep` subscriber writes the losing row to
    the publisher by compare-and-swap, publisher closes it. The dbt macro
    qrepl_resolve_conflict does the work (the same as `dbt run-operation`); returns the review."""
    from ..storage.dbt_runner import dbt_invoke

    wh = warehouse(schema)
    user = resolved_by or os.environ.get("USER") or getpass.getuser()
    dbt_invoke(["run-operation", "qrepl_resolve_conflict", "--args",
                json.dumps({"conflict_id": conflict_id, "keep": keep, "resolved_by": user})], wh.schema)
    return _conflict_reviews(wh)[conflict_id]


def remove_conflicts(schema: str | None, conflict_ids: list[str], removed_by: str | None = None) -> int:
    """Remove reviewed conflicts from the lists: the dbt macro qrepl_remove_conflicts records
    one conflict_reviews row per conflict (outcome removed), the same as `dbt run-operation`.
    The conflicts mart itself is written only by dbt's model. Returns how many were removed
    now (not those removed before, nor ids no conflict has)."""
    from ..storage.dbt_runner import dbt_invoke

    wh = warehouse(schema)
    for conflict_id in conflict_ids:
        if not re.fullmatch(r"[0-9a-f]{32}", conflict_id):
            raise ConfigError(f"a conflict id is the 32 hex digits `qrepl conflicts` shows, got {conflict_id[:40]!r}")
    before = _removed_conflicts(wh).count()
    user = removed_by or os.environ.get("USER") or getpass.getuser()
    dbt_invoke(["run-operation", "qrepl_remove_conflicts", "--args",
                json.dumps({"conflict_ids": list(conflict_ids), "removed_by": user})], wh.schema)
    return _removed_conflicts(wh).count() - before


def _removed_conflicts(wh):
    """The ids of the conflicts removed from the lists (conflict_reviews, outcome removed), as a
    one-column DataFrame, or an empty one."""
    if not wh.exists("conflict_reviews"):
        return wh.spark.createDataFrame([], "conflict_id STRING")
    reviews = wh.spark.table(wh.table("conflict_reviews"))
    return reviews.where(reviews.outcome == REMOVED).select("conflict_id").distinct()


def _listed_conflicts(wh, snapshot: int | None = None):
    """The conflicts mart without the conflicts removed from the lists."""
    reader = wh.spark.read.option("snapshot-id", snapshot) if snapshot is not None else wh.spark.read
    return reader.table(wh.table("conflicts")).join(_removed_conflicts(wh), "conflict_id", "left_anti")


def _immediate_stats(wh) -> dict[str, dict[str, Any]]:
    """Per subscriber: immediate transactions decided at the publisher, how many were
    rejected, the rejected share, the last rejection's time, and the last automatic fallback
    to the queue (publisher unreachable)."""
    if not wh.exists("immediate_transactions"):
        return {}
    from pyspark.sql import functions as F

    decided = F.col("outcome").isin("applied", "rejected")
    rows = wh.spark.table(wh.table("immediate_transactions")).groupBy("subscriber").agg(
        F.sum(F.when(decided, 1).otherwise(0)).alias("transactions"),
        F.sum(F.when(F.col("outcome") == "rejected", 1).otherwise(0)).alias("rejected"),
        F.max(F.when(F.col("outcome") == "rejected", F.col("decided_at"))).alias("last_rejected_at"),
        F.max(F.when(F.col("outcome") == "fallback", F.col("decided_at"))).alias("last_fallback_at"),
    ).collect()
    return {r["subscriber"]: {"subscriber": r["subscriber"], "transactions": r["transactions"],
                              "rejected": r["rejected"], "rejected_rate": r["rejected"] / max(r["transactions"], 1),
                              "last_rejected_at": r["last_rejected_at"], "last_fallback_at": r["last_fallback_at"]}
            for r in rows}


def status(schema: str | None) -> dict[str, Any]:
    """The publication, each subscription with its queue depth and conflicts per article, the
    last run (a queue_reader_history row) and the run lock's holder, if any."""
    from ..storage.run_lock import current_holder

    wh = warehouse(schema)
    pub = wh.require_publication()
    spark = wh.spark
    queue = _unapplied_queue(wh)
    depth = {r["subscriber"]: r["count"] for r in queue.groupBy("subscriber").count().collect()}
    conflicts: dict[str, dict[str, int]] = {}
    if wh.exists("conflicts"):
        for r in _listed_conflicts(wh).groupBy("subscriber", "article").count().collect():
            conflicts.setdefault(r["subscriber"], {})[r["article"]] = r["count"]
    immediate = _immediate_stats(wh)
    subscriptions = [{**s, "queued_commands": depth.get(s["subscriber"], 0),
                      "conflicts": dict(sorted(conflicts.get(s["subscriber"], {}).items())),
                      "immediate": immediate.get(s["subscriber"])}
                     for s in wh.subscriptions()]
    last_run = None
    if wh.exists("queue_reader_history"):
        last = spark.table(wh.table("queue_reader_history")).orderBy("batch_id", ascending=False).limit(1).collect()
        last_run = last[0].asDict() if last else None
    return {"publication": pub, "subscriptions": subscriptions, "last_run": last_run,
            "run_lock": current_holder(wh),
            "identity_ranges": identity_ranges(schema) if any(a.identity for a in pub.articles) else []}
