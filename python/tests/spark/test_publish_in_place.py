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
    spark.sql(
        f"create table {SCHEMA}.stock (warehouse_id string, sku string, qty int, price decimal(12,2)) using iceberg"
    )
    spark.sql(
        f"insert into {SCHEMA}.stock select concat('w', id % 7), concat('sku-', id), cast(id % 1000 as int), "
        f"cast(id / 100 as decimal(12,2)) from range({ROWS})"
    )
    spark.sql(f"update {SCHEMA}.stock set qty = qty + 1 where sku = 'sku-1'")  # a history to keep
    before = {
        "snapshots": [r.snapshot_id for r in spark.sql(f"select snapshot_id from {SCHEMA}.stock.snapshots").collect()],
        "hash": spark.sql(f"select sum(xxhash64(warehouse_id, sku, qty, price)), count(*) from {SCHEMA}.stock").first(),
    }
    declared = yaml.safe_load(describe_table(f"{SCHEMA}.stock", ["warehouse_id", "sku"]))
    path = tmp_path_factory.mktemp("pub") / "shop.yml"
    path.write_text(yaml.safe_dump({"publication": "shop", "articles": declared}))
    create_publication(path, SCHEMA, echo=lambda _: None)
    return spark, path, declared, before


def test_describe_writes_the_declaration_from_the_table(shop):
    spark, path, declared, before = shop
    assert declared == [
        {
            "name": "stock",
            "key": ["warehouse_id", "sku"],
            "columns": {"warehouse_id": "string", "sku": "string", "qty": "int", "price": "decimal(12,2)"},
        }
    ]


def test_an_existing_table_is_published_in_place_with_no_value_changed(shop):
    spark, path, declared, before = shop
    after = spark.sql(
        f"select sum(xxhash64(warehouse_id, sku, qty, price)), count(*), count(msrepl_tran_version), "
        f"count(distinct msrepl_tran_version) from {SCHEMA}.stock"
    ).first()
    assert (after[0], after[1]) == (before["hash"][0], ROWS)
    assert after[2] == after[3] == ROWS  # every row a version, each its own
    snapshots = [r.snapshot_id for r in spark.sql(f"select snapshot_id from {SCHEMA}.stock.snapshots").collect()]
    assert set(before["snapshots"]) <= set(snapshots)  # the table keeps its history


def test_a_table_that_does_not_match_its_declaration_is_refused_in_one_line(shop, tmp_path):
    spark, path, declared, before = shop
    spark.sql(f"create table {SCHEMA}.prices (sku string, price double) using iceberg")
    bad = tmp_path / "bad.yml"
    bad.write_text(
        yaml.safe_dump(
            {
                "publication": "shop",
                "articles": declared
                + [
                    {
                        "name": "prices",
                        "key": ["sku"],
                        "columns": {"sku": "string", "price": "decimal(12,2)", "note": "string"},
                    }
                ],
            }
        )
    )
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


@pytest.mark.parametrize(
    "change, words",
    [
        ({"qty": "bigint"}, "column qty retyped from int to bigint"),
        (None, "column price removed"),
    ],
)
def test_a_published_column_removed_or_retyped_is_refused(shop, tmp_path, change, words):
    spark, path, declared, before = shop
    current = warehouse(SCHEMA).require_publication().article("stock").columns
    columns = {**current, **change} if change else {c: t for c, t in current.items() if c != "price"}
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump({"publication": "shop", "articles": [dict(declared[0], columns=columns)]}))
    with pytest.raises(ConfigError, match=words):
        create_publication(bad, SCHEMA, echo=lambda _: None)
    assert warehouse(SCHEMA).require_publication().article("stock").columns == current


# -- an article whose table: names a table in another schema ------------------------------------
SALES, PUBX = "salesx", "pubx"


def _customers(spark) -> dict[int, tuple]:
    return {
        r.customer_id: (r.city, r.msrepl_tran_version) for r in spark.sql(f"select * from {SALES}.customers").collect()
    }


@pytest.fixture(scope="module")
def elsewhere(spark, tmp_path_factory):
    """The user's salesx.customers (3 rows), published by publication pubx of schema pubx with
    `table: salesx.customers`; north queued and south immediate subscribe."""
    for schema in (PUBX, f"{PUBX}__north", f"{PUBX}__south", "pubz", SALES):
        spark.sql(f"drop database if exists {schema} cascade")
    spark.sql(f"create database {SALES}")
    spark.sql(f"create table {SALES}.customers (customer_id int, city string) using iceberg")
    spark.sql(f"insert into {SALES}.customers values (1, 'Oslo'), (2, 'Bergen'), (3, 'Tromso')")
    declared = yaml.safe_load(describe_table(f"{SALES}.customers", ["customer_id"], PUBX))
    path = tmp_path_factory.mktemp("pubx") / "pubx.yml"
    path.write_text(yaml.safe_dump({"publication": "pubx", "articles": declared}))
    create_publication(path, PUBX, echo=lambda _: None)
    add_subscription(PUBX, "north", echo=lambda _: None)
    add_subscription(PUBX, "south", echo=lambda _: None, update_mode="immediate")
    return spark, path, declared


