"""qrepl itself on an Iceberg REST catalog (QREPL_CATALOG=rest): the project's REST catalog test
server started by its script, then one qrepl loop through the CLI in a subprocess on it, with
its own state directory (rest_qrepl_driver.py): `qrepl publication create`, `qrepl subscription
add` a and b, a conflict on one row, `qrepl run`, `qrepl distribute`. The outcomes, conflicts,
publisher and replicas are those the same inputs give on Hive (test_capture_e2e.py asserts them
there); QREPL_REST_COMPARE_HIVE=1 also runs the driver on Hive and compares everything.

The session has no Hive metastore (in-memory session catalog); the REST server holds every
table and its files are under the server's warehouse, none under the state's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rest_server_script import qrepl_env, rest_env, rest_server

pytestmark = pytest.mark.spark

DRIVER = Path(__file__).with_name("rest_qrepl_driver.py")
V1, V2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with rest_server(tmp_path_factory.mktemp("rest-server")) as info:
        yield info


def loop(tmp_path: Path, catalog_env: dict[str, str]) -> tuple[dict, subprocess.CompletedProcess]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    env = qrepl_env(tmp_path / "state", catalog_env)
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(tmp_path)], env=env, capture_output=True, text=True, timeout=400
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT ") :]), done


def test_publish_capture_run_distribute_on_the_rest_catalog(server, tmp_path):
    result, done = loop(tmp_path / "rest", rest_env(server))
    assert result["catalog"] == "in-memory"
    # what test_capture_e2e asserts on Hive for the same inputs: a applied, b rejected (publisher wins)
    assert result["history"] == [{"transactions_processed": 2, "conflicts": 1, "rejected": 1}]
    assert [(o["subscriber"], o["tran_id"], o["outcome"]) for o in result["outcomes"]] == [
        ("a", "a1", "applied"),
        ("b", "b1", "rejected"),
    ]
    ((conflict,),) = [result["conflicts"]]
    assert (conflict["subscriber"], conflict["tran_id"], conflict["conflict_type"], conflict["winner"]) == (
        "b",
        "b1",
        "update_update",
        "publisher",
    )
    assert "b: 2 row(s) delivered (2 compensating command(s))" in done.stdout
    publisher = result["publisher"]
    assert [(r["customer_id"], r["city"], r["credit_limit"]) for r in publisher] == [
        ("1", "A", "10.50"),
        ("2", "y", "20.00"),
    ]
    assert result["replicas"] == {"a": publisher, "b": publisher}
    # the tables are the REST server's: under its warehouse; the state has no metastore
    assert result.pop("location").removeprefix("file:").startswith(str(server["warehouse"]))
    state = tmp_path / "rest" / "state"
    assert not (state / "warehouse" / "qrepl_cat_e2e.db").exists() and not (state / "metastore_db").exists()
    # a view the Warehouse sees and reads (Spark's catalog API does not list Iceberg views),
    # a publisher table known as Iceberg, and the schemas dropped with their views
    assert result["view"] == {"exists": True, "rows": 2}
    assert result["publisher_is_iceberg"] is True
    assert result["schemas_left"] == []
    token = server["token_file"].read_text().strip()
    assert token not in done.stdout + done.stderr
    if os.environ.get("QREPL_REST_COMPARE_HIVE") == "1":  # the same loop on the Hive default
        on_hive, _ = loop(tmp_path / "hive", {})
        assert on_hive.pop("catalog") == "hive"
        on_hive.pop("location")
        result.pop("catalog")
        assert result == on_hive
