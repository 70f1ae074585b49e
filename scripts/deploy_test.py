"""`make deploy-test`: the shared topology under concurrent load (docs/deploying.md).

With PostgreSQL (metastore), a Spark standalone cluster and the Thrift server on it already
up (scripts/deploy_test.sh starts them and stops them on exit), this script

1. creates a publication and three subscriptions (one process);
1a. writes to the publisher as a writer that knows nothing of qrepl: plain UPDATE, MERGE,
   DELETE and INSERT with no new msrepl_tran_version, through the Thrift server (another JVM on
   the shared metastore). The subscribers' replicas still hold the rows as they were, so their
   captures meet these changes; the publisher's trigger must stamp them before the first batch;
2. runs AT THE SAME TIME, none waiting for another:
   * three subscriber processes, each capturing transactions through `qrepl.services.capture.Subscriber`
     (hot rows shared by all, multi-row transactions, inserts of the same keys, deletes);
   * a scheduler looping `dbt run --target thrift` (the plain dbt CLI, on the cluster);
   * a distribution agent looping `qrepl distribute`;
3. after the captures end: one more run and one more distribution;
4. checks that every replica equals the publisher, that every queued command is in exactly
   one batch and every transaction judged or quarantined exactly once, and that outcomes,
   conflicts, compensating commands, quarantine and the publisher equal the sequential
   reference (`qrepl.core.reference`) fed with the captured transactions batch by batch, in the
   batches the runs actually cut, starting from the publisher as the trigger stamped it (so
   the outside writes count exactly as if their writer had set new versions).

Roles (one per process): `main` (the above), `setup`, `capture`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
VENV_BIN = PROJECT / ".venv" / "bin"
SUBSCRIBERS = ["s1", "s2", "s3"]
HOT_CUSTOMERS = [1, 2, 3]  # from seeds/demo_customers.csv: every subscriber updates them
SHARED_NEW_CUSTOMERS = range(900, 912)  # every subscriber inserts (and deletes) these same keys
# the outside writer's statements ({t}: the customers table); each changes hot or shared rows
FOREIGN_WRITES = [
    ("U", 1, "update {t} set city = 'Outside-1' where customer_id = 1"),
    (
        "U",
        2,
        "merge into {t} as t using (select 2 as customer_id, 'Outside-2' as city) as s "
        "on t.customer_id = s.customer_id when matched then update set t.city = s.city",
    ),
    ("D", 3, "delete from {t} where customer_id = 3"),
    (
        "I",
        905,
        "insert into {t} (customer_id, name, city, credit_limit, msrepl_tran_version) "
        "values (905, 'Outside', 'Outside-905', 10.50, null)",
    ),
]
ORDER_LINES = [(100, 1), (100, 2), (101, 1)]


# -- setup -------------------------------------------------------------------------------------
def setup(schema: str) -> None:
    import csv

    from qrepl.services.capture import Subscriber
    from qrepl.services.publication import create_publication
    from qrepl.storage.open import warehouse
    from qrepl.storage.warehouse import new_version

    pub = create_publication(PROJECT / "publications" / "sales.yml", schema)
    wh = warehouse(schema)
    for article in pub.articles:  # the demo seeds, without a dbt parse
        with (PROJECT / "seeds" / f"demo_{article.name}.csv").open() as f:
            rows = [
                {c: int(v) if article.columns[c] in ("int", "bigint") else v for c, v in row.items()}
                for row in csv.DictReader(f)
            ]
        wh.upsert_rows(article.name, [{**row, "msrepl_tran_version": new_version()} for row in rows])
    wh.add_subscriptions(SUBSCRIBERS)
    for name in SUBSCRIBERS:
        Subscriber(wh.schema, name).replica.snapshot_from_publisher()
    print(f"setup: publication sales in schema {schema}, subscribers {', '.join(SUBSCRIBERS)}", flush=True)


def foreign(schema: str, log_path: Path) -> None:
    """Plain SQL through the Thrift server, as any Spark job, dbt model or BI tool would write:
    no msrepl_tran_version is set. Records the keys and the table's snapshot after the writes."""
    from pyhive import hive

    cursor = hive.connect(
        host="127.0.0.1",
        port=int(os.environ["QREPL_THRIFT_PORT"]),
        auth="CUSTOM",
        username=os.environ["QREPL_THRIFT_USER"],
        password=os.environ["QREPL_THRIFT_PASSWORD"],
    ).cursor()
    table = f"{schema}.customers"
    for _, _, statement in FOREIGN_WRITES:
        cursor.execute(statement.format(t=table))
    cursor.execute(f"select snapshot_id from {table}.refs where name = 'main'")
    snapshot = cursor.fetchall()[0][0]
    log_path.write_text(json.dumps({"snapshot": snapshot, "writes": [[op, k] for op, k, _ in FOREIGN_WRITES]}))


