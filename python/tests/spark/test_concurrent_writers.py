"""Writers that run beside each other on one publication (docs/spec.md, failure contract):

* a distribution running while a queue-reader run adds compensating commands stamps only the
  commands it read and delivered; the new ones stay pending and reach the replica next time;
* (two captures of one subscriber committing at the same moment: concurrent_captures_check.py,
  run by `make faults`).

The interleavings are forced (a fault-point action, a barrier before the queue append); every
write is the real one on real Iceberg tables, and the reader is the real dbt run.
"""

from __future__ import annotations

import pytest

from python_layer_ops import SCHEMA as BASE_SCHEMA
from python_layer_ops import build_base
from qrepl.storage import faults
from qrepl.services.capture import Subscriber
from qrepl.services.distribution import distribute
from qrepl.storage.replica import compensation_delivery_times, replica_schema
from qrepl.services.service import run_reader
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark


def _compensations(wh: Warehouse, subscriber: str) -> list[dict]:
    return [c for c in wh.rows_of("compensating_commands") if c["subscriber"] == subscriber]


def _rows(wh: Warehouse, schema: str) -> list[tuple]:
    return sorted(
        (r["customer_id"], r["city"], r["msrepl_tran_version"]) for r in wh.spark.table(f"{schema}.customers").collect()
    )


def test_distribution_beside_a_run_stamps_only_the_compensations_it_read(spark):
    wh = build_base(spark)  # b's first transaction was rejected: its compensations are pending
    with Subscriber(wh.schema, "b").transaction("b2") as t:  # stale again: the next run rejects it too
        t.update("customers", {"customer_id": 1}, {"city": "B2"})
    batches_before = {c["batch_id"] for c in _compensations(wh, "b")}

    # the run commits while the distribution is delivering b's replica, after it read b's
    # pending compensations and before it stamps them
    faults.arm_at_label(
        f"python merge into {replica_schema(wh, 'b')}.customers",
        lambda k, label: run_reader(BASE_SCHEMA, echo=lambda _: None),
    )
    try:
        distribute(wh.schema)
    finally:
        faults.disarm()
    late = [c for c in _compensations(wh, "b") if c["batch_id"] not in batches_before]
    assert late, "the concurrent run did not compensate b's second transaction"
    delivered = compensation_delivery_times(wh)
    assert not [c for c in late if ("b", c["batch_id"], c["seq"]) in delivered], (
        "distribution recorded compensating commands of a run it never read as delivered"
    )

    distribute(wh.schema)  # the next delivery sends them
    delivered = compensation_delivery_times(wh)
    assert all(("b", c["batch_id"], c["seq"]) in delivered for c in _compensations(wh, "b"))
    assert _rows(wh, replica_schema(wh, "b")) == _rows(wh, BASE_SCHEMA), (
        "b's replica kept its rejected change after every delivery"
    )
