"""Who records a delivered compensating command (docs/spec.md §4): distribution, in its own table
`compensation_deliveries`; the mart `compensating_commands` is written only by dbt. A store an
earlier qrepl made, whose mart has the `delivered_at` column its distribution set, keeps working:
the reader's append fills the column it no longer selects, and the commands marked there are not
delivered again."""

from __future__ import annotations

import pytest

from python_layer_ops import SCHEMA as BASE_SCHEMA
from python_layer_ops import build_base
from qrepl.services.capture import Subscriber
from qrepl.services.distribution import distribute
from qrepl.services.service import run_reader
from qrepl.storage.replica import compensation_delivery_times, pending_compensations, replica_schema

pytestmark = pytest.mark.spark


def _compensations(wh, subscriber: str) -> list[dict]:
    return [c for c in wh.rows_of("compensating_commands") if c["subscriber"] == subscriber]


def _rows(wh, schema: str) -> list[tuple]:
    return sorted(
        (r["customer_id"], r["city"], r["msrepl_tran_version"]) for r in wh.spark.table(f"{schema}.customers").collect()
    )


def test_distribution_records_deliveries_in_its_own_table_and_leaves_the_mart_as_dbt_wrote_it(spark):
    wh = build_base(spark)  # b's first transaction was rejected: its compensations are pending
    mart_before = wh.rows_of("compensating_commands", "batch_id,subscriber,seq")
    assert _compensations(wh, "b") and "delivered_at" not in mart_before[0]
    distribute(wh.schema)
    assert wh.rows_of("compensating_commands", "batch_id,subscriber,seq") == mart_before, (
        "distribution wrote to dbt's mart"
    )
    assert set(compensation_delivery_times(wh)) == {("b", c["batch_id"], c["seq"]) for c in _compensations(wh, "b")}
    assert pending_compensations(wh, "b").isEmpty()
    distribute(wh.schema)  # nothing pending: nothing recorded twice
    assert len(wh.rows_of("compensation_deliveries")) == len(_compensations(wh, "b"))
    assert _rows(wh, replica_schema(wh, "b")) == _rows(wh, BASE_SCHEMA)


def test_a_store_whose_mart_marked_deliveries_keeps_them_and_takes_new_compensations(spark):
    wh = build_base(spark)
    distribute(wh.schema)  # b's compensations delivered; then the store is made as an earlier qrepl left it:
    spark.sql(f"drop table {wh.table('compensation_deliveries')}")  # no deliveries table,
    comp = wh.table("compensating_commands")  # the mart a table, not a view, with its own column
    spark.sql(f"create table {comp}_old using iceberg as select *, current_timestamp() as delivered_at from {comp}")
    spark.sql(f"drop view {comp}")  # set by that distribution
    spark.sql(f"alter table {comp}_old rename to {comp}")
    old = {(c["batch_id"], c["seq"]) for c in _compensations(wh, "b")}
    assert old
    with Subscriber(wh.schema, "a").transaction("a2") as t:  # a and b race on customer 1 again:
        t.update("customers", {"customer_id": 1}, {"city": "A2"})
    with Subscriber(wh.schema, "b").transaction("b2") as t:  # b's change comes second and is rejected
        t.update("customers", {"customer_id": 1}, {"city": "B2"})
    history = run_reader(BASE_SCHEMA, echo=lambda _: None)
    assert history["rejected"] == 1, history
    # the next run kept that table as compensating_commands_before_view, its marks with it
    assert {(c["batch_id"], c["seq"]) for c in wh.rows_of("compensating_commands_before_view")} == old
    new = [c for c in _compensations(wh, "b") if (c["batch_id"], c["seq"]) not in old]
    assert new
    assert {(r["batch_id"], r["seq"]) for r in pending_compensations(wh, "b").collect()} == {
        (c["batch_id"], c["seq"]) for c in new
    }, "a command the old mart marked delivered is pending again"
    distribute(wh.schema)
    assert pending_compensations(wh, "b").isEmpty()
    assert _rows(wh, replica_schema(wh, "b")) == _rows(wh, BASE_SCHEMA)
