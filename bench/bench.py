"""`make bench`: the queue reader against the floor and the obvious alternative, side by side.

    QREPL_STATE_DIR=.qrepl_state/bench .venv/bin/python bench/bench.py [--sizes ...] [--markdown FILE]

For every batch, in one Spark session and on identical copies of the publication:

* **reader**: `qrepl run` (the dbt project, embedded target), publisher_wins;
* **MERGE**: a bare Iceberg MERGE of the batch's net changes into a copy (the floor: no
  conflict detection, no logs);
* **Python fold**: the queue and the touched publisher versions collected to the driver,
  folded in order in a Python loop (publisher_wins), the net result MERGEd, conflicts and
  compensating commands appended (the obvious alternative). Its publisher, outcome counts and
  conflict count are checked equal to the reader's; a difference stops the bench.

Batches: typical ones mix single- and multi-row transactions (I/U/D) from 4 subscribers, 10%
of them with a stale version, over random rows; `1k` is a small batch timed against dbt's own
fixed cost (`dbt run` of one trivial model in this process). The first reader run of a process
pays the JVM's warm-up, which a long-running server pays once, so a second 1k batch, drawn
afresh over other rows, follows in the same process as its own row ("1k, next batch"), with its
own bare MERGE and fold; then the reader on a queue with nothing new. After `1M-10M`, a 1k batch
follows the same way over its 10M rows ("1k into 10M, next batch"): a warm small batch's cost
should follow the batch, not the table. `hot` updates one row 100k times;
`cascade` is a 1,000-deep cross-row cascade of two-row transactions (the first conflicts, so
the sequential reader rejects all) among 99k independent transactions. The pathological ones
are compared with the typical batch of equal size (100k changes, 1M rows).

The table's last column holds the reader's targets (`TARGETS`), each marked met or missed.

`make bench-scale` runs `10M` alone (10M changes over 10M rows, about half an hour here): the
size at which the Python fold runs out of what the driver may collect. A fold that fails is
reported with its error, and the reader's result is then not compared with anything.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from qrepl.storage.dbt_runner import run_queue_reader
from qrepl.core.publication import publication_from_dict
from qrepl.storage.spark import get_spark, on_rest_catalog
from qrepl.storage.warehouse import Warehouse

SCHEMA = "qrepl_bench"
SUBSCRIBERS = 4
PUB = {
    "publication": "bench",
    "policy": "publisher_wins",
    "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int", "note": "string"}}],
}
ORDER = ("enqueued_at", "subscriber", "tran_seq", "tran_id", "command_seq")
SIZES = {  # name: (changes, publication rows, shape)
    "1k": (1_000, 1_000_000, "typical"),
    "100k": (100_000, 1_000_000, "typical"),
    "hot": (100_000, 1_000_000, "hot"),
    "cascade": (100_000, 1_000_000, "cascade"),
    "1M": (1_000_000, 1_000_000, "typical"),
    "1M-10M": (1_000_000, 10_000_000, "typical"),
    "10M": (10_000_000, 10_000_000, "typical"),  # make bench-scale only: where the fold runs out
}
README_START, README_END = "<!-- bench table: written by make bench -->", "<!-- end of bench table -->"
DEFAULT_SIZES = ["1k", "100k", "hot", "cascade", "1M", "1M-10M"]


def version(expr: str) -> str:
    """The publisher's starting version of row `expr`: a UUID-shaped text."""
    return f"concat('00000000-0000-4000-8000-', lpad(cast({expr} as string), 12, '0'))"


def say(text: str) -> None:
    print(text, flush=True)


# -- batches ---------------------------------------------------------------------------------


