"""One queue reader at a time per publication (docs/spec.md, failure contract): a second run
fails fast naming the holder, or waits; a lock left by a dead process is recovered."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.storage.dbt_runner import DbtError, dbt_invoke
from qrepl.storage import run_lock
from qrepl.storage.run_lock import LOCK_TABLE, RunLocked, current_holder
from qrepl.services.service import run_reader
from qrepl.storage.warehouse import Warehouse
from run_lock_fixtures import batches, hold_lock, one_insert_queued

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_lock"


@pytest.fixture()
def wh(spark) -> Warehouse:
    return one_insert_queued(spark, SCHEMA)


def _dead_pid() -> int:
    return int(
        subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout
    )


def test_a_second_reader_fails_fast_naming_the_holder(wh):
    hold_lock(wh, os.getppid())  # a live process
    with pytest.raises(RunLocked, match=f"already running .*pid={os.getppid()}"):
        run_reader(SCHEMA, echo=lambda _: None)
    # plain `dbt run` (what a scheduler runs against a Thrift server) is refused by the
    # project itself, before any model: nothing is cut, judged or applied
    with pytest.raises(DbtError):
        dbt_invoke(["run"], SCHEMA)
    assert batches(wh) == 0 and not wh.exists("int_batch_commands")
    assert current_holder(wh).invocation_id == "other"  # the refused run never touched it

    result = CliRunner().invoke(main, ["run", "--schema", SCHEMA])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "qrepl unlock --schema qrepl_lock" in result.output

    result = CliRunner().invoke(main, ["unlock", "--schema", SCHEMA])
    assert result.exit_code == 0 and f"pid={os.getppid()}" in result.output
    run_reader(SCHEMA, echo=lambda _: None)
    assert batches(wh) == 1 and current_holder(wh) is None  # released at the end of the run


def test_a_lock_whose_lease_expired_is_recovered(wh):
    hold_lock(wh, _dead_pid(), lease=5, age_seconds=60)
    lines: list[str] = []
    run_reader(SCHEMA, echo=lines.append)
    assert any("recovered the run lock left by a dead process" in line for line in lines)
    assert batches(wh) == 1 and current_holder(wh) is None


def test_a_live_reader_in_another_container_with_this_host_name_is_not_judged_dead(wh):
    """Issue 39: liveness was "this pid exists on a host of this name"; a reader in another
    container with the same host name has a pid that does not exist here. Its lease is live."""
    hold_lock(wh, _dead_pid(), lease=300, age_seconds=0)
    with pytest.raises(RunLocked, match="already running"):
        run_reader(SCHEMA, echo=lambda _: None)
    assert batches(wh) == 0 and current_holder(wh).invocation_id == "other"


def test_recovery_removes_only_the_holder_it_judged_dead(wh, monkeypatch):
    """Issue 39: two sessions recover one dead lock. A judges the holder dead; B recovers the
    same lock and takes a fresh one; A's recovery must not then drop B's lock (before the fix
    it dropped whoever held the lock, and A and B both cut the batch)."""
    hold_lock(wh, _dead_pid(), lease=5, age_seconds=60)
    b = Warehouse(wh.spark.newSession(), SCHEMA)
    real = run_lock.current_holder
    state = {"calls": 0}

    def a_reads_then_b_races(w):
        state["calls"] += 1
        holder = real(w)
        if state["calls"] == 1:  # A has read the dead holder; B now recovers it and locks
            assert run_lock.recover_dead_lock(b) is not None
            hold_lock(b, os.getpid(), token="b" * 32, invocation_id="B", lease=300)
        return holder

    monkeypatch.setattr(run_lock, "current_holder", a_reads_then_b_races)
    assert run_lock.recover_dead_lock(wh) is None  # A finds the holder it judged dead gone
    monkeypatch.setattr(run_lock, "current_holder", real)
    assert current_holder(wh).invocation_id == "B"  # B's lock stands
    with pytest.raises(RunLocked, match="already running"):
        run_reader(SCHEMA, echo=lambda _: None)
    assert batches(wh) == 0


def test_qrepl_run_renews_its_lease_while_it_runs(wh, monkeypatch):
    monkeypatch.setenv("QREPL_RUN_LOCK_LEASE_SECONDS", "4")  # renewed every second
    seen: list = []
    done = threading.Event()
    observer = Warehouse(wh.spark.newSession(), SCHEMA)

    def watch():
        while not done.is_set():
            holder = current_holder(observer)
            if holder is not None:
                seen.append((holder.lease_seconds, holder.renewals))
            time.sleep(0.5)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run_reader(SCHEMA, echo=lambda _: None)
    finally:
        done.set()
        watcher.join()
    assert batches(wh) == 1 and current_holder(wh) is None
    assert seen and all(lease == 4 for lease, _ in seen)
    assert max(renewals for _, renewals in seen) >= 2, seen


def test_unlock_refuses_a_live_lease_and_removes_it_with_force(wh):
    hold_lock(wh, os.getpid(), lease=300)
    result = CliRunner().invoke(main, ["unlock", "--schema", SCHEMA])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "held by a live queue reader" in result.output and "--force" in result.output
    assert current_holder(wh) is not None
    result = CliRunner().invoke(main, ["unlock", "--force", "--schema", SCHEMA])
    assert result.exit_code == 0 and "removed the run lock" in result.output
    assert current_holder(wh) is None


def test_wait_runs_once_the_holder_releases(wh):
    hold_lock(wh, os.getppid())
    release = threading.Timer(3.0, lambda: wh.spark.sql(f"drop table {wh.table(LOCK_TABLE)} purge"))
    release.start()
    lines: list[str] = []
    run_reader(SCHEMA, echo=lines.append, wait_seconds=300)
    release.join()
    assert any(line.startswith("waiting for the queue reader") for line in lines)
    assert batches(wh) == 1


def test_a_run_on_a_schema_without_a_publication_says_so_in_one_line(spark):
    """A plain `dbt build` with the wrong QREPL_SCHEMA (or before `qrepl publication create`):
    the project's own line from the run lock's hook, and no lock is left behind."""
    empty = Warehouse(spark, "qrepl_lock_nopub")
    empty.drop_schema()
    spark.sql("create database qrepl_lock_nopub")
    with pytest.raises(DbtError) as failure:
        dbt_invoke(["run"], empty.schema)
    assert str(failure.value) == (
        "dbt run failed: schema qrepl_lock_nopub holds no publication: create one first (`qrepl publication "
        "create --config FILE --schema qrepl_lock_nopub`), or set QREPL_SCHEMA to the publication's schema"
    )
    assert not empty.exists(LOCK_TABLE)
    empty.drop_schema()