# -- a subscriber application -------------------------------------------------------------------
def capture(schema: str, subscriber: str, transactions: int, log_path: Path) -> None:
    """One subscriber's application: `transactions` transactions, each decided on what its
    replica holds when it runs (distribution changes the replica underneath)."""
    from qrepl.services.capture import Subscriber
    from qrepl.core.vocabulary import ConfigError

    rng = random.Random(f"{schema}/{subscriber}")
    sub = Subscriber(schema, subscriber)

    def customer(cid: int) -> dict:
        return {
            "customer_id": cid,
            "name": f"{subscriber} #{cid}",
            "city": rng.choice(["Oslo", "Lima", "Pune"]),
            "credit_limit": f"{rng.randint(1, 99) * 100}.00",
        }

    def touch_customer(t, cid: int) -> None:
        """Update the row if the replica has it, else insert it."""
        try:
            t.update(
                "customers",
                {"customer_id": cid},
                {"credit_limit": f"{rng.randint(1, 99) * 100}.00", "city": rng.choice(["Oslo", "Lima", "Pune"])},
            )
        except ConfigError:
            t.insert("customers", customer(cid))

    def insert_or_delete(t, cid: int) -> None:
        """Insert a shared key if the replica lacks it, else delete it."""
        try:
            t.insert("customers", customer(cid))
        except ConfigError:
            t.delete("customers", {"customer_id": cid})

    def touch_line(t, order_id: int, line_no: int) -> None:
        try:
            t.update("order_lines", {"order_id": order_id, "line_no": line_no}, {"quantity": rng.randint(1, 9)})
        except ConfigError:
            t.insert(
                "order_lines",
                {"order_id": order_id, "line_no": line_no, "product": "cable", "quantity": rng.randint(1, 9)},
            )

    with log_path.open("a") as log:
        for n in range(1, transactions + 1):
            kind = rng.choices(["hot", "multi", "same_key", "line"], weights=[4, 2, 3, 1])[0]
            tran_id = f"{subscriber}-{n}"
            started = time.time()
            status, error = "captured", None
            try:
                with sub.transaction(tran_id) as t:
                    if kind == "hot":
                        touch_customer(t, rng.choice(HOT_CUSTOMERS))
                    elif kind == "multi":
                        first, second = rng.sample(HOT_CUSTOMERS + list(SHARED_NEW_CUSTOMERS)[:3], 2)
                        touch_customer(t, first)
                        touch_customer(t, second)
                        if rng.random() < 0.5:
                            touch_line(t, *rng.choice(ORDER_LINES))
                    elif kind == "same_key":
                        insert_or_delete(t, rng.choice(SHARED_NEW_CUSTOMERS))
                    else:
                        touch_line(t, *rng.choice(ORDER_LINES))
            except Exception as exc:  # noqa: BLE001 - logged and counted: the application carries on
                status, error = "failed", f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
            log.write(
                json.dumps(
                    {
                        "subscriber": subscriber,
                        "tran_id": tran_id,
                        "kind": kind,
                        "status": status,
                        "error": error,
                        "started": started,
                        "finished": time.time(),
                    }
                )
                + "\n"
            )
            log.flush()
    print(f"capture {subscriber}: done", flush=True)


