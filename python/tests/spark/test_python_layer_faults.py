"""Every write path of the Python layer converges when rerun after a failure at any of its
writes (docs/spec.md, failure contract): distribution (to a partitioned subscriber too),
reinitialization, subscription add (with a row filter, with a column list), a filter change,
capture, enqueue, publishing a table in place, adding a column to a published article
with subscriptions and resolving a conflict by hand. Nothing is lost or delivered twice.

Each operation is first run uninterrupted from a checkpoint of every table it can touch
(Iceberg snapshots, rolled back between tries); then, for every write K it makes, it is
rerun from the checkpoint failing right after write K, and rerun once more as the recovery
(unless K was its last write: the operation is then complete). The tables must then equal
the uninterrupted result. The two publication changes fail at one write each in CI (the
first ALTER of a table: the table changed, nothing recorded), the resolve at its
compare-and-swap (written, review not recorded), distribution at every 8th write,
reinitialization and subscription add at every other write, each also at its last
(python_layer_ops.CI_EVERY); every operation at every write in `make faults`.
"""

from __future__ import annotations

import json
import os

import pytest

from python_layer_ops import (
    CI_EVERY,
    CI_POINTS,
    OPERATIONS,
    PREPARE,
    RETRY_IS_NEW_WORK,
    build_base,
    captured_commands,
    schemas,
    state,
)
from qrepl.storage import faults
from qrepl.storage.dbt_runner import DbtError
from qrepl.storage.replica import replica_schema
from qrepl.services.distribution import DistributionFailed
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark


class Checkpoint:
    """Every table's current Iceberg snapshot in the given schemas; `restore` rolls them back
    and drops tables created since (the tries of one operation start from the same state)."""

    def __init__(self, spark, schemas: list[str]) -> None:
        self.spark, self.schemas = spark, schemas
        self.snapshots = {t: self._snapshot(t) for t in self._tables()}
        self.views = set(self._tables(views=True))

    def _tables(self, views: bool = False) -> list[str]:
        """The schemas' Iceberg tables, or (views=True) their views: the marts derived from
        the batch log, which hold no snapshots (materialization qrepl_view)."""
        return [
            f"{s}.{t.name}"
            for s in self.schemas
            if self.spark.catalog.databaseExists(s)
            for t in self.spark.catalog.listTables(s)
            if not t.isTemporary and (t.tableType == "VIEW") == views
        ]

    def _snapshot(self, table: str) -> int | None:
        row = self.spark.sql(
            f"select snapshot_id from {table}.history where is_current_ancestor order by made_current_at desc limit 1"
        ).first()
        return row.snapshot_id if row else None

    def restore(self) -> None:
        for view in self._tables(views=True):
            if view not in self.views:
                self.spark.sql(f"drop view {view}")
        for table in self._tables():
            if table not in self.snapshots:
                self.spark.sql(f"drop table {table} purge")
            elif self.snapshots[table] is None:
                self.spark.sql(f"delete from {table}")
            elif self._snapshot(table) != self.snapshots[table]:
                # not rollback_to_snapshot: a replaced replica table's old snapshot is no ancestor
                self.spark.sql(f"call spark_catalog.system.set_current_snapshot('{table}', {self.snapshots[table]})")


@pytest.fixture(scope="module")
def wh(spark) -> Warehouse:
    return build_base(spark)


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_failed_write_path_converges_when_rerun(wh, operation, tmp_path):
    op = OPERATIONS[operation]
    prepare = PREPARE.get(operation, lambda wh: None)
    checkpoint = Checkpoint(wh.spark, schemas(wh))
    faults.arm(10**9, faults.raise_fault)
    op(wh, tmp_path)
    writes = faults.disarm()
    labels = faults.labels()
    expected = state(wh)
    assert writes > 0, f"{operation} made no write"
    if operation == "distribute":  # a filtered distribution among its writes (docs/spec.md §11)
        held = [json.loads(r)["customer_id"] for r in expected[f"{replica_schema(wh, 'p')}.customers"]]
        assert held == [2, 3], f"customer 1 moved out of p's partition, p holds {held}"
    points = range(1, writes + 1)
    if operation in CI_POINTS and os.environ.get("QREPL_FAULT_POINTS") != "all":
        points = [next(k for k, label in enumerate(labels, 1) if CI_POINTS[operation] in label)]
    if operation in CI_EVERY and os.environ.get("QREPL_FAULT_POINTS") != "all":
        points = sorted({*range(1, writes + 1, CI_EVERY[operation]), writes})
    try:
        for k in points:
            checkpoint.restore()
            prepare(wh)
            faults.arm(k, faults.raise_fault)
            # a write of the publisher's trigger fails inside `dbt run-operation`: dbt reports it;
            # distribution reports a subscriber's failure after delivering the others
            with pytest.raises((faults.InjectedFault, DbtError, DistributionFailed), match="injected fault"):
                op(wh, tmp_path)
            faults.disarm()
            if operation in RETRY_IS_NEW_WORK:
                queued = captured_commands(wh)
                assert queued in (0, 2), f"a partial transaction is visible after write {k}"
                if not queued:
                    op(wh, tmp_path)
                continue
            if k < writes:
                op(wh, tmp_path)  # the rerun after the failure
            # after its last write an operation is done: a rerun would be a new one (a second
            # reinitialization, an "already subscribed"), so the state must already be final
            assert state(wh) == expected, f"{operation} did not converge after a failure at write {k}"
            print(f"{operation} failed at write {k}/{writes}: converged", flush=True)
    finally:
        faults.disarm()
        checkpoint.restore()
        prepare(wh)
