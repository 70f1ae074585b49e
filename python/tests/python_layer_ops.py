"""The Python layer's write paths and the state they leave, shared by the failure tests
(`spark/test_python_layer_faults.py`, in-process) and the kill tests (`e2e/layer_kill_check.py`,
a process per try)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from qrepl.services.capture import Subscriber
from qrepl.storage.replica import replica_schema
from qrepl.services.conflicts import list_conflicts, resolve_conflict
from qrepl.services.distribution import distribute, reinitialize
from qrepl.services.enqueue import enqueue_file
from qrepl.core.model import publication_from_dict
from qrepl.services.service import add_subscription, create_publication, run_reader
from qrepl.services.subscriptions import change_partition
from qrepl.storage.warehouse import PUBLISHED_BY, Warehouse

SCHEMA = "qrepl_pyfaults"
SUBSCRIBERS = ("a", "b", "c", "p")
PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "centralized_conflicts": False,
    "articles": [{"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}],
}
# a user's own table, published in place by the publish_in_place operation (`table:`)
USER_SCHEMA = f"{SCHEMA}_user"
STOCK = {"name": "stock", "key": ["sku"], "columns": {"sku": "string", "qty": "int"}, "table": f"{USER_SCHEMA}.stock"}
VERSION = "00000000-0000-4000-8000-{:012d}".format
# stamped_rows counts the rows the recorded stamp gave a version: after a failure between a
# stamp's MERGE and its record, the failed attempt stamped them and the rerun records 0
# (docs/reliability.md); of a version only whether the row has one is compared
IGNORED_COLUMNS = {
    "delivered_at",
    "enqueued_at",
    "tran_seq",
    "tran_id",
    "new_version",
    "new_row",
    "old_row",
    "msrepl_tran_version",
    "snapshot_id",
    "stamped_at",
    "stamped_rows",
    "resolved_at",
    "written_version",
}


def schemas(wh: Warehouse) -> list[str]:
    return [wh.schema] + [replica_schema(wh, s) for s in SUBSCRIBERS] + [USER_SCHEMA]


def state(wh: Warehouse) -> dict:
    """What a user relies on after the operation: publisher, queue, replicas, subscriptions,
    which compensations are still pending, what each replica's conflicts hold. Generated
    values (versions, times, ids) are compared by count, not by value."""
    spark = wh.spark
    state = {}
    for schema in schemas(wh):
        if not spark.catalog.databaseExists(schema):
            continue
        for t in spark.catalog.listTables(schema):
            if t.isTemporary or t.name.startswith("qrepl_resolve_"):
                continue
            rows = [
                {k: v for k, v in r.asDict().items() if k not in IGNORED_COLUMNS}
                | ({"delivered": r["delivered_at"] is not None} if "delivered_at" in r.asDict() else {})
                | ({"versioned": r["msrepl_tran_version"] is not None} if "msrepl_tran_version" in r.asDict() else {})
                | ({"wrote": r["written_version"] is not None} if "written_version" in r.asDict() else {})
                for r in spark.table(f"{schema}.{t.name}").collect()
            ]
            state[f"{schema}.{t.name}"] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    state["user table published by"] = Warehouse(spark, USER_SCHEMA).published_by(f"{USER_SCHEMA}.stock")
    return state


def build_base(spark) -> Warehouse:
    """Two subscribers race on customer 1 and b also deletes customer 2: b's transaction is
    rejected (compensations pending), a's is applied (publisher changes pending for b, and
    for the partitioned p the row moving out of its partition)."""
    wh = Warehouse(spark, SCHEMA)
    for s in SUBSCRIBERS:
        Warehouse(spark, replica_schema(wh, s)).drop_schema()
    wh.drop_schema()
    Warehouse(spark, USER_SCHEMA).drop_schema()
    spark.sql(f"create database {USER_SCHEMA}")
    spark.sql(f"create table {USER_SCHEMA}.stock (sku string, qty int) using iceberg")
    spark.sql(f"insert into {USER_SCHEMA}.stock values ('a', 1), ('b', 2)")
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows(
        "customers", [{"customer_id": i, "city": f"c{i}", "msrepl_tran_version": VERSION(i)} for i in (1, 2, 3)]
    )
    for s in ("a", "b"):
        add_subscription(SCHEMA, s, echo=lambda _: None)
    # p is partitioned (docs/spec.md §11): a's update moves customer 1 out of its partition, so
    # distribution deletes that row from p's replica
    add_subscription(SCHEMA, "p", echo=lambda _: None, filters=["customers: city <> 'A'"])
    with Subscriber(wh.schema, "a").transaction("a1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "A"})
    with Subscriber(wh.schema, "b").transaction("b1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "B"})
        t.delete("customers", {"customer_id": 2})
    history = run_reader(SCHEMA, echo=lambda _: None)
    # the operations below need work to do: b's rejected transaction left compensations
    assert (history["conflicts"], history["rejected"], history["quarantined"]) == (1, 1, 0), history
    return wh


def _capture(wh: Warehouse) -> None:
    with Subscriber(wh.schema, "a").transaction("a2") as t:
        t.update("customers", {"customer_id": 3}, {"city": "A3"})
        t.insert("customers", {"customer_id": 4, "city": "A4"})


def _enqueue(wh: Warehouse, tmp: Path) -> None:
    path = tmp / "changes.jsonl"
    path.write_text(
        json.dumps(
            {
                "tran_id": "file-1",
                "article": "customers",
                "op": "U",
                "row": {"customer_id": 3, "city": "F"},
                "old_version": VERSION(3),
            }
        )
        + "\n"
    )
    enqueue_file(wh.schema, "a", path, progress=lambda _: None)


def _resolve(wh: Warehouse) -> None:
    """`qrepl conflicts resolve ID --keep subscriber` on the base's one conflict: b's rejected
    update of customer 1 is written over a's by compare-and-swap, and the review recorded."""
    (conflict,) = list_conflicts(wh.schema)
    resolve_conflict(wh.schema, conflict["conflict_id"], "subscriber", "dba")