def _commands_sql(shape: str, changes: int, rows: int, first: int = 0) -> str:
    """One row per queued command: transaction number t, command number c within it, row, op,
    expected version. Typical: transactions of 1–3 commands on pseudo-random rows, 80% U,
    10% D, 10% I (of new keys); every 10th transaction expects a stale version. A later batch
    (`first` > 0) draws its rows and ops afresh and inserts other new keys, so it is as
    typical as the first: not the first batch's rows again, which all conflict."""
    if shape == "typical":
        return f"""
            with commands as (
                select id as n from range({changes})
            ),
            shaped as (
                -- ids 6k..6k+5 form transactions of 1, 2 and 3 commands: (6k), (6k+1, 6k+2), (6k+3..6k+5)
                select n,
                    case when n % 6 = 0 then n when n % 6 in (1, 2) then n - n % 6 + 1 else n - n % 6 + 3 end as t,
                    case when n % 6 in (0, 1, 3) then 1 when n % 6 in (2, 4) then 2 else 3 end as c
                from commands
            )
            select t, c,
                case when pmod(hash(n + {first}, 7), 10) = 0 then 'I'
                    when pmod(hash(n + {first}, 7), 10) = 1 then 'D' else 'U' end as op,
                case when pmod(hash(n + {first}, 7), 10) = 0 then {rows} + n + {first}
                    else pmod(hash(n + {first}, 11), {rows}) end as item,
                pmod(hash(t, 13), 10) = 0 as stale
            from shaped
        """
    if shape == "hot":
        # every subscriber updates row 0 over and over, each update expecting its own previous one
        return f"""
            select id as t, 1 as c, 'U' as op, 0 as item, false as stale,
                case when id < {SUBSCRIBERS} then null else id - {SUBSCRIBERS} end as follows
            from range({changes})
        """
    # cascade: every 99th transaction is a link (rows 2i, 2i+1 ... chained through the previous
    # link's second row); the others are independent single-row updates
    links = 1000
    return f"""
        with transactions as (
            select id as t, id % 99 = 0 and id / 99 < {links} as is_link, cast(id / 99 as bigint) as link
            from range({changes - links})
        )
        select t, 1 as c, 'U' as op,
            case when is_link then {rows} - 1 - link else pmod(hash(t, 11), {rows} - {links} - 1) end as item,
            is_link and link = 0 as stale, cast(null as bigint) as follows
        from transactions
        union all
        select t, 2 as c, 'U' as op, {rows} - 2 - link as item, false as stale, cast(null as bigint) as follows
        from transactions where is_link
    """


def load_batch(spark, wh: Warehouse, shape: str, changes: int, rows: int) -> None:
    """The publication (rows 0..rows-1, qty 0) and the queue of one batch."""
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUB))
    wh.add_subscriptions([f"s{s}" for s in range(SUBSCRIBERS)])
    spark.sql(
        f"insert into {wh.table('items')} select cast(id as int), 0, concat('row ', id), {version('id')} "
        f"from range({rows})"
    )
    queue_batch(spark, wh, shape, changes, rows)
    for copy in ("items_merge", "items_fold"):
        spark.sql(
            f"create table {wh.schema}.{copy} using iceberg tblproperties ('format-version'='2', "
            f"'write.merge.mode'='merge-on-read', 'write.delete.mode'='merge-on-read', "
            f"'write.update.mode'='merge-on-read') as select * from {wh.table('items')}"
        )


def queue_batch(spark, wh: Warehouse, shape: str, changes: int, rows: int, first: int = 0) -> None:
    """Append one batch of queued commands; transaction numbers (and enqueue times) start at
    `first`, so a later batch follows the earlier ones."""
    follows = f", follows + {first} as follows" if shape == "hot" else ""  # only hot chains its updates
    commands = spark.sql(
        f"select t + {first} as t, c, op, item, stale{follows} from ({_commands_sql(shape, changes, rows, first)})"
    )
    commands.createOrReplaceTempView("bench_commands")
    if shape == "hot":
        old = (
            f"case when follows is null then {version('0')} else concat('11111111-0000-4000-8000-', "
            f"lpad(cast(follows as string), 12, '0')) end"
        )
        new = "concat('11111111-0000-4000-8000-', lpad(cast(t as string), 12, '0'))"
    elif shape == "cascade":
        # a link's first row expects what the previous link wrote there; its second row the root
        old = f"""case when stale then concat('ffffffff-0000-4000-8000-', lpad(cast(t as string), 12, '0'))
            when c = 1 and item >= {rows} - 1 - 1000 and t >= 99 and t % 99 = 0
                then concat('22222222-0000-4000-8000-', lpad(cast(t - 99 as string), 12, '0'))
            else {version("item")} end"""
        new = (
            "case when c = 2 then concat('22222222-0000-4000-8000-', lpad(cast(t as string), 12, '0')) else uuid() end"
        )
    else:
        old = f"""case when op = 'I' then null
            when stale then concat('ffffffff-0000-4000-8000-', lpad(cast(t as string), 12, '0'))
            else {version("item")} end"""
        new = "case when op = 'D' then null else uuid() end"
    spark.sql(f"""
        select concat('s', cast(t % {SUBSCRIBERS} as string)) as subscriber, 0 as generation,
            concat('t', cast(t as string)) as tran_id, t as tran_seq, c as command_seq,
            'items' as article, op,
            concat('{{"item_id":', cast(item as string), '}}') as row_key,
            {old} as old_version, {new} as new_version,
            case when op = 'D' then null
                else concat('{{"item_id":', cast(item as string), ',"qty":', cast(c as string),
                    ',"note":"changed by t', cast(t as string), '"}}') end as new_row,
            cast(null as string) as old_row,
            timestamp'2026-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, t / 1000000.0) as enqueued_at
        from bench_commands
    """).writeTo(wh.table("replication_queue")).append()


