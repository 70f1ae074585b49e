"""The soak: a publisher job updating rows in a loop beside `qrepl run`, distribute, maintain,
resolve by hand, subscription add, queued captures and immediate commits, as separate processes
(JVMs) on one PostgreSQL metastore; afterwards every job write is checked row by row against the
publisher table's Iceberg history and the conflict log (python/tests/soak_oracle.py).

`make soak` runs it for MINUTES (10) per policy (named *_check so `make test` does not collect
it); python/tests/e2e/test_soak.py runs a short part of the same code in CI. The three processes
are python/tests/e2e/soak_driver.py's roles: job, qrepl, subscriber. Each policy's logs, the
processes' output and report.json stay in `$QREPL_STATE_DIR/soak_logs/<policy>/`.

State: 2 articles, 20 rows, so that every writer meets the others on the same rows.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from soak_oracle import check

PROJECT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).resolve().with_name("soak_driver.py")
ARTICLE_KEYS = {"customers": ("customer_id", "city"), "tags": ("tag", "note")}
pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def soak_metastore():
    """A PostgreSQL metastore of the soak's own, under the state dir (scripts/postgres.sh)."""
    deploy = Path(os.environ.get("QREPL_STATE_DIR", PROJECT / ".qrepl_state")) / "e2e_soak"
    env = {**os.environ, "QREPL_DEPLOY_DIR": str(deploy), "QREPL_PG_PORT": str(free_port())}
    subprocess.run(["bash", "scripts/postgres.sh", "destroy"], cwd=PROJECT, env=env, check=True)
    subprocess.run(["rm", "-rf", str(deploy)], check=True)
    subprocess.run(["bash", "scripts/postgres.sh", "start"], cwd=PROJECT, env=env, check=True)
    try:
        url = subprocess.run(
            ["bash", "scripts/postgres.sh", "url"], cwd=PROJECT, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()
        env = {
            **env,
            "QREPL_METASTORE": url,
            "QREPL_WAREHOUSE": str(deploy / "warehouse"),
            "QREPL_STATE_DIR": str(deploy),
            "QREPL_SPARK_MASTER": "local[1]",
            "QREPL_DRIVER_MEMORY": "1g",
        }
        init = subprocess.run(
            [sys.executable, "-m", "qrepl.storage.spark", "init-metastore"],
            cwd=PROJECT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert init.returncode == 0, init.stderr[-2000:]
        yield env, deploy
    finally:
        subprocess.run(["bash", "scripts/postgres.sh", "stop"], cwd=PROJECT, env=env, check=True)


def _key(article: str, row_key: str):
    return json.loads(row_key)[ARTICLE_KEYS[article][0]]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_soak(env: dict, deploy: Path, policy: str, seconds: float, ops: int = 1_000_000) -> dict:
    """Start the three processes, wait for them, run the oracle; returns the report (counts,
    the oracle's summary and its losses as text)."""
    schema = f"qrepl_soak_{policy}"
    logdir = deploy.parent / "soak_logs" / policy  # kept when the next soak's metastore is made anew
    subprocess.run(["rm", "-rf", str(logdir)], check=True)
    logdir.mkdir(parents=True)
    children = {}
    for role, args in (("qrepl", [policy, str(seconds), str(ops)]), ("job", []), ("subscriber", [])):
        role_env = {
            **env,
            "DBT_TARGET_PATH": str(logdir / f"target_{role}"),
            "DBT_LOG_PATH": str(logdir / f"logs_{role}"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        }
        out = open(logdir / f"{role}.out", "w")
        children[role] = subprocess.Popen(
            [sys.executable, str(DRIVER), role, schema, str(logdir), *args],
            cwd=PROJECT,
            env=role_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    started = time.monotonic()
    try:
        for role, child in children.items():
            code = child.wait(timeout=seconds + 3600)
            assert code == 0, f"{role} exited {code}:\n" + (logdir / f"{role}.out").read_text()[-4000:]
    finally:
        for child in children.values():
            if child.poll() is None:
                os.killpg(child.pid, 9)
    return judge(logdir, policy, time.monotonic() - started)


def judge(logdir: Path, policy: str, wall: float = 0.0) -> dict:
    """The oracle over what the processes recorded in `logdir`."""
    dump = json.loads((logdir / "dump.json").read_text())
    history = {
        a: [(sid, {k: (v, ver) for k, v, ver in rows}) for sid, rows in states] for a, states in dump["history"].items()
    }
    in_history = {(a, v) for a, states in history.items() for _, rows in states for v, _ in rows.values()}
    job = _lines(logdir / "job.jsonl")
    # a write the job saw fail that still landed (a commit whose state was unknown) is judged too
    writes = [
        (j["article"], j["key"], j["value"])
        for j in job
        if j["status"] == "committed" or (j["article"], j["value"]) in in_history
    ]
    transactions = _lines(logdir / "subscriber.jsonl")
    commands = {
        c["new_version"]: {
            "article": c["article"],
            "key": _key(c["article"], c["row_key"]),
            "old_value": c["old_value"],
            "old_version": c["old_version"],
            "tran_id": t["tran_id"],
        }
        for t in transactions
        for c in t["commands"]
        if c["new_version"]
    }
    conflicts = {}
    for c in dump["conflicts"]:
        row = json.loads(c["publisher_row"]) if c["publisher_row"] else None
        conflicts[c["conflict_id"]] = {
            "article": c["article"],
            "key": _key(c["article"], c["row_key"]),
            "publisher_value": row.get(ARTICLE_KEYS[c["article"]][1]) if row else None,
            "publisher_version": c["publisher_version"],
            "new_version": c["new_version"],
            "winner": c["winner"],
        }
    resolves = {r["written_version"]: r["conflict_id"] for r in dump["reviews"] if r["written_version"]}
    verdict = check(history, writes, commands, resolves, conflicts)
    ops = _lines(logdir / "qrepl.jsonl")
    report = {
        "policy": policy,
        "wall_seconds": round(wall),
        "job_writes": {
            "committed": sum(j["status"] == "committed" for j in job),
            "refused": sum(j["status"] == "failed" for j in job),
            "unknown": sum(j["status"] == "unknown" for j in job),
            "judged": len(writes),
        },
        "qrepl_ops": {
            f"{op} {'ok' if ok else 'failed'}": n
            for (op, ok), n in sorted(Counter((o["op"], o["ok"]) for o in ops).items())
        },
        "resolves": Counter(
            str(o.get("result", o.get("error", ""))).split(" ")[0] for o in ops if o["op"] == "resolve"
        ),
        "subscriber_transactions": Counter(f"{t['mode']} {t['outcome'].split(':')[0]}" for t in transactions),
        "conflicts_logged": Counter(f"{c['conflict_type']} ({c['winner']} won)" for c in dump["conflicts"]),
        "reviews": Counter(f"keep {r['keep']}: {r['outcome']}" for r in dump["reviews"]),
        "reader_outcomes": Counter(o["outcome"] for o in dump["outcomes"]),
        "immediate_outcomes": Counter(o["outcome"] for o in dump["immediate"]),
        "snapshots": dump["counts"],
        "oracle": verdict.summary(),
        "losses": [str(loss) for loss in verdict.losses],
        "failed_ops": [f"{o['op']}: {o['error']}" for o in ops if not o["ok"]],
    }
    print(json.dumps(report, indent=1, default=str))
    (logdir / "report.json").write_text(json.dumps(report, indent=1, default=str))
    return report


@pytest.mark.parametrize("policy", ["publisher_wins", "subscriber_wins"])
def test_soak_no_job_write_is_lost(soak_metastore, policy):
    """`make soak`: MINUTES (10) of every writer at once per policy; every job write is in the
    final table, or replaced by a later job write, by a change that had seen it, or with a
    logged conflict."""
    env, deploy = soak_metastore
    report = run_soak(env, deploy, policy, seconds=float(os.environ.get("QREPL_SOAK_MINUTES", "10")) * 60)
    assert report["job_writes"]["committed"] > 0
    assert report["losses"] == []
