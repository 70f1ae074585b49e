"""What-if on the real queue (`qrepl whatif`): the transactions of past batches of a live
publication replayed under other policies, side by side.

The replay starts from the publisher as it was when the first batch started (Iceberg time
travel: each article table's snapshot current at that batch's `started_at`), with the
subscriptions (and their row filters) as that batch cut them, and feeds each batch's queued
commands (the raw queue rows the batch took, from `int_batch_commands`) to a queue reader in
a scratch schema, one run per batch. Reinitializations and dropped subscriptions between the batches are replayed
from the later batches' cuts; publisher-local writes between the batches are not (the
what-if compares policies on the queued transactions). The live schema is only read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from ..core.partitions import columns_of, partition_of
from ..core.vocabulary import CONFLICT_CODES, ConfigError, Progress, normalize_policy
from .replay import ReferenceBackend, Scenario, SparkBackend, normalized_outputs
from ..storage.replica import table_at
from ..storage.open import warehouse
from ..storage.warehouse import QUEUE_COLUMNS, Warehouse, readable

OUTCOMES = ("applied", "applied_with_conflicts", "rejected", "rejected_reinit")


@dataclass
class Batch:
    batch_id: int
    started_at: Any
    subscriptions: list[dict]  # as the batch cut them: subscriber, status, generation, partition_spec
    queue_rows: list[dict]


def read_batches(wh: Warehouse, first: int, last: int) -> list[Batch]:
    """Batches first..last of the live publication (finished ones only)."""
    if not wh.exists("queue_reader_history"):
        raise ConfigError(f"schema {wh.schema} has no queue-reader runs yet: nothing to replay")
    spark = wh.spark
    history = spark.table(wh.table("queue_reader_history"))
    runs = {
        r.batch_id: r.started_at
        for r in history.where((history.batch_id >= first) & (history.batch_id <= last))
        .select("batch_id", "started_at")
        .collect()
    }
    missing = [b for b in range(first, last + 1) if b not in runs]
    if missing:
        raise ConfigError(
            f"batch {missing[0]} is not a finished batch of {wh.schema} (qrepl status shows the last one)"
        )
    cut = spark.table(wh.table("int_batch_subscriptions"))
    # the queue rows each batch took, as it read them (staged: op upper case, versions lower
    # case, which staging them again leaves as they are). Not the queue joined on the command
    # identity: a row with the identity of a taken command but other content is a later
    # batch's (quarantined there), and the join would give it to both batches.
    taken = spark.table(wh.table("int_batch_commands"))
    from pyspark.sql.functions import lit

    # each transaction's queue order as the batch cut it (a batch log older than the column has none)
    order = taken.queue_order if "queue_order" in taken.columns else lit(None).cast("bigint")
    rows = (
        taken.where((taken.batch_id >= first) & (taken.batch_id <= last))
        .select("batch_id", *QUEUE_COLUMNS, order.alias("queue_order"))
        .distinct()
        .collect()
    )
    # each subscription's row filters as the batch cut them (docs/spec.md §11; a batch log older
    # than partitions has none)
    spec = cut.partition_spec if "partition_spec" in cut.columns else lit(None).cast("string")
    batches = []
    for batch_id in range(first, last + 1):
        subs = [
            r.asDict()
            for r in cut.where(cut.batch_id == batch_id)
            .select("subscriber", "status", "generation", spec.alias("partition_spec"))
            .collect()
        ]
        mine = [
            {**{c: r[c] for c in QUEUE_COLUMNS}, "queue_order": r.queue_order} for r in rows if r.batch_id == batch_id
        ]
        batches.append(Batch(batch_id, runs[batch_id], subs, mine))
    return batches


def publisher_before(wh: Warehouse, batch: Batch) -> dict[str, list[dict]]:
    """Each article's rows in the snapshot current when the batch started. Refused (one line)
    when that snapshot was expired (`qrepl maintain`): the table is not empty then, only its
    past is gone, and replaying from nothing would report wrong numbers."""
    out = {}
    for article in wh.require_publication().articles:
        snapshots = {
            r.snapshot_id: r.parent_id
            for r in wh.spark.table(f"{wh.article_table(article)}.snapshots")
            .select("snapshot_id", "parent_id")
            .collect()
        }
        history = wh.spark.table(f"{wh.article_table(article)}.history")
        before = (
            history.where(history.made_current_at <= batch.started_at)
            .orderBy(history.made_current_at.desc())
            .select("snapshot_id")
            .first()
        )
        # a snapshot whose parent is gone: the table's history before it was expired
        expired_past = any(parent is not None and parent not in snapshots for parent in snapshots.values())
        if (before is not None and before.snapshot_id not in snapshots) or (before is None and expired_past):
            raise ConfigError(
                f"what-if needs article {article.name} as it was when batch {batch.batch_id} started "
                f"({batch.started_at}), but that snapshot was expired (qrepl maintain): replay later batches only "
                f"(--batches N..M)"
            )
        rows = readable(table_at(wh, article, before.snapshot_id if before else None), article).collect()
        out[article.name] = [r.asDict() for r in rows]
    return out


SCRATCH_MARKER = "qrepl_whatif_scratch"


def check_scratch(wh: Warehouse, scratch: str) -> None:
    """Refuse to use (and so drop) `scratch` unless it is empty or whatif made it: it holds
    the marker table whatif writes into every scratch schema it creates."""
    spark = wh.spark
    if not spark.catalog.databaseExists(scratch):
        return
    tables = {t.name for t in spark.catalog.listTables(scratch) if not t.isTemporary}
    if tables and SCRATCH_MARKER not in tables:
        raise ConfigError(
            f"schema {scratch} exists and was not made by qrepl whatif (it has no table "
            f"{SCRATCH_MARKER}); whatif would drop it: drop or rename it yourself first"
        )


def backend_publication(backend):
    return backend.reader.publication if isinstance(backend, ReferenceBackend) else backend.wh.require_publication()


def _follow_subscriptions(backend, batch: Batch) -> None:
    """Bring the replay's subscriptions to the batch's cut: drop, add, reinitialize, their
    row filters, mark."""
    if isinstance(backend, ReferenceBackend):
        current = {s: sub.generation for s, sub in backend.reader.subscriptions.items()}
    else:
        current = {s["subscriber"]: s["generation"] for s in backend.wh.subscriptions()}
    wanted = {s["subscriber"]: s for s in batch.subscriptions}
    for name in current.keys() - wanted.keys():
        backend.drop_subscription(name)
    for name, sub in wanted.items():
        if name not in current:
            backend.add_subscription(name)
            current[name] = backend.generation_of(name)  # above a dropped subscription's (its tombstone)
        while current[name] < sub["generation"]:
            backend.reinitialize(name)
            current[name] += 1
        partition = partition_of(backend_publication(backend), sub.get("partition_spec"))
        lists = columns_of(backend_publication(backend), sub.get("partition_spec"))
        if isinstance(backend, ReferenceBackend):
            backend.reader.subscriptions[name].partition = partition
            backend.reader.subscriptions[name].columns = dict(lists)
        else:
            held = backend.wh.subscription(name)
            if (backend.wh.partition(held), backend.wh.columns(held)) != (partition, lists):
                backend.wh.set_partition(name, partition, lists)
        if sub["status"] == "reinit_pending":
            if isinstance(backend, ReferenceBackend):
                backend.reader.subscriptions[name].status = "reinit_pending"
            else:
                backend.wh.update_subscription(name, "reinit_pending", sub["generation"], None, "before the what-if")


def replay_batches(
    wh: Warehouse, batches: list[Batch], policy: str, reference: bool, scratch: str
) -> dict[str, list[dict]]:
    """The batches under `policy`, from the publisher before the first one; normalized outputs."""
    live = wh.require_publication()
    # the scratch schema gets its own article tables (named after the articles), never the
    # live ones an article's table: names
    pub = replace(live, policy=policy, articles=[replace(a, table=None) for a in live.articles])
    scenario = Scenario("whatif", pub, [], [])
    if reference:
        backend = ReferenceBackend(scenario)
    else:
        check_scratch(wh, scratch)
        backend = SparkBackend(scenario, scratch)
        backend.wh._create(SCRATCH_MARKER, "made_by STRING")  # what check_scratch looks for
    for article, rows in publisher_before(wh, batches[0]).items():
        backend.put_publisher_rows(article, rows)
    for batch in batches:
        _follow_subscriptions(backend, batch)
        # commit by commit, in the queue order the batch cut recorded: the order in which the
        # transactions reached the queue is what decides (docs/spec.md §5, Order)
        commits: dict[Any, list[dict]] = {}
        for row in batch.queue_rows:
            commits.setdefault(row.get("queue_order"), []).append(row)
        for order in sorted(commits, key=lambda o: (o is not None, o or 0)):
            backend.enqueue(commits[order])
        backend.run(batch.started_at)
    return normalized_outputs(scenario, backend.outputs())


def summarize(outputs: dict[str, list[dict]], pub) -> dict[str, Any]:
    rows = {}
    for article in pub.articles:
        for row in outputs[f"publisher/{article.name}"]:
            rows[(article.name, tuple(row[k] for k in article.key))] = row
    return {
        "outcomes": Counter(o["outcome"] for o in outputs["transaction_outcomes"]),
        "conflicts": Counter(c["conflict_type"] for c in outputs["conflicts"]),
        "rows": rows,
        "reinit": sorted(s["subscriber"] for s in outputs["subscriptions"] if s["status"] == "reinit_pending"),
    }


def whatif(
    schema: str | None,
    policies: list[str],
    first: int,
    last: int | None = None,
    reference: bool = False,
    progress: Progress = lambda _: None,
) -> dict[str, dict[str, Any]]:
    """Replay batches first..last (default: to the newest) under the publication's own policy
    and each of `policies`; returns per policy its normalized outputs and summary."""
    wh = warehouse(schema)
    live = wh.require_publication()
    if last is None:
        last = (
            wh.spark.table(wh.table("queue_reader_history")).agg({"batch_id": "max"}).first()[0]
            if wh.exists("queue_reader_history")
            else None
        )
        if last is None:
            raise ConfigError(f"schema {wh.schema} has no queue-reader runs yet: nothing to replay")
    if first < 1 or last < first:
        raise ConfigError(f"batches must be N..M with 1 <= N <= M, got {first}..{last}")
    batches = read_batches(wh, first, last)
    scratch = f"{wh.schema}_whatif"
    if not reference:
        check_scratch(wh, scratch)
    publisher_before(wh, batches[0])  # refused before any replay if that snapshot is gone
    results = {}
    for policy in dict.fromkeys([live.policy, *(normalize_policy(p) for p in policies)]):
        progress(
            f"what-if: batches {first}..{last} under {policy} "
            f"({'reference' if reference else 'spark + dbt in schema ' + scratch})"
        )
        outputs = replay_batches(wh, batches, policy, reference, scratch)
        results[policy] = {"outputs": outputs, **summarize(outputs, live)}
    if not reference:
        Warehouse(wh.spark, scratch).drop_schema()
    return results


def rows_differing(rows: dict, base: dict) -> int:
    """Publisher rows (by article and key) whose final state differs, absence included."""
    return sum(1 for where in rows.keys() | base.keys() if rows.get(where) != base.get(where))


def whatif_table(results: dict[str, dict[str, Any]], live_policy: str) -> list[str]:
    """The side-by-side text: one column per policy, the publication's own first (marked *)."""
    policies = list(results)
    base = results[live_policy]["rows"]
    lines = [("", *[p + ("*" if p == live_policy else "") for p in policies])]
    for outcome in OUTCOMES:
        lines.append((f"transactions {outcome}", *[str(results[p]["outcomes"][outcome]) for p in policies]))
    for kind in CONFLICT_CODES:
        lines.append((f"conflicts {kind}", *[str(results[p]["conflicts"][kind]) for p in policies]))
    lines.append(
        (f"rows differing from {live_policy}*", *[str(rows_differing(results[p]["rows"], base)) for p in policies])
    )
    lines.append(("subscribers reinitialized", *[", ".join(results[p]["reinit"]) or "-" for p in policies]))
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    return ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in lines]