# -- the three contenders --------------------------------------------------------------------


def bare_merge(spark, wh: Warehouse, since: int = 0) -> None:
    """The floor: the batch's last command per row MERGEd into a copy, nothing checked. The
    batch is the queue's transactions from number `since` on."""
    spark.sql(f"""
        merge into {wh.schema}.items_merge as target
        using (
            select * from (
                select op, from_json(new_row, 'item_id INT, qty INT, note STRING') as r, new_version,
                    cast(get_json_object(row_key, '$.item_id') as int) as item_id,
                    row_number() over (partition by row_key order by {", ".join(o + " desc" for o in ORDER)}) as newest
                from {wh.table("replication_queue")}
                where tran_seq >= {since}
            ) where newest = 1
        ) as source
        on target.item_id = source.item_id
        when matched and source.op = 'D' then delete
        when matched then update set target.qty = source.r.qty, target.note = source.r.note,
            target.msrepl_tran_version = source.new_version
        when not matched and source.op <> 'D' then insert (item_id, qty, note, msrepl_tran_version)
            values (source.r.item_id, source.r.qty, source.r.note, source.new_version)
    """)


def python_fold(spark, wh: Warehouse, since: int = 0) -> dict:
    """The obvious alternative: collect, fold in a Python loop, MERGE the net result. The batch
    is the queue's transactions from number `since` on; its counts are returned."""
    queue = spark.sql(
        f"select subscriber, tran_id, command_seq, op, row_key, old_version, new_version, new_row "
        f"from {wh.table('replication_queue')} where tran_seq >= {since} "
        f"order by {', '.join(ORDER)}"
    ).collect()
    spark.sql(
        f"select distinct row_key from {wh.table('replication_queue')} where tran_seq >= {since}"
    ).createOrReplaceTempView("fold_keys")
    touched = spark.sql(f"""
        select fold_keys.row_key, items.msrepl_tran_version, to_json(named_struct('item_id', items.item_id,
            'note', items.note, 'qty', items.qty)) as row_json
        from {wh.schema}.items_fold as items
        inner join fold_keys on fold_keys.row_key = concat('{{"item_id":', cast(items.item_id as string), '}}')
    """).collect()
    state = {r.row_key: (r.msrepl_tran_version, r.row_json) for r in touched}  # absent key: no row
    transactions: dict[tuple, list] = {}
    for q in queue:
        transactions.setdefault((q.subscriber, q.tran_id), []).append(q)
    changed: dict[str, tuple | None] = {}
    conflicts, compensations = [], []
    counts = {"applied": 0, "rejected": 0}
    for (subscriber, tran_id), cmds in transactions.items():
        overlay: dict[str, tuple | None] = {}
        found = []
        for cmd in cmds:
            current = overlay[cmd.row_key] if cmd.row_key in overlay else state.get(cmd.row_key)
            if cmd.op == "I":
                kind = "insert_exists" if current is not None else None
            elif current is None:
                kind = "update_missing" if cmd.op == "U" else "delete_missing"
            elif current[0] != cmd.old_version:
                kind = "update_update" if cmd.op == "U" else "delete_update"
            else:
                kind = None
            if kind:
                found.append(
                    (
                        subscriber,
                        tran_id,
                        cmd.command_seq,
                        cmd.row_key,
                        kind,
                        current[1] if current else None,
                        cmd.new_row,
                    )
                )
            overlay[cmd.row_key] = None if cmd.op == "D" else (cmd.new_version, cmd.new_row)
        if found:
            counts["rejected"] += 1
            conflicts.extend(found)
            for key in overlay:
                current = state.get(key)
                compensations.append(
                    (subscriber, tran_id, key, "upsert" if current else "delete", current[1] if current else None)
                )
        else:
            counts["applied"] += 1
            state.update(overlay)
            changed.update(overlay)
    net = [(key, None if v is None else v[0], None if v is None else v[1]) for key, v in changed.items()]
    spark.createDataFrame(net, "row_key string, version string, row_json string").createOrReplaceTempView("fold_net")
    spark.sql(f"""
        merge into {wh.schema}.items_fold as target
        using (select cast(get_json_object(row_key, '$.item_id') as int) as item_id, version,
                   from_json(row_json, 'item_id INT, qty INT, note STRING') as r from fold_net) as source
        on target.item_id = source.item_id
        when matched and source.version is null then delete
        when matched then update set target.qty = source.r.qty, target.note = source.r.note,
            target.msrepl_tran_version = source.version
        when not matched and source.version is not null then insert (item_id, qty, note, msrepl_tran_version)
            values (source.r.item_id, source.r.qty, source.r.note, source.version)
    """)
    spark.createDataFrame(
        conflicts,
        "subscriber string, tran_id string, command_seq int, row_key string, "
        "conflict_type string, publisher_row string, subscriber_row string",
    ).write.format("iceberg").mode("append").saveAsTable(f"{wh.schema}.fold_conflicts")
    spark.createDataFrame(
        compensations, "subscriber string, tran_id string, row_key string, op string, row_json string"
    ).write.format("iceberg").mode("append").saveAsTable(f"{wh.schema}.fold_compensations")
    return {**counts, "conflicts": len(conflicts), "compensations": len(compensations)}