def test_a_table_in_another_schema_is_described_and_published_in_place(elsewhere):
    spark, path, declared = elsewhere
    assert declared == [
        {
            "name": "customers",
            "key": ["customer_id"],
            "columns": {"customer_id": "int", "city": "string"},
            "table": f"{SALES}.customers",
        }
    ]
    rows = _customers(spark)
    assert {k: city for k, (city, _) in rows.items()} == {1: "Oslo", 2: "Bergen", 3: "Tromso"}
    assert len({version for _, version in rows.values()} - {None}) == 3  # each row its own version
    assert not spark.catalog.tableExists(f"{PUBX}.customers")  # no table named after the article
    props = {r[0]: r[1] for r in spark.sql(f"show tblproperties {SALES}.customers").collect()}
    assert props["qrepl.publication"] == "pubx.pubx"
    assert warehouse(PUBX).require_publication().article("customers").table == f"{SALES}.customers"
    # replicas are named after the article, in the subscriber's replica schema
    assert spark.table(f"{PUBX}__north.customers").count() == 3


def test_the_reader_distribution_and_immediate_updating_follow_the_table(elsewhere):
    from datetime import datetime

    from qrepl.core.reference import ReferenceReader
    from qrepl.services.capture import Subscriber
    from qrepl.services.distribution import distribute
    from qrepl.services.maintenance import maintain
    from qrepl.services.service import list_conflicts, resolve_conflict, run_reader
    from qrepl.storage.dbt_runner import stamp_publisher
    from qrepl.tools.whatif import whatif

    spark, path, declared = elsewhere
    wh = warehouse(PUBX)
    north = Subscriber(PUBX, "north")
    with north.transaction() as t:
        t.update("customers", {"customer_id": 1}, {"city": "Paris"})
    with north.transaction() as t:
        t.update("customers", {"customer_id": 2}, {"city": "Rome"})
    spark.sql(f"update {SALES}.customers set city = 'Lyon' where customer_id = 2")  # a plain writer
    stamp_publisher(wh)  # the publisher's trigger, as the run's start would
    # the reference, given the same publisher rows and queue
    reference = ReferenceReader(wh.require_publication())
    for s in ("north", "south"):
        reference.add_subscription(s)
    for r in wh.publisher_rows("customers"):
        reference.put_row("customers", r)
    reference.append_queue(wh.rows_of("replication_queue"))
    reference.run(datetime.utcnow())

    run_reader(PUBX, echo=lambda _: None)
    rows = _customers(spark)
    assert {k: city for k, (city, _) in rows.items()} == {1: "Paris", 2: "Lyon", 3: "Tromso"}
    assert {k: v for k, (_, v) in rows.items()} == {
        int(k[len('{"customer_id":') : -1]): r["msrepl_tran_version"]
        for k, r in reference.publisher["customers"].items()
    }
    conflicts = list_conflicts(PUBX)
    assert (
        [(c["row_key"], c["conflict_type"]) for c in conflicts]
        == [(c["row_key"], c["conflict_type"]) for c in reference.conflicts]
        == [('{"customer_id":2}', "update_update")]
    )

    distribute(PUBX)  # north gets the publisher's row back, south the applied change
    replica = {r.customer_id: r.city for r in spark.table(f"{PUBX}__north.customers").collect()}
    assert replica == {1: "Paris", 2: "Lyon", 3: "Tromso"}
    assert {r.customer_id: r.city for r in spark.table(f"{PUBX}__south.customers").collect()}[1] == "Paris"

    with Subscriber(PUBX, "south").transaction() as t:  # immediate: lands in salesx.customers
        t.update("customers", {"customer_id": 3}, {"city": "Narvik"})
    assert _customers(spark)[3][0] == "Narvik"

    resolve_conflict(PUBX, conflicts[0]["conflict_id"], "subscriber", "dba")
    assert _customers(spark)[2][0] == "Rome"
    assert (
        whatif(PUBX, ["subscriber_wins"], 1, reference=True)["subscriber_wins"]["rows"][("customers", (2,))]["city"]
        == "Rome"
    )
    assert any(line.startswith("customers:") for line in maintain(PUBX))


def test_a_table_another_publication_published_is_refused_in_one_line(elsewhere, tmp_path):
    spark, path, declared = elsewhere
    other = tmp_path / "pubz.yml"
    other.write_text(yaml.safe_dump({"publication": "pubz", "articles": declared}))
    with pytest.raises(ConfigError) as refused:
        create_publication(other, "pubz", echo=lambda _: None)
    assert str(refused.value) == (
        f"article customers: table {SALES}.customers is already published by "
        f"publication pubx.pubx (a table belongs to one publication)"
    )
    assert warehouse("pubz").read_publication() is None


