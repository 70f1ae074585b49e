"""The soak's processes (python/tests/e2e/soak_check.py), each its own JVM on one shared
PostgreSQL metastore ($QREPL_METASTORE, $QREPL_WAREHOUSE):

    python soak_driver.py qrepl SCHEMA LOGDIR POLICY SECONDS OPS
        sets the publication up (2 articles, 20 rows; queued subscribers a and b, immediate imm),
        writes LOGDIR/ready, then interleaves `qrepl run`, distribute, maintain, resolve by hand
        and subscription add (with a drop of the one it added before) until SECONDS have passed
        or OPS operations are done; then writes LOGDIR/stop, waits for the other two to finish,
        runs the reader and distributes once more and dumps the publisher tables' history and the conflict tables into
        LOGDIR/dump.json
    python soak_driver.py job SCHEMA LOGDIR
        a publisher job that knows nothing of qrepl: plain SQL UPDATEs of random rows of half
        the table, each value unique (job-<n>), keeping msrepl_tran_version, in bursts, until
        LOGDIR/stop
    python soak_driver.py subscriber SCHEMA LOGDIR
        captures by a and b (queued) and commits by imm (immediate) of the same rows, until
        LOGDIR/stop

Every process appends one JSON line per operation to LOGDIR/<role>.jsonl.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from pathlib import Path

from qrepl.core.model import ConflictError, publication_from_dict
from qrepl.storage.spark import get_spark
from qrepl.storage.warehouse import Warehouse, new_version

ARTICLES = {"customers": ("customer_id", "city"), "tags": ("tag", "note")}
KEYS = {"customers": list(range(1, 13)), "tags": [f"t{i}" for i in range(1, 9)]}
# the job's rows: half of each table, so that subscribers change some rows it leaves alone
# and some it writes, now and then after a delivery brought them its write
HOT = {article: keys[: len(keys) // 2] for article, keys in KEYS.items()}
# the job writes in bursts of BURST seconds, then rests as long: a subscriber's change of a row
# a delivery brought it the job's write of can then reach the publisher before the job's next
BURST = 45
QUEUED, IMMEDIATE = ("a", "b"), "imm"
QUIET = {"echo": lambda _: None}
RETENTION = 1_000_000


def publication(policy: str) -> dict:
    return {
        "publication": "soak",
        "policy": policy,
        "articles": [
            {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}},
            {"name": "tags", "key": ["tag"], "columns": {"tag": "string", "note": "string"}},
        ],
    }


class Log:
    def __init__(self, logdir: Path, role: str) -> None:
        self.file = open(logdir / f"{role}.jsonl", "a", buffering=1)

    def __call__(self, **entry) -> None:
        self.file.write(json.dumps({"at": time.time(), **entry}, default=str) + "\n")


def first_line(exc: BaseException) -> str:
    """The error's first line, or, for a dbt error around a Java stack, the exception's line."""
    text = [line.strip() for line in str(exc).strip().splitlines()]
    java = [line for line in text if "Exception:" in line and not line.startswith("at ")]
    return f"{type(exc).__name__}: {(java or text or [''])[0]}"[:400]


def wait_for(path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.5)


def keep_every_snapshot(spark, table: str) -> None:
    """The oracle reads the table's whole history: main keeps every snapshot, so `qrepl maintain`
    compacts as always but its expiry (retain_last 1, older_than) leaves them. A branch's own
    min-snapshots-to-keep outranks the procedure's defaults."""
    jvm = spark._jvm
    iceberg = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table)
    iceberg.manageSnapshots().setMinSnapshotsToKeep("main", RETENTION).commit()


def setup(schema: str, policy: str) -> None:
    from qrepl.services.service import add_subscription

    spark = get_spark()
    wh = Warehouse(spark, schema)
    wh.write_publication(publication_from_dict(publication(policy)))
    wh.upsert_rows(
        "customers",
        [{"customer_id": k, "city": f"c{k}", "msrepl_tran_version": new_version()} for k in KEYS["customers"]],
    )
    wh.upsert_rows("tags", [{"tag": k, "note": f"n{k}", "msrepl_tran_version": new_version()} for k in KEYS["tags"]])
    for article in ARTICLES:
        keep_every_snapshot(spark, wh.article_table(wh.article(article)))
    for s in (*QUEUED, IMMEDIATE):
        add_subscription(schema, s, update_mode="immediate" if s == IMMEDIATE else "queued", **QUIET)


def resolve_one(schema: str, rng: random.Random) -> str:
    """Resolve the newest unresolved conflict by hand; keep subscriber three times in four."""
    from qrepl.core.model import ConfigError
    from qrepl.services.service import list_conflicts, resolve_conflict
    from qrepl.storage.dbt_runner import DbtError

    open_ = [c for c in list_conflicts(schema) if c["review"] is None]
    if not open_:
        return "no open conflict"
    conflict = open_[-1]
    keep = "subscriber" if rng.random() < 0.75 else "publisher"
    try:
        review = resolve_conflict(schema, conflict["conflict_id"], keep, resolved_by="soak")
    except (ConfigError, DbtError) as exc:
        if "changed since the conflict" not in str(exc):
            raise
        # a row changed since the conflict: refused, as docs/conflicts.md says
        return f"refused {conflict['conflict_id']} keep {keep}"
    return f"resolved {conflict['conflict_id']} keep {keep}: {review['outcome']} {review['written_version']}"


