"""NaN and ±Infinity in float and double columns (issue 57 case 8; docs/spec.md §3), on Spark +
dbt: a value the capture API is given must be finite (refused in one line, queued or immediate,
nothing written), and a publisher row a job's plain SQL gave a NaN does not block later
changes to it: an update of another column carries the NaN unchanged, spelled as Spark's
to_json writes it, and is judged and applied like any other."""

from __future__ import annotations

import math

import pytest

from qrepl.core.model import ConfigError, publication_from_dict
from qrepl.services.capture import Subscriber
from qrepl.services.distribution import distribute
from qrepl.services.service import add_subscription, run_reader
from qrepl.storage.dbt_runner import stamp_publisher
from qrepl.storage.replica import replica_schema
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark
SCHEMA = "qrepl_non_finite"
PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "articles": [
        {
            "name": "items",
            "key": ["item_id"],
            "columns": {"item_id": "int", "city": "string", "price": "double", "ratio": "float"},
        }
    ],
}


def _rows(spark, table: str) -> dict[int, tuple]:
    return {r["item_id"]: (r["city"], r["price"], r["ratio"]) for r in spark.table(table).collect()}


@pytest.fixture(scope="module")
def store(spark):
    wh = Warehouse(spark, SCHEMA)
    for s in ("a", "i"):
        Warehouse(spark, replica_schema(wh, s)).drop_schema()
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows(
        "items",
        [
            {
                "item_id": i,
                "city": f"c{i}",
                "price": 1.5,
                "ratio": 0.5,
                "msrepl_tran_version": f"00000000-0000-4000-8000-{i:012d}",
            }
            for i in (1, 2, 3)
        ],
    )
    stamp_publisher(wh)  # as `qrepl publication create` does
    add_subscription(SCHEMA, "a", echo=lambda _: None)
    add_subscription(SCHEMA, "i", echo=lambda _: None, update_mode="immediate")
    return wh


@pytest.mark.parametrize("subscriber", ["a", "i"])
@pytest.mark.parametrize(
    "change",
    [
        {"price": float("nan")},
        {"price": float("-inf")},
        {"ratio": float("inf")},
        {"price": "NaN"},
        {"ratio": 1e39},
    ],
)
def test_capture_refuses_nan_and_infinity_in_one_line_and_writes_nothing(store, subscriber, change):
    wh = store
    spark = wh.spark
    queue, replica = wh.table("replication_queue"), f"{replica_schema(wh, subscriber)}.items"
    before = (
        spark.table(queue).count() if wh.exists("replication_queue") else 0,
        _rows(spark, replica),
        _rows(spark, wh.table("items")),
    )
    with pytest.raises(ConfigError) as refused:
        with Subscriber(SCHEMA, subscriber).transaction() as t:
            t.update("items", {"item_id": 2}, change)
    assert "\n" not in str(refused.value) and "no NaN or Infinity" in str(refused.value)
    with pytest.raises(ConfigError, match="no NaN or Infinity"):
        with Subscriber(SCHEMA, subscriber).transaction() as t:
            t.insert("items", {"item_id": 9, "city": "x", "price": 1.0, "ratio": 0.5, **change})
    after = (
        spark.table(queue).count() if wh.exists("replication_queue") else 0,
        _rows(spark, replica),
        _rows(spark, wh.table("items")),
    )
    assert after == before


def test_a_publisher_row_holding_nan_does_not_block_changes_to_it(store):
    wh = store
    spark = wh.spark
    spark.sql(f"update {wh.table('items')} set price = double('NaN'), ratio = float('-Infinity') where item_id = 1")
    distribute(SCHEMA)  # stamps the job's write and brings it to the replicas
    replica = f"{replica_schema(wh, 'a')}.items"
    assert math.isnan(_rows(spark, replica)[1][1])
    with Subscriber(SCHEMA, "a").transaction("carry-nan") as t:
        t.update("items", {"item_id": 1}, {"city": "moved"})
    queued = [r for r in spark.table(wh.table("replication_queue")).collect() if r["tran_id"] == "carry-nan"]
    assert '"price":"NaN","ratio":"-Infinity"' in queued[0]["new_row"]
    history = run_reader(SCHEMA, echo=lambda _: None)
    assert history["quarantined"] == 0 and history["rejected"] == 0, history
    city, price, ratio = _rows(spark, wh.table("items"))[1]
    assert city == "moved" and math.isnan(price) and ratio == -math.inf
    distribute(SCHEMA)
    # under immediate updating too: the commit carries the publisher's values as they are
    with Subscriber(SCHEMA, "i").transaction("immediate-nan") as t:
        t.update("items", {"item_id": 1}, {"city": "again"})
    city, price, ratio = _rows(spark, wh.table("items"))[1]
    assert city == "again" and math.isnan(price) and ratio == -math.inf
    distribute(SCHEMA)
    city, price, ratio = _rows(spark, replica)[1]
    assert city == "again" and math.isnan(price) and ratio == -math.inf