def check_equal(spark, wh: Warehouse, fold: dict) -> None:
    """The reader's publisher, outcome counts and conflict count equal the Python fold's (`fold`:
    its counts over every batch so far)."""
    diff = spark.sql(f"""
        select count(*) from (
            (select item_id, qty, note, msrepl_tran_version from {wh.table("items")}
             except all select item_id, qty, note, msrepl_tran_version from {wh.schema}.items_fold)
            union all
            (select item_id, qty, note, msrepl_tran_version from {wh.schema}.items_fold
             except all select item_id, qty, note, msrepl_tran_version from {wh.table("items")}))
    """).collect()[0][0]
    outcomes = {
        r.outcome: r.n
        for r in spark.sql(
            f"select outcome, count(*) as n from {wh.table('transaction_outcomes')} group by outcome"
        ).collect()
    }
    reader = {
        "applied": outcomes.get("applied", 0),
        "rejected": outcomes.get("rejected", 0),
        "conflicts": spark.table(wh.table("conflicts")).count(),
        "compensations": spark.table(wh.table("compensating_commands")).count(),
    }
    expected = {k: fold[k] for k in reader}
    if diff or reader != expected:
        sys.exit(
            f"bench: the reader and the Python fold disagree: {diff} publisher rows differ; "
            f"reader {reader}, fold {expected}"
        )


# -- dbt's own fixed cost --------------------------------------------------------------------

TRIVIAL_PROJECT = {
    "dbt_project.yml": "name: trivial\nversion: '1.0.0'\nconfig-version: 2\nprofile: trivial\n"
    "flags:\n  send_anonymous_usage_stats: false\n",
    "profiles.yml": f"trivial:\n  target: local\n  outputs:\n    local:\n      type: spark\n      method: session\n"
    f"      host: NA\n      schema: {SCHEMA}_trivial\n      threads: 1\n",
    "models/one.sql": "{{ config(materialized='table', file_format='iceberg') }}\nselect 1 as one\n",
}


def dbt_fixed_cost() -> float:
    """Seconds of `dbt run` of one trivial model (an Iceberg table of one row), in this process:
    the median of three runs."""
    from dbt.cli.main import dbtRunner

    project = Path(tempfile.mkdtemp(prefix="qrepl-trivial-"))
    for name, text in TRIVIAL_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    args = ["--quiet", "run", "--project-dir", str(project), "--profiles-dir", str(project)]
    dbtRunner().invoke(args)  # parse once, as the reader's project is parsed before its timed run
    times = []
    for _ in range(3):  # one run varies between benches: the median of three
        t0 = time.perf_counter()
        res = dbtRunner().invoke(args)
        if not res.success:
            sys.exit("bench: the trivial dbt run failed")
        times.append(time.perf_counter() - t0)
    return sorted(times)[1]


