"""`scripts/thrift.sh`, `scripts/cluster.sh` and `scripts/rest_catalog.sh` remember their servers' pids in files under the
state directory. After a crash or a reboot such a file names a pid the system may have given
to any other process. `stop` must then stop nothing but say the file was stale, and `start`
must not take that process for a running server. Here the stale pid is a live `sleep` of the
same user: before the fix, `stop` killed it (and as root it would kill any user's process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def bystander():
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def _stop(script: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / script), "stop"], env=env, capture_output=True, text=True, timeout=120
    )


def test_thrift_stop_leaves_a_process_that_reused_the_servers_pid_alone(tmp_path, bystander):
    (tmp_path / "thrift.pid").write_text(f"{bystander.pid}\n")
    result = _stop("thrift.sh", {"PATH": "/usr/bin:/bin", "QREPL_STATE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert bystander.poll() is None, "stop killed a process that is not the thrift server"
    assert "stale" in result.stdout and not (tmp_path / "thrift.pid").exists()


def test_cluster_stop_leaves_processes_that_reused_its_pids_alone(tmp_path, bystander):
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    for name in ("master", "worker"):
        (cluster / f"{name}.pid").write_text(f"{bystander.pid}\n")
    result = _stop("cluster.sh", {"PATH": "/usr/bin:/bin", "QREPL_DEPLOY_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert bystander.poll() is None, "stop killed a process that is not the cluster's"
    assert result.stdout.count("stale") == 2 and not list(cluster.glob("*.pid"))


def test_rest_catalog_stop_leaves_a_process_that_reused_the_servers_pid_alone(tmp_path, bystander):
    (tmp_path / "rest").mkdir()
    (tmp_path / "rest" / "rest.pid").write_text(f"{bystander.pid}\n")
    result = _stop("rest_catalog.sh", {"PATH": "/usr/bin:/bin", "QREPL_STATE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert bystander.poll() is None, "stop killed a process that is not the REST catalog"
    assert "stale" in result.stdout and not (tmp_path / "rest" / "rest.pid").exists()


def test_a_pid_file_naming_the_server_itself_is_still_its_own(tmp_path):
    """The check is by the process's own command line: a process that is the server (here one
    whose argv carries the server's class and port) is stopped as before."""
    fake = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(300)",
            "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
            "hive.server2.thrift.port=10000",
        ]
    )
    try:
        (tmp_path / "thrift.pid").write_text(f"{fake.pid}\n")
        result = _stop("thrift.sh", {"PATH": "/usr/bin:/bin", "QREPL_STATE_DIR": str(tmp_path)})
        assert result.returncode == 0, result.stderr
        assert fake.wait(timeout=60) is not None and "thrift server stopped" in result.stdout
    finally:
        fake.kill()