def qrepl_loop(schema: str, logdir: Path, policy: str, seconds: float, max_ops: int) -> None:
    from qrepl.services.distribution import distribute
    from qrepl.services.maintenance import maintain
    from qrepl.services.service import add_subscription, drop_subscription, run_reader

    log = Log(logdir, "qrepl")
    rng = random.Random(57)
    t0 = time.monotonic()
    setup(schema, policy)
    log(op="setup", ok=True, seconds=round(time.monotonic() - t0, 1))
    (logdir / "ready").touch()
    added: list[str] = []

    def subscription_add() -> str:
        name = f"n{len(added) + 1}"
        add_subscription(schema, name, **QUIET)
        added.append(name)
        if len(added) > 1:  # the one added before: keeps distribution to a few replicas
            drop_subscription(schema, added[-2])
            return f"added {name}, dropped {added[-2]}"
        return f"added {name}"

    run = ("run", lambda: run_reader(schema, wait_seconds=120, **QUIET)["batch_id"])
    distribute_ = ("distribute", lambda: distribute(schema))
    # the first four are a short soak's (ops=4); then a delivery, so that subscribers see
    # the job's writes and change them in turn
    ops = [
        run,
        ("maintain", lambda: maintain(schema)),
        ("resolve", lambda: resolve_one(schema, rng)),
        ("subscription_add", subscription_add),
        distribute_,
        run,
        distribute_,
    ]
    deadline = time.monotonic() + seconds
    done = 0
    while time.monotonic() < deadline and done < max_ops:
        name, op = ops[done % len(ops)]
        started = time.monotonic()
        try:
            result = op()
            log(op=name, ok=True, result=result, seconds=round(time.monotonic() - started, 1))
        except Exception as exc:  # noqa: BLE001 - recorded, and the soak goes on
            log(op=name, ok=False, error=first_line(exc), seconds=round(time.monotonic() - started, 1))
        done += 1
    (logdir / "stop").touch()
    for role in ("job", "subscriber"):
        wait_for(logdir / f"{role}.done", 900)
    # alone at the end: two runs that finish (the first may only finish a failed run's batch,
    # whose cut it keeps), then a delivery; every capture applied, stamped rows delivered
    finished = 0
    for name, op in [run] * 5 + [distribute_]:
        if name == "run" and finished == 2:
            continue
        try:
            log(op=name, ok=True, final=True, result=op())
            finished += name == "run"
        except Exception as exc:  # noqa: BLE001
            log(op=name, ok=False, final=True, error=first_line(exc))
    dump(schema, logdir / "dump.json")