# -- the table ------------------------------------------------------------------------------


@dataclass
class Result:
    name: str  # a SIZES name, or NEXT_1K / NEXT_1K_10M: a warm 1k batch after a size
    changes: int
    rows: int
    shape: str
    reader: float
    merge: float
    fold: float | None  # None: the fold failed (fold_error)
    transactions: int = 0
    conflicts: int = 0
    models: dict = field(default_factory=dict)
    nothing_queued: float | None = None  # a next batch only: the reader with nothing new in the queue
    nothing_models: dict = field(default_factory=dict)  # a next batch only: per model, nothing queued
    fold_error: str | None = None


NEXT_1K = "1k, next batch"
NEXT_1K_10M = "1k into 10M, next batch"


# What a row's reader time is compared with: None when that was not run (or the fold failed).
def _merge(r, by):
    return r.merge


def _fold(r, by):
    return r.fold


def _batch(name: str):
    return lambda r, by: by[name].reader if name in by else None


# The reader's targets (issue "The queue reader in a handful of statements"), per row of the
# table: the target's text, what the reader's time is compared with, the bound on the ratio,
# and whether the bound itself is excluded ("faster than"). A run with nothing queued has its
# own target (NOTHING_QUEUED_PAST_DBT).
TARGETS = {
    NEXT_1K: [("≤ 3× the bare MERGE", _merge, 3.0, False)],
    "100k": [("faster than the Python fold", _fold, 1.0, True)],
    "hot": [("≤ 3× the typical 100k batch", _batch("100k"), 3.0, False)],
    "cascade": [("≤ 3× the typical 100k batch", _batch("100k"), 3.0, False)],
    "1M": [("≤ 3× the bare MERGE", _merge, 3.0, False), ("faster than the Python fold", _fold, 1.0, True)],
    "1M-10M": [("≤ 1.3× the (1M, 1M) batch", _batch("1M"), 1.3, False)],
    NEXT_1K_10M: [("≤ 1.3× the next 1k batch into 1M rows", _batch(NEXT_1K), 1.3, False)],
    "10M": [("≤ 4× the bare MERGE", _merge, 4.0, False)],
}
# seconds a run with nothing queued may take past dbt's own fixed cost (a trivial `dbt run`)
NOTHING_QUEUED_PAST_DBT = 1.0


def target_text(r: Result, by: dict) -> str:
    """The row's targets, each with met or missed (or not measured), for the table."""
    texts = []
    for text, against, bound, strict in TARGETS.get(r.name, []):
        other = against(r, by)
        if other is None:
            texts.append(f"{text}: not measured")
        else:
            ratio = r.reader / other
            met = ratio < bound if strict else ratio <= bound
            texts.append(f"{text}: **{'met' if met else 'missed'}**")
    return "; ".join(texts) or "–"


def first_line(e: Exception) -> str:
    """An exception's cause in one line: for an error raised in the JVM, its Java exception's
    message (the first line of Py4J's text only names the call that failed), without the stack."""
    java = getattr(e, "java_exception", None)
    if java is not None:  # a Java exception without a message (null) is named by its class
        message = java.getMessage() or java.toString()
    else:
        message = str(e)
    text = str(message).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:300]


def last_batch(spark, wh: Warehouse):
    """The reader's history row of its latest batch."""
    return spark.sql(f"select * from {wh.table('queue_reader_history')} order by batch_id desc").first()


def node_times(res) -> dict:
    """Seconds per dbt node (models and run hooks) of one reader run."""
    return {r.node.name: round(r.execution_time, 1) for r in res.result.results}


@dataclass
class Timed:
    """The three contenders on one batch: seconds each, the fold's counts (None if it failed)
    and the reader's dbt result."""

    merge: float
    fold: dict | None
    fold_s: float | None
    fold_error: str | None
    reader: float
    res: object


