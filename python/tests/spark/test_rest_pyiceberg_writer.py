"""A second engine on the REST catalog (issue 61): pyiceberg, with no Spark, creates a table in
the project's REST catalog test server and writes it; qrepl (QREPL_CATALOG=rest, a process of
its own: rest_pyiceberg_driver.py) publishes that table in place, subscriber s1 captures one
transaction per row; then pyiceberg, a writer that knows nothing of qrepl, changes some of the
same rows: an upsert that keeps the row's version, a delete, an overwrite and an append that
set none. `qrepl run` meets each of s1's changes to those rows as a logged conflict, resolved
by publisher_wins (pyiceberg's value stays, a compensating command goes to s1), and s1's change
to a row in a data file pyiceberg did not rewrite applies. pyiceberg 0.12 writes copy-on-write
only (it warns "Merge on read is not yet supported"): each of its writes rewrites whole files,
and the rows it did not change come back with their versions. The trigger sees that such a row
(row 7) is the same as at its last look, key, version and every column, and leaves it alone, so
s1's change to it applies (docs/architecture.md §8a). The rows, read back with pyiceberg, hold exactly the
values each side wrote (decimal, timestamp with and without zone, unicode) on the publisher and
on s1's replica after `qrepl distribute` (docs/spec.md §1, the publisher's trigger)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pyarrow
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DecimalType, IntegerType, NestedField, StringType, TimestampType, TimestamptzType
from rest_server_script import qrepl_env, rest_env, rest_server

pytestmark = pytest.mark.spark

DRIVER = Path(__file__).with_name("rest_pyiceberg_driver.py")
SCHEMA, TABLE = "qrepl_pyiceberg", "orders"  # rest_pyiceberg_driver.py's
UTC = timezone.utc
COLUMNS = Schema(
    NestedField(1, "order_id", IntegerType(), required=False),
    NestedField(2, "region", StringType(), required=False),
    NestedField(3, "customer", StringType(), required=False),
    NestedField(4, "amount", DecimalType(12, 2), required=False),
    NestedField(5, "placed_at", TimestampType(), required=False),  # Spark's timestamp_ntz
    NestedField(6, "paid_at", TimestamptzType(), required=False),  # Spark's timestamp
)
# files by region: pyiceberg's copy-on-write rewrites north's files only
BY_REGION = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))


def order(key, customer, amount, placed_at, paid_at) -> dict:
    return {
        "order_id": key,
        "region": "south" if key in (4, 5) else "north",
        "customer": customer,
        "amount": Decimal(amount),
        "placed_at": placed_at,
        "paid_at": paid_at,
    }


FIRST = [
    order(1, "Zoë", "1.10", datetime(2026, 1, 1, 0, 0, 0, 1), datetime(2026, 1, 1, 0, 0, 0, 500000, UTC)),
    order(2, "naïve café", "22.20", datetime(1999, 12, 31, 23, 59, 59, 999999), None),
    order(3, "Ελένη", "0.03", None, datetime(2001, 2, 3, 4, 5, 6, 123456, UTC)),
    order(4, "Мария", "40.00", datetime(2026, 4, 4, 4, 4, 4), datetime(2026, 4, 4, 4, 4, 4, 4, UTC)),
    order(5, "東京 5", "9999999999.99", datetime(2026, 5, 5), datetime(2026, 5, 5, tzinfo=UTC)),
    order(7, "seven", "7.00", None, None),
]
# pyiceberg's writes after s1 captured (rest_pyiceberg_driver.py's transactions t1..t7)
UPSERT_1 = {"customer": "pyiceberg 1 — ü", "amount": Decimal("1.11")}  # version kept
OVERWRITE_3 = order(3, "pyiceberg 3 ß", "-3.33", datetime(2026, 3, 3, 3, 3, 3, 999999), None)  # no version
APPEND_6 = order(6, "pyiceberg 6 🚀", "0.01", datetime(2026, 6, 6), datetime(2026, 6, 6, 6, 6, 6, 6, UTC))
# s1's own values of row 4 (rest_pyiceberg_driver.py's t4)
S1_4 = order(
    4, "Søren 🚲 s1", "-9876543210.01", datetime(2026, 2, 3, 4, 5, 6, 7), datetime(2026, 2, 3, 4, 5, 6, 700001, UTC)
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with rest_server(tmp_path_factory.mktemp("rest-server")) as info:
        yield info


def rows(catalog, table: str) -> dict[int, dict]:
    return {r["order_id"]: r for r in catalog.load_table(table).scan().to_arrow().to_pylist()}


def without_version(rows: list[dict], schema) -> pyarrow.Table:
    return pyarrow.Table.from_pylist(
        rows, schema=pyarrow.schema([f for f in schema if f.name != "msrepl_tran_version"])
    )


def pyiceberg_writes(catalog) -> None:
    """A writer that knows nothing of qrepl: the row it rewrites keeps whatever version it read,
    the rows it writes anew have none."""
    table = catalog.load_table(f"{SCHEMA}.{TABLE}")
    arrow = table.schema().as_arrow()
    (one,) = table.scan(row_filter=EqualTo("order_id", 1)).to_arrow().to_pylist()
    table.upsert(pyarrow.Table.from_pylist([{**one, **UPSERT_1}], schema=arrow), join_cols=["order_id"])
    table.delete(EqualTo("order_id", 2))
    table.overwrite(without_version([OVERWRITE_3], arrow), overwrite_filter=EqualTo("order_id", 3))
    table.append(without_version([APPEND_6], arrow))


def run_driver(work: Path, env: dict[str, str], between) -> tuple[dict, str]:
    """The driver in its own process; `between()` runs when it has captured and waits."""
    work.mkdir(parents=True, exist_ok=True)
    log = (work / "driver.err").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), str(work)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    watchdog = threading.Timer(400, proc.kill)
    watchdog.start()
    try:
        out = []
        for line in proc.stdout:
            out.append(line)
            if line.strip() == "CAPTURED":
                between()
                proc.stdin.write("go\n")
                proc.stdin.flush()
                break
        rest, _ = proc.communicate()
        stdout = "".join(out) + rest
    finally:
        watchdog.cancel()
        log.close()
    results = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and results, stdout[-3000:] + (work / "driver.err").read_text()[-3000:]
    return json.loads(results[-1][len("RESULT ") :]), stdout


def test_pyiceberg_writes_meet_a_subscribers_changes_as_logged_conflicts(server, tmp_path):
    catalog = load_catalog(
        "pyiceberg",
        type="rest",
        uri=server["uri"],
        token=server["token_file"].read_text().strip(),
        warehouse=str(server["warehouse"]),
    )
    catalog.create_namespace(SCHEMA)
    table = catalog.create_table(f"{SCHEMA}.{TABLE}", COLUMNS, partition_spec=BY_REGION)
    table.append(pyarrow.Table.from_pylist(FIRST, schema=COLUMNS.as_arrow()))
    seen = {}

    def between():
        seen.update(rows(catalog, f"{SCHEMA}.{TABLE}"))  # as published and stamped
        pyiceberg_writes(catalog)

    state = tmp_path / "state"
    result, stdout = run_driver(tmp_path, qrepl_env(state, rest_env(server)), between)

    assert result["declared"] == [
        {
            "name": TABLE,
            "key": ["order_id"],
            "columns": {
                "order_id": "int",
                "region": "string",
                "customer": "string",
                "amount": "decimal(12,2)",
                "placed_at": "timestamp_ntz",
                "paid_at": "timestamp",
            },
        }
    ]
    # published in place: pyiceberg's values unchanged, each row a version of its own
    assert {k: {c: v for c, v in r.items() if c != "msrepl_tran_version"} for k, r in seen.items()} == {
        r["order_id"]: r for r in FIRST
    }
    versions = {k: r["msrepl_tran_version"] for k, r in seen.items()}
    assert None not in versions.values() and len(set(versions.values())) == 6

    assert result["outcomes"] == {
        "t1": "rejected",
        "t2": "rejected",
        "t3": "rejected",
        "t4": "applied",
        "t6": "rejected",
        "t7": "applied",  # carried over unchanged by pyiceberg's rewrite: not stamped (above)
    }
    assert {t: (c["conflict_type"], c["winner"]) for t, c in result["conflicts"].items()} == {
        "t1": ("update_update", "publisher"),
        "t2": ("update_missing", "publisher"),
        "t3": ("delete_update", "publisher"),
        "t6": ("insert_exists", "publisher"),
    }
    assert result["history"] == {"transactions_processed": 6, "conflicts": 4, "rejected": 4}
    assert [(t, op) for t, op, _ in result["compensations"]] == [
        ("t1", "upsert"),
        ("t2", "delete"),
        ("t3", "upsert"),
        ("t6", "upsert"),
    ]
    assert "publisher's trigger: 3 row(s) written without a new version were stamped first" in stdout  # 1, 3, 6
    assert "s1: 4 row(s) delivered (4 compensating command(s))" in stdout

    publisher = rows(catalog, f"{SCHEMA}.{TABLE}")
    stamped = {k: r.pop("msrepl_tran_version") for k, r in publisher.items()}
    assert publisher == {
        1: {**FIRST[0], **UPSERT_1},  # pyiceberg's values stand
        3: OVERWRITE_3,
        4: S1_4,  # s1's change applied
        5: FIRST[4],
        6: APPEND_6,
        7: {**FIRST[5], "customer": "s1 on 7"},  # rewritten by pyiceberg as it was, then s1's change applied
    }
    # the trigger stamped what pyiceberg wrote, not row 7, which it carried over; the row in a
    # file nobody rewrote kept its version, and s1's applied changes brought their own
    assert stamped[1] not in (None, versions[1]) and stamped[7] not in (None, versions[7])
    assert stamped[3] is not None and stamped[6] is not None
    assert stamped[5] == versions[5] and stamped[4] not in (None, versions[4])
    conflict_versions = {t: c["publisher_version"] for t, c in result["conflicts"].items()}
    assert conflict_versions == {"t1": stamped[1], "t2": None, "t3": stamped[3], "t6": stamped[6]}
    # s1's replica after `qrepl distribute`: the publisher's rows and versions exactly
    replica = rows(catalog, f"{SCHEMA}__s1.{TABLE}")
    assert {k: r.pop("msrepl_tran_version") for k, r in replica.items()} == stamped
    assert replica == publisher