def job_loop(schema: str, logdir: Path) -> None:
    log = Log(logdir, "job")
    spark = get_spark()
    wh = Warehouse(spark, schema)
    wait_for(logdir / "ready", 1800)
    rng = random.Random()
    n = 0
    started = time.monotonic()
    while not (logdir / "stop").exists():
        if int((time.monotonic() - started) // BURST) % 2:  # a quiet spell between two bursts
            time.sleep(1)
            continue
        article = rng.choice(list(ARTICLES))
        key_col, col = ARTICLES[article]
        key = rng.choice(HOT[article])
        n += 1
        value = f"job-{n}"
        literal = key if isinstance(key, int) else f"'{key}'"  # the soak's own keys, never input
        # a job that knows nothing of qrepl: a plain UPDATE that keeps msrepl_tran_version
        sql = f"update {wh.article_table(wh.article(article))} set {col} = '{value}' where {key_col} = {literal}"
        try:
            spark.sql(sql)
            log(article=article, key=key, value=value, status="committed")
        except Exception as exc:  # noqa: BLE001 - the job's commit may be refused by a concurrent one
            unknown = "CommitStateUnknown" in str(exc)
            log(article=article, key=key, value=value, status="unknown" if unknown else "failed", error=first_line(exc))
        time.sleep(rng.uniform(0.5, 2.0))
    (logdir / "job.done").touch()


def subscriber_loop(schema: str, logdir: Path) -> None:
    from qrepl.services.capture import Subscriber

    log = Log(logdir, "subscriber")
    get_spark()
    wait_for(logdir / "ready", 1800)
    subscribers = {s: Subscriber(schema, s) for s in (*QUEUED, IMMEDIATE)}
    rng = random.Random()
    n = 0
    while not (logdir / "stop").exists():
        name = rng.choice([*QUEUED, IMMEDIATE])
        n += 1
        tran_id = f"{name}-t{n}"
        rows = []
        for article in rng.sample(list(ARTICLES), rng.choice([1, 2])):
            # mostly the job's rows
            rows.append((article, rng.choice(HOT[article] if rng.random() < 0.75 else KEYS[article])))
        tran, outcome = None, "committed"
        try:
            with subscribers[name].transaction(tran_id) as t:
                tran = t
                for i, (article, key) in enumerate(rows):
                    key_col, col = ARTICLES[article]
                    t.update(article, {key_col: key}, {col: f"{name}-{n}.{i}"})
        except ConflictError as exc:
            outcome = f"rejected: {len(exc.rows)} conflicting row(s)"
        except Exception as exc:  # noqa: BLE001 - recorded; its commands may have reached the publisher
            outcome = f"error: {first_line(exc)}"
        commands = []
        for c in tran.commands if tran else []:
            old = json.loads(c["old_row"]) if c["old_row"] else {}
            new = json.loads(c["new_row"]) if c["new_row"] else {}
            col = ARTICLES[c["article"]][1]
            commands.append(
                {
                    "article": c["article"],
                    "row_key": c["row_key"],
                    "new_value": new.get(col),
                    "new_version": c["new_version"],
                    "old_value": old.get(col),
                    "old_version": c["old_version"],
                }
            )
        log(
            subscriber=name,
            mode="immediate" if name == IMMEDIATE else "queued",
            tran_id=tran_id,
            outcome=outcome,
            commands=commands,
        )
        time.sleep(rng.uniform(0.2, 1.0))
    (logdir / "subscriber.done").touch()


def _lineage(spark, table: str) -> list[int]:
    """The table's current lineage, oldest first (following parent ids from the current snapshot)."""
    rows = spark.sql(f"select snapshot_id, parent_id from {table}.snapshots").collect()
    parent = {r["snapshot_id"]: r["parent_id"] for r in rows}
    current = spark.sql(
        f"select snapshot_id from {table}.history where is_current_ancestor order by made_current_at desc limit 1"
    ).first()["snapshot_id"]
    chain = []
    while current is not None:
        chain.append(current)
        current = parent.get(current)
    return chain[::-1]


def dump(schema: str, out: Path) -> None:
    from pyspark.sql import functions as F

    spark = get_spark()
    wh = Warehouse(spark, schema)
    history, counts = {}, {}
    for article, (key_col, col) in ARTICLES.items():
        table = wh.article_table(wh.article(article))
        chain = _lineage(spark, table)
        states = {sid: {} for sid in chain}
        for i in range(0, len(chain), 40):  # one Spark job per 40 snapshots
            frames = [
                spark.read.option("snapshot-id", sid)
                .table(table)
                .select(
                    F.lit(sid).alias("sid"),
                    F.col(key_col).alias("k"),
                    F.col(col).alias("v"),
                    F.col("msrepl_tran_version").alias("ver"),
                )
                for sid in chain[i : i + 40]
            ]
            union = frames[0]
            for f in frames[1:]:
                union = union.unionByName(f)
            for r in union.collect():
                states[r["sid"]][r["k"]] = [r["v"], r["ver"]]
        history[article] = [[sid, [[k, *vv] for k, vv in states[sid].items()]] for sid in chain]
        ops = spark.sql(f"select operation, count(*) as n from {table}.snapshots group by operation").collect()
        counts[f"{article}_snapshots"] = {r["operation"]: r["n"] for r in ops}

    def rows(name: str, columns: list[str]) -> list[dict]:
        if not wh.exists(name):
            return []
        return [r.asDict() for r in spark.table(wh.table(name)).select(*columns).collect()]

    conflicts = rows(
        "conflicts",
        [
            "conflict_id",
            "article",
            "row_key",
            "subscriber",
            "tran_id",
            "conflict_type",
            "winner",
            "publisher_row",
            "publisher_version",
            "old_version",
            "new_version",
        ],
    )
    reviews = rows("conflict_reviews", ["conflict_id", "keep", "outcome", "written_version"])
    outcomes = rows("transaction_outcomes", ["tran_id", "outcome"])
    immediate = rows("immediate_transactions", ["tran_id", "outcome"])
    out.write_text(
        json.dumps(
            {
                "history": history,
                "counts": counts,
                "conflicts": conflicts,
                "reviews": reviews,
                "outcomes": outcomes,
                "immediate": immediate,
            },
            default=str,
        )
    )


def main(argv: list[str]) -> None:
    role, schema, logdir = argv[0], argv[1], Path(argv[2])
    try:
        if role == "qrepl":
            qrepl_loop(schema, logdir, argv[3], float(argv[4]), int(argv[5]))
        elif role == "job":
            job_loop(schema, logdir)
        elif role == "subscriber":
            subscriber_loop(schema, logdir)
        else:
            raise SystemExit(f"unknown role {role}")
    except BaseException:
        traceback.print_exc()
        (logdir / "stop").touch()  # the others stop too, rather than wait for nothing
        if role != "qrepl":
            (logdir / f"{role}.done").touch()
        raise


if __name__ == "__main__":
    main(sys.argv[1:])