def run_contenders(spark, wh: Warehouse, label: str, since: int = 0) -> Timed:
    """The bare MERGE, the Python fold and the queue reader, one after the other, on the batch
    of the queue's transactions from number `since` on."""
    say(f"[{label}] bare MERGE ...")
    t0 = time.perf_counter()
    bare_merge(spark, wh, since=since)
    merge_s = time.perf_counter() - t0
    say(f"[{label}] Python fold ...")
    t0 = time.perf_counter()
    fold, fold_s, fold_error = None, None, None
    try:
        fold = python_fold(spark, wh, since=since)
        fold_s = time.perf_counter() - t0
    except Exception as e:  # the alternative failing is a result: reported, not fatal
        fold_error = f"failed after {time.perf_counter() - t0:.0f} s: {first_line(e)}"
        say(f"[{label}] Python fold {fold_error}")
    say(f"[{label}] queue reader ...")
    t0 = time.perf_counter()
    res = run_queue_reader(SCHEMA)
    return Timed(merge_s, fold, fold_s, fold_error, time.perf_counter() - t0, res)


def measure(spark, name: str, warm: bool) -> list[Result]:
    changes, rows, shape = SIZES[name]
    wh = Warehouse(spark, SCHEMA)
    say(f"[{name}] loading {rows:,} publisher rows and {changes:,} queued changes ({shape}) ...")
    load_batch(spark, wh, shape, changes, rows)
    if warm:  # the first dbt invocation of a process parses the project: not part of any batch
        say(f"[{name}] parsing the dbt project once ...")
        from qrepl.storage.dbt_runner import dbt_invoke

        dbt_invoke(["parse"], SCHEMA)
    t = run_contenders(spark, wh, name)
    if t.fold is not None:
        check_equal(spark, wh, t.fold)
    history = last_batch(spark, wh)
    result = Result(
        name,
        changes,
        rows,
        shape,
        t.reader,
        t.merge,
        t.fold_s,
        history.transactions_processed,
        history.conflicts,
        node_times(t.res),
        fold_error=t.fold_error,
    )
    fold_text = f"Python fold {t.fold_s:.1f} s" if t.fold is not None else "Python fold failed"
    checked = "results equal" if t.fold is not None else "not compared: the fold failed"
    say(
        f"[{name}] reader {t.reader:.1f} s, MERGE {t.merge:.1f} s, {fold_text} "
        f"({result.transactions:,} transactions, {result.conflicts:,} conflicts; {checked})"
    )
    if name == "1M-10M":  # a warm small batch over the same 10M rows: its cost follows the batch
        return [result, measure_next(spark, wh, t.fold, shape, 1_000, rows, NEXT_1K_10M, first=10 * changes)]
    if name != "1k":
        return [result]
    # the first reader run of a process pays the JVM's warm-up, as a server does once: the next
    # batch, drawn afresh over the same publication, is the one a running server sees
    return [result, measure_next(spark, wh, t.fold, shape, changes, rows, NEXT_1K, first=10 * changes)]


def measure_next(
    spark, wh: Warehouse, first_fold: dict | None, shape: str, changes: int, rows: int, label: str, first: int
) -> Result:
    """The reader, the bare MERGE and the fold on a next batch of `changes` in the same process
    (each on its own copy, after the size's batch; its transactions numbered from `first`),
    then the reader with nothing new."""
    queue_batch(spark, wh, shape, changes, rows, first=first)
    t = run_contenders(spark, wh, label, since=first)
    history = last_batch(spark, wh)
    if not history.transactions_processed:
        sys.exit(f"bench: {label} processed no transaction")
    if t.fold is not None and first_fold is not None:  # both batches: the tables hold both
        check_equal(spark, wh, {k: first_fold[k] + t.fold[k] for k in t.fold})
    result = Result(
        label,
        changes,
        rows,
        shape,
        t.reader,
        t.merge,
        t.fold_s,
        history.transactions_processed,
        history.conflicts,
        node_times(t.res),
        fold_error=t.fold_error,
    )
    say(f"[{label}] queue reader with nothing new queued ...")
    t0 = time.perf_counter()
    res = run_queue_reader(SCHEMA)
    result.nothing_queued = time.perf_counter() - t0
    result.nothing_models = node_times(res)
    say(
        f"[{label}] reader {t.reader:.1f} s, MERGE {t.merge:.1f} s, "
        f"{'Python fold %.1f s' % t.fold_s if t.fold_s is not None else 'Python fold failed'} "
        f"({result.transactions:,} transactions, {result.conflicts:,} conflicts); "
        f"nothing queued {result.nothing_queued:.1f} s"
    )
    return result


