"""Every write path of the Python layer converges when rerun after a failure at any of its
writes (docs/spec.md, failure contract): distribution, reinitialization, subscription add,
capture and enqueue. Nothing is lost or delivered twice.

Each operation is first run uninterrupted from a checkpoint of every table it can touch
(Iceberg snapshots, rolled back between tries); then, for every write K it makes, it is
rerun from the checkpoint failing right after write K, and rerun once more as the recovery.
The tables must then equal the uninterrupted result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from qrepl import faults
from qrepl.capture import Subscriber
from qrepl.distribution import distribute, reinitialize
from qrepl.enqueue import enqueue_file
from qrepl.model import publication_from_dict
from qrepl.replica import replica_schema
from qrepl.service import add_subscription, run_reader
from qrepl.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_pyfaults"
SUBSCRIBERS = ("a", "b", "c")
PUBLICATION = {
    "publication": "sales", "policy": "publisher_wins", "centralized_conflicts": False,
    "articles": [{"name": "customers", "key": ["customer_id"],
                  "columns": {"customer_id": "int", "city": "string"}}],
}
IGNORED_COLUMNS = {"delivered_at", "enqueued_at", "tran_seq", "tran_id", "new_version", "new_row", "old_row",
                   "msrepl_tran_version", "snapshot_id"}


def _schemas(wh: Warehouse) -> list[str]:
    return [wh.schema] + [replica_schema(wh, s) for s in SUBSCRIBERS]


class Checkpoint:
    """Every table's current Iceberg snapshot in the given schemas; `restore` rolls them back
    and drops tables created since (the tries of one operation start from the same state)."""

    def __init__(self, spark, schemas: list[str]) -> None:
        self.spark, self.schemas = spark, schemas
        self.snapshots = {t: self._snapshot(t) for t in self._tables()}

    def _tables(self) -> list[str]:
        return [f"{s}.{t.name}" for s in self.schemas if self.spark.catalog.databaseExists(s)
                for t in self.spark.catalog.listTables(s) if not t.isTemporary]

    def _snapshot(self, table: str) -> int | None:
        row = self.spark.sql(f"select snapshot_id from {table}.snapshots order by committed_at desc limit 1").first()
        return row.snapshot_id if row else None

    def restore(self) -> None:
        for table in self._tables():
            if table not in self.snapshots:
                self.spark.sql(f"drop table {table} purge")
            elif self.snapshots[table] is None:
                self.spark.sql(f"delete from {table}")
            elif self._snapshot(table) != self.snapshots[table]:
                self.spark.sql(f"call spark_catalog.system.rollback_to_snapshot('{table}', {self.snapshots[table]})")


def _state(wh: Warehouse) -> dict:
    """What a user relies on after the operation: publisher, queue, replicas, subscriptions,
    which compensations are still pending, what each replica's conflicts hold. Generated
    values (versions, times, ids) are compared by count, not by value."""
    spark = wh.spark
    state = {}
    for schema in _schemas(wh):
        if not spark.catalog.databaseExists(schema):
            continue
        for t in spark.catalog.listTables(schema):
            if t.isTemporary or t.name.startswith("qrepl_resolve_"):
                continue
            rows = [{k: v for k, v in r.asDict().items() if k not in IGNORED_COLUMNS}
                    | ({"delivered": r["delivered_at"] is not None} if "delivered_at" in r.asDict() else {})
                    for r in spark.table(f"{schema}.{t.name}").collect()]
            state[f"{schema}.{t.name}"] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    return state


@pytest.fixture(scope="module")
def wh(spark) -> Warehouse:
    """Two subscribers race on customer 1 and b also deletes customer 2: b's transaction is
    rejected (compensations pending), a's is applied (publisher changes pending for b)."""
    wh = Warehouse(spark, SCHEMA)
    for s in SUBSCRIBERS:
        Warehouse(spark, replica_schema(wh, s)).drop_schema()
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows("customers", [{"customer_id": i, "city": f"c{i}", "msrepl_tran_version": f"v-{i}"}
                                 for i in (1, 2, 3)])
    for s in ("a", "b"):
        add_subscription(SCHEMA, s, echo=lambda _: None)
    with Subscriber(wh, "a").transaction("a1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "A"})
    with Subscriber(wh, "b").transaction("b1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "B"})
        t.delete("customers", {"customer_id": 2})
    run_reader(SCHEMA, echo=lambda _: None)
    return wh


def _capture(wh: Warehouse) -> None:
    with Subscriber(wh, "a").transaction("a2") as t:
        t.update("customers", {"customer_id": 3}, {"city": "A3"})
        t.insert("customers", {"customer_id": 4, "city": "A4"})


def _enqueue(wh: Warehouse, tmp: Path) -> None:
    path = tmp / "changes.jsonl"
    path.write_text(json.dumps({"tran_id": "file-1", "article": "customers", "op": "U",
                                "row": {"customer_id": 3, "city": "F"}, "old_version": "v-3"}) + "\n")
    enqueue_file(wh, "a", path, progress=lambda _: None)


OPERATIONS: dict[str, Callable] = {
    "distribute": lambda wh, tmp: distribute(wh),
    "reinitialize": lambda wh, tmp: reinitialize(wh, "b"),
    "subscription_add": lambda wh, tmp: add_subscription(SCHEMA, "c", echo=lambda _: None),
    "capture": lambda wh, tmp: _capture(wh),
    "enqueue": _enqueue,
}
# rerunning these after a failure is not a no-op by design: a captured transaction the caller
# saw fail is retried by the caller (a new transaction); the checks below say what converges
RETRY_IS_NEW_WORK = {"capture"}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_a_failed_write_path_converges_when_rerun(wh, operation, tmp_path):
    op = OPERATIONS[operation]
    checkpoint = Checkpoint(wh.spark, _schemas(wh))
    faults.arm(10**9, faults.raise_fault)
    op(wh, tmp_path)
    writes = faults.disarm()
    expected = _state(wh)
    assert writes > 0, f"{operation} made no write"
    try:
        for k in range(1, writes + 1):
            checkpoint.restore()
            faults.arm(k, faults.raise_fault)
            with pytest.raises(faults.InjectedFault):
                op(wh, tmp_path)
            faults.disarm()
            if operation in RETRY_IS_NEW_WORK:
                # the queue append is the commit point: before it nothing happened, after it the
                # transaction is queued once and the replica follows after the next run + delivery
                queued = [q for q in wh.rows_of("replication_queue") if q["tran_id"] == "a2"]
                assert len(queued) in (0, 2), f"a partial transaction is visible after write {k}"
                if not queued:
                    op(wh, tmp_path)
                continue
            op(wh, tmp_path)
            assert _state(wh) == expected, f"{operation} did not converge after a failure at write {k}"
    finally:
        faults.disarm()
        checkpoint.restore()
