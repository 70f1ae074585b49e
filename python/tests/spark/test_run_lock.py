"""One queue reader at a time per publication (docs/spec.md, failure contract): a second run
fails fast naming the holder, or waits; a lock left by a dead process is recovered."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from datetime import datetime

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.dbt_runner import DbtError, dbt_invoke
from qrepl.model import publication_from_dict
from qrepl.run_lock import LOCK_TABLE, RunLocked, current_holder
from qrepl.service import run_reader
from qrepl.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_lock"
PUBLICATION = {"publication": "sales", "policy": "publisher_wins", "articles": [
    {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}]}


@pytest.fixture()
def wh(spark) -> Warehouse:
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.add_subscription("s1")
    wh.append_queue([{"subscriber": "s1", "generation": 0, "tran_id": "t1", "tran_seq": 1, "command_seq": 1,
                      "article": "customers", "op": "I", "row_key": '{"customer_id":1}', "old_version": None,
                      "new_version": "11111111-0000-4000-8000-000000000001",
                      "new_row": '{"customer_id":1,"city":"x"}', "old_row": None,
                      "enqueued_at": datetime(2026, 1, 1)}])
    return wh


def _hold_lock(wh: Warehouse, pid: int) -> None:
    """What another qrepl process's run holds: the lock table naming it."""
    wh.spark.sql(f"create table {wh.table(LOCK_TABLE)} using iceberg tblproperties ("
                 f"'qrepl.holder' = 'qrepl run pid={pid} host={socket.gethostname()}', "
                 f"'qrepl.invocation_id' = 'other', 'qrepl.acquired_at' = '2026-01-01 00:00:00 UTC') "
                 f"as select 1 as held")


def _batches(wh: Warehouse) -> int:
    return len(wh.rows_of("queue_reader_history"))


def test_a_second_reader_fails_fast_naming_the_holder(wh):
    _hold_lock(wh, os.getppid())  # a live process
    with pytest.raises(RunLocked, match=f"already running .*pid={os.getppid()}"):
        run_reader(SCHEMA, echo=lambda _: None)
    # plain `dbt run` (what a scheduler runs against a Thrift server) is refused by the
    # project itself, before any model: nothing is cut, judged or applied
    with pytest.raises(DbtError):
        dbt_invoke(["run"], SCHEMA)
    assert _batches(wh) == 0 and not wh.exists("int_batch_commands")
    assert current_holder(wh).invocation_id == "other"  # the refused run never touched it

    result = CliRunner().invoke(main, ["run", "--schema", SCHEMA])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "qrepl unlock --schema qrepl_lock" in result.output

    result = CliRunner().invoke(main, ["unlock", "--schema", SCHEMA])
    assert result.exit_code == 0 and f"pid={os.getppid()}" in result.output
    run_reader(SCHEMA, echo=lambda _: None)
    assert _batches(wh) == 1 and current_holder(wh) is None  # released at the end of the run


def test_a_lock_left_by_a_dead_process_is_recovered(wh):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _hold_lock(wh, int(dead.stdout))
    lines: list[str] = []
    run_reader(SCHEMA, echo=lines.append)
    assert any("recovered the run lock left by a dead process" in line for line in lines)
    assert _batches(wh) == 1 and current_holder(wh) is None


def test_wait_runs_once_the_holder_releases(wh):
    _hold_lock(wh, os.getppid())
    release = threading.Timer(3.0, lambda: wh.spark.sql(f"drop table {wh.table(LOCK_TABLE)} purge"))
    release.start()
    lines: list[str] = []
    run_reader(SCHEMA, echo=lines.append, wait_seconds=300)
    release.join()
    assert any(line.startswith("waiting for the queue reader") for line in lines)
    assert _batches(wh) == 1