def table(results: list[Result], fixed: float | None) -> str:
    by = {r.name: r for r in results}
    lines = [
        "| batch | changes | publication rows | reader | bare MERGE | Python fold | reader / MERGE | "
        "reader / fold | other ratio | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        other = ""
        if r.name == "1k" and fixed:
            other = f"{r.reader / fixed:.2f}× dbt's fixed cost ({fixed:.1f} s), the JVM's first run"
        elif r.nothing_queued is not None:
            other = f"a run with nothing queued {r.nothing_queued:.1f} s"
            if fixed:
                past = r.nothing_queued - fixed
                met = "met" if past <= NOTHING_QUEUED_PAST_DBT else "missed"
                other = (
                    f"{r.reader / fixed:.2f}× dbt's fixed cost; {other}, {past:.1f} s past dbt's fixed cost "
                    f"(≤ {NOTHING_QUEUED_PAST_DBT:.0f} s: **{met}**)"
                )
            if r.name == NEXT_1K_10M and NEXT_1K in by:
                other = f"{r.reader / by[NEXT_1K].reader:.2f}× the next 1k batch into 1M rows; " + other
        elif r.shape in ("hot", "cascade") and "100k" in by:
            other = f"{r.reader / by['100k'].reader:.2f}× the typical 100k batch"
        elif r.name == "1M-10M" and "1M" in by:
            other = f"{r.reader / by['1M'].reader:.2f}× the (1M, 1M) batch"
        if r.fold is None:
            fold, per_fold = "failed", "–"
            other = "; ".join(x for x in (other, f"the Python fold {r.fold_error}") if x)
        else:
            fold, per_fold = f"{r.fold:.1f} s", f"{r.reader / r.fold:.2f}×"
        lines.append(
            f"| {r.name} ({r.shape}) | {r.changes:,} | {r.rows:,} | {r.reader:.1f} s | {r.merge:.1f} s | "
            f"{fold} | {r.reader / r.merge:.2f}× | {per_fold} | {other} | {target_text(r, by)} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(
        description="Queue reader vs bare MERGE vs Python fold, side by side "
        "(prints a markdown table of times and ratios)."
    )
    ap.add_argument(
        "--sizes",
        nargs="+",
        choices=list(SIZES),
        default=DEFAULT_SIZES,
        help=f"batches to run (default: all: {' '.join(DEFAULT_SIZES)})",
    )
    ap.add_argument("--markdown", type=Path, help="also write the table (and per-model times) to this file")
    ap.add_argument(
        "--readme",
        type=Path,
        help="replace the table between the bench markers of this file (only when every size ran)",
    )
    args = ap.parse_args()
    spark = get_spark()
    fixed = None
    if "1k" in args.sizes:
        say("dbt's own fixed cost: `dbt run` of one trivial model ...")
        fixed = dbt_fixed_cost()
        say(f"dbt's own fixed cost: {fixed:.1f} s")
    results = [r for i, name in enumerate(args.sizes) for r in measure(spark, name, warm=i == 0)]
    out = table(results, fixed)
    per_model = {r.name: r.models for r in results}
    for r in results:  # where a warm run's fixed cost goes
        if r.nothing_models:
            per_model[f"{r.name}: nothing queued"] = r.nothing_models
    say("\n" + out)
    say("\nper model (s): " + json.dumps(per_model))
    if args.readme and sorted(args.sizes) != sorted(DEFAULT_SIZES):
        say(f"\n{args.readme} not rewritten: its table comes from one run of every size (make bench)")
    elif args.readme:
        text = args.readme.read_text()
        start, end = text.index(README_START) + len(README_START), text.index(README_END)
        args.readme.write_text(text[:start] + "\n" + out + "\n" + text[end:])
    if args.markdown:
        catalog = "an Iceberg REST catalog (QREPL_CATALOG=rest)" if on_rest_catalog() else "the Hive metastore"
        args.markdown.write_text(
            f"Tables on {catalog}.\n\n"
            + out
            + "\n\nPer model (seconds):\n\n```\n"
            + json.dumps(per_model, indent=1)
            + "\n```\n"
        )


if __name__ == "__main__":
    main()
