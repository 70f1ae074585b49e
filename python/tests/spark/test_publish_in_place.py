"""Publishing the table a user already has (docs/publishing.md): `qrepl publication describe`
writes the declaration from the table, `qrepl publication create` publishes it in place. The
table gains msrepl_tran_version, every row gets a distinct version, no other value changes
and its history stays; a table that does not match its declaration is refused with one line;
a column added to a publication with subscriptions reaches the publisher and every replica,
and one removed or retyped is refused."""

from __future__ import annotations

import yaml
import pytest

from qrepl.core.model import ConfigError
from qrepl.services.service import add_subscription, create_publication, describe_table, warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_shop"
ROWS = 100_000


@pytest.fixture(scope="module")
def shop(spark, tmp_path_factory):
    """The user's own Iceberg table, written by plain SQL long before qrepl: 100k rows."""
    spark.sql(f"drop database if exists {SCHEMA} cascade")
    spark.sql(f"create database {SCHEMA}")
    spark.sql(f"create table {SCHEMA}.stock (warehouse_id string, sku string, qty int, price decimal(12,2)) using iceberg")
    spark.sql(f"insert into {SCHEMA}.stock select concat('w', id % 7), concat('sku-', id), cast(id % 1000 as int), "
              f"cast(id / 100 as decimal(12,2)) from range({ROWS})")
    spark.sql(f"update {SCHEMA}.stock set qty = qty + 1 where sku = 'sku-1'")  # a history to keep
    before = {"snapshots": [r.snapshot_id for r in spark.sql(f"select snapshot_id from {SCHEMA}.stock.snapshots").collect()],
              "hash": spark.sql(f"select sum(xxhash64(warehouse_id, sku, qty, price)), count(*) from {SCHEMA}.stock").first()}
    declared = yaml.safe_load(describe_table(f"{SCHEMA}.stock", ["warehouse_id", "sku"]))
    path = tmp_path_factory.mktemp("pub") / "shop.yml"
    path.write_text(yaml.safe_dump({"publication": "shop", "articles": declared}))
    create_publication(path, SCHEMA, echo=lambda _: None)
    return spark, path, declared, before


def test_describe_writes_the_declaration_from_the_table(shop):
    spark, path, declared, before = shop
    assert declared == [{"name": "stock", "key": ["warehouse_id", "sku"],
                         "columns": {"warehouse_id": "string", "sku": "string", "qty": "int", "price": "decimal(12,2)"}}]


def test_an_existing_table_is_published_in_place_with_no_value_changed(shop):
    spark, path, declared, before = shop
    after = spark.sql(f"select sum(xxhash64(warehouse_id, sku, qty, price)), count(*), count(msrepl_tran_version), "
                      f"count(distinct msrepl_tran_version) from {SCHEMA}.stock").first()
    assert (after[0], after[1]) == (before["hash"][0], ROWS)
    assert after[2] == after[3] == ROWS  # every row a version, each its own
    snapshots = [r.snapshot_id for r in spark.sql(f"select snapshot_id from {SCHEMA}.stock.snapshots").collect()]
    assert set(before["snapshots"]) <= set(snapshots)  # the table keeps its history


def test_a_table_that_does_not_match_its_declaration_is_refused_in_one_line(shop, tmp_path):
    spark, path, declared, before = shop
    spark.sql(f"create table {SCHEMA}.prices (sku string, price double) using iceberg")
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump({"publication": "shop", "articles": declared + [
        {"name": "prices", "key": ["sku"], "columns": {"sku": "string", "price": "decimal(12,2)", "note": "string"}}]}))
    with pytest.raises(ConfigError) as refused:
        create_publication(bad, SCHEMA, echo=lambda _: None)
    message = str(refused.value)
    assert "\n" not in message
    assert "column price is double in the table, decimal(12,2) in the declaration" in message
    assert "column note is declared but not in the table" in message
    assert "msrepl_tran_version" not in [f.name for f in spark.table(f"{SCHEMA}.prices").schema.fields]


def test_a_column_added_with_subscriptions_reaches_the_publisher_and_every_replica(shop, tmp_path):
    spark, path, declared, before = shop
    add_subscription(SCHEMA, "north", echo=lambda _: None)
    grown = [dict(declared[0], columns={**declared[0]["columns"], "bin": "string"})]
    changed = tmp_path / "grown.yml"
    changed.write_text(yaml.safe_dump({"publication": "shop", "articles": grown}))
    create_publication(changed, SCHEMA, echo=lambda _: None)
    assert "bin" in [f.name for f in spark.table(f"{SCHEMA}.stock").schema.fields]
    assert "bin" in [f.name for f in spark.table(f"{SCHEMA}__north.stock").schema.fields]
    assert warehouse(SCHEMA).require_publication().article("stock").columns["bin"] == "string"


@pytest.mark.parametrize("change, words", [
    ({"qty": "bigint"}, "column qty retyped from int to bigint"),
    (None, "column price removed"),
])
def test_a_published_column_removed_or_retyped_is_refused(shop, tmp_path, change, words):
    spark, path, declared, before = shop
    current = warehouse(SCHEMA).require_publication().article("stock").columns
    columns = {**current, **change} if change else {c: t for c, t in current.items() if c != "price"}
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump({"publication": "shop", "articles": [dict(declared[0], columns=columns)]}))
    with pytest.raises(ConfigError, match=words):
        create_publication(bad, SCHEMA, echo=lambda _: None)
    assert warehouse(SCHEMA).require_publication().article("stock").columns == current