# -- the orchestrator ---------------------------------------------------------------------------
@dataclass
class Loop:
    """A process run again and again until told to stop; remembers each run's interval."""

    name: str
    command: list[str]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    runs: list[tuple[float, float, int]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    current: subprocess.Popen | None = None

    def run_once(self) -> int:
        started = time.time()
        with self.log.open("a") as out:
            out.write(f"\n=== {self.name} at {time.strftime('%H:%M:%S')}: {' '.join(self.command)}\n")
            out.flush()
            self.current = subprocess.Popen(
                self.command,
                cwd=PROJECT,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                start_new_session=True,
            )
            rc = self.current.wait()
        self.runs.append((started, time.time(), rc))
        return rc

    def loop(self) -> None:
        while not self.stop.is_set():
            self.run_once()
            if self.runs[-1][2] != 0:
                time.sleep(5)  # a failed run (e.g. the run lock held) is retried, not spun on


def overlapping(runs: list[tuple[float, float, int]], others: list[tuple[float, float, int]]) -> int:
    return sum(1 for s, e, _ in runs if any(s < oe and os_ < e for os_, oe, _ in others))


def main(schema: str, transactions: int) -> int:
    # SIGTERM (timeout, Ctrl-C through deploy_test.sh) unwinds through the finally below,
    # which stops every process this driver started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    deploy = Path(os.environ["QREPL_DEPLOY_DIR"])
    logs = deploy / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    began = time.time()
    me = [sys.executable, str(Path(__file__).resolve())]
    os.environ["QREPL_SCHEMA"] = schema

    children: list[subprocess.Popen] = []
    loops: list[Loop] = []
    try:
        return _run(schema, transactions, began, logs, me, children, loops)
    finally:
        for loop in loops:
            loop.stop.set()
        for p in children + [loop.current for loop in loops if loop.current]:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in children + [loop.current for loop in loops if loop.current]:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def _started(children: list[subprocess.Popen], command: list[str], **kwargs) -> subprocess.Popen:
    """A child in its own process group (its JVM with it), remembered for the cleanup."""
    process = subprocess.Popen(command, cwd=PROJECT, start_new_session=True, **kwargs)
    children.append(process)
    return process


def _run(
    schema: str,
    transactions: int,
    began: float,
    logs: Path,
    me: list[str],
    children: list[subprocess.Popen],
    loops: list[Loop],
) -> int:
    print(f"[{_clock(began)}] setup: publication and {len(SUBSCRIBERS)} subscriptions", flush=True)
    if _started(children, me + ["setup", "--schema", schema]).wait() != 0:
        print("setup failed")
        return 1

    print(f"[{_clock(began)}] an outside writer (Thrift): UPDATE, MERGE, DELETE, INSERT with no version", flush=True)
    foreign(schema, logs / "foreign.json")

    dbt = [
        str(VENV_BIN / "dbt"),
        "run",
        "--project-dir",
        str(PROJECT),
        "--profiles-dir",
        str(PROJECT),
        "--target",
        "thrift",
    ]
    # the scheduler's own target path: its manifest is not re-parsed after the setup's dbt seed
    scheduler = Loop(
        "scheduler",
        dbt,
        logs / "scheduler.log",
        env={"DBT_TARGET_PATH": str(PROJECT / "target" / "thrift"), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
    )
    distributor = Loop(
        "distribution", [str(VENV_BIN / "qrepl"), "distribute", "--schema", schema], logs / "distribution.log"
    )
    capture_logs = {s: logs / f"capture_{s}.jsonl" for s in SUBSCRIBERS}
    print(
        f"[{_clock(began)}] concurrent phase: {len(SUBSCRIBERS)} subscribers x {transactions} transactions, "
        f"`dbt run --target thrift` in a loop, `qrepl distribute` in a loop",
        flush=True,
    )
    loops += [scheduler, distributor]
    captures = {
        s: _started(
            children,
            me
            + [
                "capture",
                "--schema",
                schema,
                "--subscriber",
                s,
                "--transactions",
                str(transactions),
                "--log",
                str(capture_logs[s]),
            ],
            stdout=(logs / f"capture_{s}.log").open("w"),
            stderr=subprocess.STDOUT,
        )
        for s in SUBSCRIBERS
    }
    threads = [threading.Thread(target=loop.loop, daemon=True) for loop in loops]
    for t in threads:
        t.start()
    polls = 0
    while any(p.poll() is None for p in captures.values()):
        time.sleep(5)
        polls += 1
        if polls % 6:
            continue  # progress every 30 s; the end of the captures noticed within 5 s
        done = sum(len(f.read_text().splitlines()) if f.exists() else 0 for f in capture_logs.values())
        print(
            f"[{_clock(began)}] captured {done}/{transactions * len(SUBSCRIBERS)}, runs {len(scheduler.runs)}, "
            f"distributions {len(distributor.runs)}",
            flush=True,
        )
    capture_end = time.time()
    for loop in loops:
        loop.stop.set()
    for t in threads:
        t.join()
    failed = [s for s, p in captures.items() if p.returncode != 0]
    if failed:
        print(f"capture process(es) {failed} exited with an error: see {logs}/capture_*.log")
        return 1
    print(f"[{_clock(began)}] captures done; final run and distribution", flush=True)
    if scheduler.run_once() != 0 or distributor.run_once() != 0:
        print(f"final run or distribution failed: see {logs}/scheduler.log, {logs}/distribution.log")
        return 1
    print(f"[{_clock(began)}] verifying", flush=True)
    verdict = _started(children, me + ["verify", "--schema", schema, "--report", str(logs / "verify.json")]).wait()
    report = json.loads((logs / "verify.json").read_text()) if (logs / "verify.json").exists() else {}
    entries = [json.loads(line) for f in capture_logs.values() for line in f.read_text().splitlines()]
    failed_captures = [e for e in entries if e["status"] == "failed"]
    concurrent_runs = scheduler.runs[:-1]
    concurrent_deliveries = distributor.runs[:-1]
    overlapped = overlapping(concurrent_deliveries, concurrent_runs)
    during_captures = [rc for s, _, rc in concurrent_runs if s < capture_end]  # exit codes of those runs
    print("\ndeploy-test numbers")
    print(
        f"  transactions attempted {len(entries)}; queued {report.get('transactions_queued')} "
        f"({report.get('commands_queued')} commands); capture calls that raised {len(failed_captures)}"
    )
    for error in sorted({e["error"] for e in failed_captures})[:5]:
        print(f"    {sum(1 for e in failed_captures if e['error'] == error)} x {error}")
    print(
        f"  queue-reader runs {len(scheduler.runs)} ({sum(1 for r in scheduler.runs if r[2] != 0)} failed), "
        f"batches {report.get('batches')}; distributions {len(distributor.runs)} "
        f"({sum(1 for r in distributor.runs if r[2] != 0)} failed)"
    )
    print(
        f"  deliveries that overlapped a run {overlapped} of {len(concurrent_deliveries)}; "
        f"runs while captures were writing {len(during_captures)}"
    )
    print(
        f"  outcomes {report.get('outcomes')}; conflicts {report.get('conflicts')} "
        f"({report.get('conflicts_on_outside_writes')} on rows written by the outside writer); "
        f"compensating commands {report.get('compensating_commands')}"
    )
    print(f"  wall time {time.time() - began:.0f} s")
    # the point of the test: the parts really ran at the same time
    if verdict == 0 and (0 not in during_captures or overlapped == 0):
        print(
            "deploy-test: no queue-reader run went through while captures were writing, or no delivery "
            "overlapped a run; raise QREPL_DEPLOY_TRANSACTIONS"
        )
        return 1
    return verdict


def _clock(began: float) -> str:
    return f"{time.time() - began:6.0f} s"


# -- the checks ---------------------------------------------------------------------------------
def verify(schema: str, report_path: Path) -> int:
    from qrepl.storage.replica import table_at
    from qrepl.core.rows import canonical_key, normalize_row
    from qrepl.core.reference import ReferenceReader
    from qrepl.tools.replay import ReferenceBackend, Scenario, SparkBackend, normalized_outputs
    from qrepl.storage.open import warehouse

    wh = warehouse(schema)
    spark = wh.spark
    pub = wh.require_publication()
    problems: list[str] = []

    # every queued command in exactly one batch
    identity = ["subscriber", "tran_id", "command_seq", "enqueued_at"]
    queue = wh.rows_of("replication_queue")
    batched = [
        r.asDict()
        for r in spark.table(wh.table("int_batch_commands"))
        .select(*identity, "batch_id", "batched_at", "queue_order")
        .collect()
    ]
    times: dict[tuple, list[int]] = {}
    for r in batched:
        times.setdefault(tuple(r[c] for c in identity), []).append(r["batch_id"])
    queued_ids = {tuple(r[c] for c in identity) for r in queue}
    for r in queue:
        found = times.get(tuple(r[c] for c in identity), [])
        if len(found) != 1:
            problems.append(
                f"queued command {r['subscriber']}/{r['tran_id']}/{r['command_seq']} is in {len(found)} batches {found}"
            )
    problems += [f"batched command {k} is not in the queue" for k in times if k not in queued_ids]

    # every transaction judged or quarantined exactly once
    outcomes = wh.rows_of("transaction_outcomes")
    rejects = wh.rows_of("queue_rejects")
    seen: dict[tuple, int] = {}
    for o in outcomes:
        seen[(o["subscriber"], o["tran_id"])] = seen.get((o["subscriber"], o["tran_id"]), 0) + 1
    for t in {(r["subscriber"], r["tran_id"]) for r in rejects}:
        seen[t] = seen.get(t, 0) + 1
    for t in {(r["subscriber"], r["tran_id"]) for r in queue}:
        if seen.get(t, 0) != 1:
            problems.append(f"transaction {t[0]}/{t[1]} was judged or quarantined {seen.get(t, 0)} times")

    # the sequential reference, fed batch by batch in the batches the runs cut
    scenario = Scenario("deploy_test", pub, SUBSCRIBERS, [])
    reference = ReferenceBackend(scenario)
    reader: ReferenceReader = reference.reader
    foreign_log = report_path.with_name("foreign.json")
    stamped_at = None  # the trigger's commit right after the outside writes, if any
    if foreign_log.exists():
        written = json.loads(foreign_log.read_text())
        history = spark.table(f"{wh.table('customers')}.history")
        child = history.where(history.parent_id == written["snapshot"]).select("snapshot_id").first()
        if child is None:
            problems.append("the publisher had no commit after the outside writes")
        else:
            stamped_at = child.snapshot_id
            before = {
                r["customer_id"]: r["msrepl_tran_version"]
                for r in table_at(wh, wh.article("customers"), written["snapshot"]).collect()
            }
            after = {
                r["customer_id"]: r["msrepl_tran_version"]
                for r in table_at(wh, wh.article("customers"), stamped_at).collect()
            }
            for op, key in written["writes"]:
                # the first commit after them is the trigger's, and it gave each written row a version
                if op != "D" and (after.get(key) is None or after.get(key) == before.get(key)):
                    problems.append(
                        f"outside {op} of customer {key}: not stamped by the commit after it "
                        f"(version {before.get(key)} -> {after.get(key)})"
                    )
                if op == "D" and key in after:
                    problems.append(f"outside delete of customer {key}: the row is back")
    for article in pub.articles:
        first = (
            spark.table(f"{wh.article_table(article)}.snapshots").orderBy("committed_at").select("snapshot_id").first()
        )
        start = stamped_at if article.name == "customers" and stamped_at else (first.snapshot_id if first else None)
        initial = [r.asDict() for r in table_at(wh, article, start).collect()]
        reference.put_publisher_rows(article.name, initial)
    batch_of = {k: v[0] for k, v in times.items()}
    # the order the batch cut read from the queue's commits (SQL Server's orderkey)
    order_of = {tuple(r[c] for c in identity): r["queue_order"] for r in batched}
    # every history row is a batch, also one that took no command (it still takes a batch id);
    # a run with nothing to do wrote none (docs/spec.md 5.10)
    batch_time = {r["batch_id"]: r["started_at"] for r in wh.rows_of("queue_reader_history")}
    batch_time.update({r["batch_id"]: r["batched_at"] for r in batched})
    for batch_id in sorted(batch_time):
        reader.queue.extend(
            {**r, "queue_order": order_of[tuple(r[c] for c in identity)]}
            for r in queue
            if batch_of.get(tuple(r[c] for c in identity)) == batch_id
        )
        reader.queue_commits += 1  # the queue commit(s) the batch read: the run had something to do
        if reader.run(batch_time[batch_id]) != batch_id:
            problems.append(f"reference batch numbering differs at batch {batch_id}")
    expected = normalized_outputs(scenario, reference.outputs())
    actual = normalized_outputs(scenario, SparkBackend.attach(scenario, schema).outputs())
    for name in expected:
        for rows in (expected[name], actual[name]):
            for r in rows:
                r.pop("detected_at", None)  # the run's clock, not the reference's
                r.pop("delivered_at", None)  # set by distribution
        if expected[name] != actual[name]:
            diff_e = [r for r in expected[name] if r not in actual[name]][:3]
            diff_a = [r for r in actual[name] if r not in expected[name]][:3]
            problems.append(
                f"{name} differs from the reference ({len(expected[name])} expected, "
                f"{len(actual[name])} actual); expected only: {json.dumps(diff_e, default=str)[:800]}; "
                f"actual only: {json.dumps(diff_a, default=str)[:800]}"
            )

    # every replica equals the publisher
    for article in pub.articles:
        publisher = {canonical_key(article, r): normalize_row(article, r) for r in wh.publisher_rows(article.name)}
        for s in SUBSCRIBERS:
            replica_table = f"{schema}__{s}.{article.name}"
            replica = {
                canonical_key(article, r.asDict()): normalize_row(article, r.asDict())
                for r in spark.table(replica_table).collect()
            }
            if replica != publisher:
                wrong = sorted(k for k in publisher.keys() | replica.keys() if publisher.get(k) != replica.get(k))
                problems.append(
                    f"replica {s}.{article.name} differs from the publisher on {len(wrong)} row(s), "
                    f"e.g. {wrong[:3]}: publisher {[publisher.get(k) for k in wrong[:1]]} "
                    f"replica {[replica.get(k) for k in wrong[:1]]}"
                )

    if foreign_log.exists():
        customers = pub.article("customers")
        keys = {canonical_key(customers, {"customer_id": k}) for _, k in json.loads(foreign_log.read_text())["writes"]}
        met = [c for c in actual["conflicts"] if c["article"] == "customers" and c["row_key"] in keys]
        if not met:
            problems.append("no subscriber's change met an outside write (raise QREPL_DEPLOY_TRANSACTIONS)")
    report = {
        "transactions_queued": len({(r["subscriber"], r["tran_id"]) for r in queue}),
        "commands_queued": len(queue),
        "batches": len(batch_time),
        "outcomes": {
            o: sum(1 for r in outcomes if r["outcome"] == o) for o in sorted({r["outcome"] for r in outcomes})
        },
        "conflicts": len(actual["conflicts"]),
        "conflicts_on_outside_writes": len(met) if foreign_log.exists() else None,
        "compensating_commands": len(actual["compensating_commands"]),
        "quarantined_commands": len(rejects),
        "problems": problems,
    }
    report_path.write_text(json.dumps(report, indent=2, default=str))
    for p in problems[:20]:
        print(f"FAIL {p}")
    if problems:
        print(f"deploy-test: {len(problems)} problem(s); full report {report_path}")
        return 1
    print(
        "deploy-test: replicas equal the publisher; every queued command in exactly one batch; every "
        "transaction judged or quarantined once; outcomes, conflicts, compensations, quarantine and the "
        "publisher equal the sequential reference"
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["main", "setup", "capture", "verify"])
    parser.add_argument("--schema", default="qrepl_deploy")
    parser.add_argument("--subscriber")
    parser.add_argument("--transactions", type=int, default=int(os.environ.get("QREPL_DEPLOY_TRANSACTIONS", "100")))
    parser.add_argument("--log", type=Path)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    if args.role == "main":
        sys.exit(main(args.schema, args.transactions))
    if args.role == "setup":
        setup(args.schema)
    elif args.role == "capture":
        capture(args.schema, args.subscriber, args.transactions, args.log)
    else:
        sys.exit(verify(args.schema, args.report))
