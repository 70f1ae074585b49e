"""Several qrepl JVMs on one PostgreSQL-backed metastore (docs/deploying.md): started by the
project's own script, concurrent Iceberg commits from separate processes all land (Iceberg's
Hive locks on, their tables created by qrepl.storage.spark), and the lock table is empty afterwards.

`make concurrency` runs it (named *_check so `make test` does not collect it). CI covers separate
JVMs on one PostgreSQL metastore through `make deploy-test`; what only this check adds is two
JVMs racing to create the run lock."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.e2e

SETUP = """
from qrepl.storage.spark import get_spark
spark = get_spark()
spark.sql("create database shared_probe")
spark.sql("create table shared_probe.events (writer string, n int) using iceberg")
"""

LOCKER = """
from qrepl.storage.spark import get_spark
get_spark().sql("create table shared_probe.qrepl_run_lock using iceberg as select 1 as held")
"""

WRITER = """
import sys
from qrepl.storage.spark import get_spark
spark = get_spark()
for n in range(int(sys.argv[2])):
    spark.createDataFrame([(sys.argv[1], n)], "writer string, n int").writeTo("shared_probe.events").append()
print("rows seen by", sys.argv[1], spark.table("shared_probe.events").count())
"""

READER = """
from qrepl.storage.spark import get_spark
spark = get_spark()
rows = spark.table("shared_probe.events").groupBy("writer").count().collect()
print(sorted((r["writer"], r["count"]) for r in rows))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def postgres_metastore(tmp_path_factory):
    deploy = Path(os.environ.get("QREPL_STATE_DIR", PROJECT / ".qrepl_state")) / "e2e_shared_metastore"
    env = {**os.environ, "QREPL_DEPLOY_DIR": str(deploy), "QREPL_PG_PORT": str(free_port())}
    # a previous run's cluster: its data lives outside the state dir when run as root (postgres.sh)
    subprocess.run(["bash", "scripts/postgres.sh", "destroy"], cwd=PROJECT, env=env, check=True)
    subprocess.run(["rm", "-rf", str(deploy)], check=True)
    subprocess.run(["bash", "scripts/postgres.sh", "start"], cwd=PROJECT, env=env, check=True)
    try:
        url = subprocess.run(
            ["bash", "scripts/postgres.sh", "url"], cwd=PROJECT, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()
        yield {
            **env,
            "QREPL_METASTORE": url,
            "QREPL_WAREHOUSE": str(deploy / "warehouse"),
            "QREPL_STATE_DIR": str(deploy),
            "QREPL_SPARK_MASTER": "local[1]",
            "QREPL_DRIVER_MEMORY": "1g",
        }
    finally:
        subprocess.run(["bash", "scripts/postgres.sh", "stop"], cwd=PROJECT, env=env, check=True)


def python(env: dict, code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=PROJECT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_concurrent_commits_from_separate_jvms_all_land(postgres_metastore):
    env = postgres_metastore
    init = subprocess.run(
        [sys.executable, "-m", "qrepl.storage.spark", "init-metastore"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert init.returncode == 0, init.stderr[-2000:]
    assert "metastore ready: jdbc:postgresql://127.0.0.1:" in init.stdout

    setup = python(env, SETUP)
    assert setup.wait(timeout=600) == 0, setup.stderr.read()[-2000:]
    # two processes create the same table at once, as two queue readers take the run lock:
    # exactly one may succeed (the metastore keeps table names unique)
    lockers = [python(env, LOCKER) for _ in range(2)]
    codes = sorted(p.wait(timeout=600) for p in lockers)
    assert codes[0] == 0 and codes[1] != 0, [p.stderr.read()[-1500:] for p in lockers]

    writers = [python(env, WRITER, name, "6") for name in ("a", "b")]
    for w in writers:
        out, err = w.communicate(timeout=900)
        assert w.returncode == 0, err[-2000:]

    reader = python(env, READER)
    out, err = reader.communicate(timeout=600)
    assert reader.returncode == 0, err[-2000:]
    assert out.strip().splitlines()[-1] == "[('a', 6), ('b', 6)]"  # nothing lost, nothing doubled

    sockets = Path(env["QREPL_DEPLOY_DIR"]) / "postgres" / "run"
    locks = subprocess.run(
        [
            "bash",
            "-c",
            f"{'runuser -u qrepl-pg -- ' if os.getuid() == 0 else ''}"
            f"psql -h {sockets} -p {env['QREPL_PG_PORT']} -U qrepl -d qrepl_metastore -tAc "
            "'select count(*) from hive_locks'",
        ],
        capture_output=True,
        text=True,
    )
    assert locks.returncode == 0, locks.stderr
    assert locks.stdout.strip() == "0"  # every commit released its lock
