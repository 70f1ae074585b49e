"""One qrepl loop through the CLI, in one process (one JVM), on whatever catalog the
environment names (QREPL_CATALOG, QREPL_STATE_DIR): `qrepl publication create`, `qrepl
subscription add` a and b, both capture (a conflict on customer 1, b also deletes customer 2),
`qrepl run`, `qrepl distribute`; prints one JSON line of what the loop decided, with nothing
that differs by catalog or clock (test_rest_catalog_qrepl.py compares Hive's and REST's)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

SCHEMA = "qrepl_cat_e2e"
PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "centralized_conflicts": False,
    "articles": [
        {
            "name": "customers",
            "key": ["customer_id"],
            "columns": {"customer_id": "int", "city": "string", "credit_limit": "decimal(12,2)"},
        }
    ],
}
V1, V2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
CLOCK = {"detected_at", "applied_at", "batched_at", "queued_at", "created_at", "run_at", "started_at", "finished_at"}


def cli(*args: str) -> None:
    from qrepl.cli.app import main

    main([*args, "--schema", SCHEMA], standalone_mode=False)


GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
GENERATED = {"conflict_id"}  # a hash over generated versions


def plain(rows: list[dict]) -> list[dict]:
    """Rows without timestamps and with the row versions each run generates anew as `<v>`
    (V1 and V2, the loaded ones, stay)."""
    keep = {V1, V2}
    return [
        {
            k: GUID.sub(lambda m: m[0] if m[0] in keep else "<v>", str(v))
            for k, v in sorted(r.items())
            if k not in CLOCK and k not in GENERATED and not k.endswith("_at")
        }
        for r in rows
    ]


def main(work: Path) -> None:
    from qrepl.services.capture import Subscriber
    from qrepl.storage.replica import replica_schema
    from qrepl.storage.spark import get_spark, stop_spark
    from qrepl.storage.table_formats import _is_iceberg
    from qrepl.storage.warehouse import Warehouse

    config = work / "sales.yml"
    config.write_text(yaml.safe_dump(PUBLICATION))
    cli("publication", "create", "--config", str(config))
    wh = Warehouse(get_spark(), SCHEMA)
    wh.upsert_rows(
        "customers",
        [
            {"customer_id": 1, "city": "x", "credit_limit": "10.50", "msrepl_tran_version": V1},
            {"customer_id": 2, "city": "y", "credit_limit": "20.00", "msrepl_tran_version": V2},
        ],
    )
    subs = {}
    for name in ("a", "b"):
        cli("subscription", "add", name)
        subs[name] = Subscriber(SCHEMA, name)  # `subscription add` took its snapshot
    with subs["a"].transaction("a1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "A"})
    with subs["b"].transaction("b1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "B"})
        t.delete("customers", {"customer_id": 2})
    cli("run")
    cli("distribute")
    history = wh.rows_of("queue_reader_history", "batch_id")
    result = {
        "history": [
            {k: history[-1][k] for k in ("transactions_processed", "conflicts", "rejected")},
        ],
        "outcomes": plain(wh.rows_of("transaction_outcomes", "tran_pos")),
        "conflicts": plain(wh.rows_of("conflicts", "subscriber,tran_id,command_seq")),
        "publisher": plain(sorted(wh.publisher_rows("customers"), key=lambda r: r["customer_id"])),
        "replicas": {
            n: plain(sorted(s.replica.rows("customers"), key=lambda r: r["customer_id"])) for n, s in subs.items()
        },
        "catalog": get_spark().conf.get("spark.sql.catalogImplementation"),
    }
    # a view in the schema (as the marts derived from the log are): the Warehouse sees it and
    # reads it, and dropping the schemas leaves nothing behind (REST: views are not in listTables)
    spark = get_spark()
    spark.sql(
        f"create view {SCHEMA}.outcomes_v tblproperties ('k' = '1') as select * from {SCHEMA}.transaction_outcomes"
    )
    result["view"] = {"exists": wh.exists("outcomes_v"), "rows": len(wh.rows_of("outcomes_v", "tran_pos"))}
    described = spark.sql(f"describe table extended {wh.article_table(wh.article('customers'))}").collect()
    result["location"] = next(str(r[1]) for r in described if r[0] == "Location")
    result["publisher_is_iceberg"] = _is_iceberg(spark, wh.article_table(wh.article("customers")))
    for name in ("a", "b"):
        Warehouse(spark, replica_schema(wh, name)).drop_schema()
    wh.drop_schema()
    result["schemas_left"] = [s for s in (SCHEMA, f"{SCHEMA}__a", f"{SCHEMA}__b") if spark.catalog.databaseExists(s)]
    stop_spark()
    print("RESULT " + json.dumps(result, sort_keys=True, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