def _publish(tmp: Path, publication: dict) -> None:
    path = tmp / "publication.json"  # JSON is YAML
    path.write_text(json.dumps(publication))
    create_publication(path, SCHEMA, echo=lambda _: None)


def _with_bin(publication: dict) -> dict:
    customers = publication["articles"][0]
    return {**publication, "articles": [{**customers, "columns": {**customers["columns"], "bin": "string"}}]}


def _unpublish_stock(wh: Warehouse) -> None:
    """Undo what publishing the user's table changed beyond its rows (a snapshot rollback keeps
    a table's schema and properties): its msrepl_tran_version column and its mark."""
    table = f"{USER_SCHEMA}.stock"
    if "msrepl_tran_version" in wh.columns_of(table):
        wh.spark.sql(f"alter table {table} drop column msrepl_tran_version")
    wh.spark.sql(f"alter table {table} unset tblproperties if exists ('{PUBLISHED_BY}')")


def _drop_bin(wh: Warehouse) -> None:
    """Undo the column the add_column operation adds to the publisher table and the replicas."""
    for schema in schemas(wh)[:-1]:
        table = f"{schema}.customers"
        if wh.spark.catalog.tableExists(table) and "bin" in wh.columns_of(table):
            wh.spark.sql(f"alter table {table} drop column bin")


OPERATIONS: dict[str, Callable] = {
    "distribute": lambda wh, tmp: distribute(wh.schema),
    "reinitialize": lambda wh, tmp: reinitialize(wh.schema, "b"),
    "subscription_add": lambda wh, tmp: add_subscription(SCHEMA, "c", echo=lambda _: None),
    "capture": lambda wh, tmp: _capture(wh),
    "enqueue": _enqueue,
    # `publication create` publishing the user's table in place as a second article
    "publish_in_place": lambda wh, tmp: _publish(tmp, {**PUBLICATION, "articles": [*PUBLICATION["articles"], STOCK]}),
    # `publication create` adding a column to customers, which has subscriptions (a, b)
    "add_column": lambda wh, tmp: _publish(tmp, _with_bin(PUBLICATION)),
    # `qrepl conflicts resolve --keep subscriber`: the reviews table, the compare-and-swap, the review
    "resolve": lambda wh, tmp: _resolve(wh),
    # a partitioned subscription (docs/spec.md §11): its row, then the filtered snapshot
    "subscription_add_filtered": lambda wh, tmp: add_subscription(
        SCHEMA, "c", echo=lambda _: None, filters=["customers: city in ('c2', 'c3')"]
    ),
    # a column-filtered subscription (§11): its row, then the snapshot of its columns
    "subscription_add_columns": lambda wh, tmp: add_subscription(
        SCHEMA, "c", echo=lambda _: None, columns=["customers: customer_id"]
    ),
    # `qrepl subscription filter b --force`: the generation, the filter, the filtered snapshot
    "filter_change": lambda wh, tmp: change_partition(
        SCHEMA, "b", ["customers: city <> 'B'"], force=True, echo=lambda _: None
    ),
}
# what an operation changes that rolling back the tables' snapshots does not undo (a table's
# schema, its properties): undone before each try
PREPARE: dict[str, Callable[[Warehouse], None]] = {"publish_in_place": _unpublish_stock, "add_column": _drop_bin}
# the write points CI fails for these operations (the first write whose label holds the words);
# `make faults` (QREPL_FAULT_POINTS=all) fails every one, as for the other operations
CI_POINTS = {
    "publish_in_place": "add column msrepl_tran_version",
    "add_column": "add column bin",
    "resolve": "merge into",
}
# the longer write paths fail in CI at every n-th write from the first, and at their last; in
# `make faults` at every one. Distribution's is the longest (13 writes for this workload, three
# subscribers, one partitioned: in CI 1, 9, 13); reinitialization and subscription add fail at
# every other write (80 and 52 s of CI at every point, stop 51's junit)
CI_EVERY = {"distribute": 8, "reinitialize": 2, "subscription_add": 2}
# the partitioned and column-filtered paths share their writes with subscription add and
# reinitialization: CI fails their first and last write, `make faults` every one
CI_EVERY.update({"subscription_add_filtered": 100, "subscription_add_columns": 100, "filter_change": 100})
# rerunning these after a failure is not a no-op by design: a captured transaction the caller
# saw fail is retried by the caller (a new transaction); the checks below say what converges
RETRY_IS_NEW_WORK = {"capture"}


def captured_commands(wh: Warehouse) -> int:
    """How many of the capture's 2 commands are queued after it failed or was killed: 0 (it did
    not commit: the caller captures again) or 2 (its queue append, the commit point, happened;
    the replica follows after the next run and delivery). Anything else is a partial
    transaction."""
    return len([q for q in wh.rows_of("replication_queue") if q["tran_id"] == "a2"])