@pytest.mark.parametrize(
    "table, words",
    [
        (f"{PUBX}.replication_queue", "is a table qrepl keeps in the publisher's schema"),
        (f"{PUBX}__north.customers", f"is in schema {PUBX}__north, which qrepl keeps for a subscriber's replica"),
    ],
)
def test_a_table_of_another_publications_own_schemas_is_refused_in_one_line(elsewhere, tmp_path, table, words):
    """pubz may not publish pubx's queue, nor north's replica of pubx: each is refused in one
    line before anything is written (before, only the publishing schema's own were)."""
    spark, path, declared = elsewhere
    other = tmp_path / "pubz.yml"
    other.write_text(yaml.safe_dump({"publication": "pubz", "articles": [{**declared[0], "table": table}]}))
    with pytest.raises(ConfigError) as refused:
        create_publication(other, "pubz", echo=lambda _: None)
    assert str(refused.value).startswith(f"article customers: table {table} {words}")
    assert "\n" not in str(refused.value)
    assert warehouse("pubz").read_publication() is None


def test_dropping_the_publication_keeps_the_users_table(elsewhere):
    from qrepl.services.service import drop_publication

    spark, path, declared = elsewhere
    before = _customers(spark)
    drop_publication(PUBX)
    assert not spark.catalog.databaseExists(PUBX)
    assert _customers(spark) == before  # rows and msrepl_tran_version kept
    props = {r[0] for r in spark.sql(f"show tblproperties {SALES}.customers").collect()}
    assert "qrepl.publication" not in props


AVRO = "qrepl_avro_user"


@pytest.mark.parametrize("how", ["property", "property_and_files", "delete_property"])
def test_publishing_in_place_a_table_written_as_avro_is_refused_in_one_line(spark, tmp_path, how):
    # issue 57 case 7a: the publisher's trigger reads data files directly (Parquet, ORC); Spark
    # here has no Avro reader, so an Avro table is refused when published, never at a run
    for schema in (f"{AVRO}_pub", AVRO):
        spark.sql(f"drop database if exists {schema} cascade")
    spark.sql(f"create database {AVRO}")
    prop = "write.delete.format.default" if how == "delete_property" else "write.format.default"
    spark.sql(f"create table {AVRO}.stock (sku string, qty int) using iceberg tblproperties ('{prop}'='avro')")
    if how == "property_and_files":
        spark.sql(f"insert into {AVRO}.stock values ('a', 1), ('b', 2)")
        assert {r[0] for r in spark.sql(f"select file_format from {AVRO}.stock.files").collect()} == {"AVRO"}
    path = tmp_path / "avro.yml"
    path.write_text(
        yaml.safe_dump(
            {
                "publication": "avro",
                "articles": [
                    {
                        "name": "stock",
                        "key": ["sku"],
                        "columns": {"sku": "string", "qty": "int"},
                        "table": f"{AVRO}.stock",
                    }
                ],
            }
        )
    )
    with pytest.raises(ConfigError) as refused:
        create_publication(path, f"{AVRO}_pub", echo=lambda _: None)
    line = str(refused.value)
    assert "\n" not in line and f"{AVRO}.stock" in line and f"{prop}=avro" in line, line
    assert ("avro data files" in line) == (how == "property_and_files"), line
    # nothing created: no publication, the table as it was
    assert not spark.catalog.databaseExists(f"{AVRO}_pub") or warehouse(f"{AVRO}_pub").read_publication() is None
    assert [f.name for f in spark.table(f"{AVRO}.stock").schema.fields] == ["sku", "qty"]
    assert "qrepl.publication" not in {r[0] for r in spark.sql(f"show tblproperties {AVRO}.stock").collect()}


def test_a_published_table_whose_format_property_becomes_avro_fails_the_run_in_one_line(spark, tmp_path):
    # issue 57 case 7a: what publishing cannot prevent is caught before the reader's run
    from qrepl.services.service import run_reader

    for schema in (f"{AVRO}_pub", AVRO):
        spark.sql(f"drop database if exists {schema} cascade")
    spark.sql(f"create database {AVRO}")
    spark.sql(f"create table {AVRO}.stock (sku string, qty int) using iceberg")
    spark.sql(f"insert into {AVRO}.stock values ('a', 1)")
    path = tmp_path / "avro.yml"
    path.write_text(
        yaml.safe_dump(
            {
                "publication": "avro",
                "articles": [
                    {
                        "name": "stock",
                        "key": ["sku"],
                        "columns": {"sku": "string", "qty": "int"},
                        "table": f"{AVRO}.stock",
                    }
                ],
            }
        )
    )
    create_publication(path, f"{AVRO}_pub", echo=lambda _: None)
    spark.sql(f"alter table {AVRO}.stock set tblproperties ('write.format.default'='avro')")
    with pytest.raises(ConfigError) as refused:
        run_reader(f"{AVRO}_pub", echo=lambda _: None)
    line = str(refused.value)
    assert "\n" not in line and f"{AVRO}.stock" in line and "write.format.default=avro" in line, line
    spark.sql(f"drop database if exists {AVRO}_pub cascade")
    spark.sql(f"drop database if exists {AVRO} cascade")
