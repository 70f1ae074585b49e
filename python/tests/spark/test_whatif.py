"""`qrepl whatif`: past batches of a live publication replayed under each policy equal
`qrepl replay --policy` of the same transactions, and the live publication is never written."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from qrepl.services.capture import Subscriber
from qrepl.cli import main
from qrepl.core.model import POLICIES, publication_from_dict
from qrepl.tools.replay import replay
from qrepl.services.service import add_subscription, run_reader
from qrepl.storage.warehouse import Warehouse, new_version
from qrepl.tools.whatif import whatif

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_whatif_live"
PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "articles": [{"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}],
}
QUIET = {"echo": lambda _: None}


def _scenario_of_live_queue(wh: Warehouse, before: list[dict], batches: list[list[dict]]) -> dict:
    """The same transactions as a scenario file: publisher rows, then per batch its queued
    transactions in the order the queue reader takes them, then a run."""
    steps = [{"publisher_rows": {"customers": before}}]
    for rows in batches:
        transactions: dict[tuple, dict] = {}
        for r in sorted(rows, key=lambda r: (r["enqueued_at"], r["subscriber"], r["tran_seq"], r["command_seq"])):
            tran = transactions.setdefault(
                (r["subscriber"], r["tran_id"]),
                {"subscriber": r["subscriber"], "tran_id": r["tran_id"], "commands": []},
            )
            command = {
                "article": r["article"],
                "op": r["op"],
                "old_version": r["old_version"],
                "new_version": r["new_version"],
            }
            if r["op"] == "D":
                command["key"] = json.loads(r["row_key"])
            else:
                command["row"] = json.loads(r["new_row"])
            tran["commands"].append(command)
        steps += [{"enqueue": list(transactions.values())}, {"run": {}}]
    return {**PUBLICATION, "subscribers": ["s1", "s2"], "steps": steps}


def _comparable(outputs: dict) -> dict:
    return {
        "outcomes": sorted((o["subscriber"], o["tran_id"], o["outcome"]) for o in outputs["transaction_outcomes"]),
        "conflicts": sorted(
            (c["subscriber"], c["tran_id"], c["row_key"], c["conflict_type"], c["winner"]) for c in outputs["conflicts"]
        ),
        "publisher": outputs["publisher/customers"],
        "reinit": sorted(s["subscriber"] for s in outputs["subscriptions"] if s["status"] == "reinit_pending"),
    }


def test_whatif_equals_replay_policy_on_the_same_transactions(spark, tmp_path):
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows(
        "customers", [{"customer_id": i, "city": f"c{i}", "msrepl_tran_version": new_version()} for i in (1, 2, 3)]
    )
    for s in ("s1", "s2"):
        add_subscription(SCHEMA, s, **QUIET)
    before = [{k: v for k, v in r.items()} for r in wh.publisher_rows("customers")]
    s1, s2 = Subscriber(wh.schema, "s1"), Subscriber(wh.schema, "s2")
    with s1.transaction() as t:
        t.update("customers", {"customer_id": 1}, {"city": "s1"})
        t.delete("customers", {"customer_id": 3})
    with s2.transaction() as t:  # conflicts with s1 on row 1
        t.update("customers", {"customer_id": 1}, {"city": "s2"})
        t.update("customers", {"customer_id": 2}, {"city": "s2"})
    batch1 = wh.rows_of("replication_queue")
    run_reader(SCHEMA, **QUIET)
    with s2.transaction() as t:
        t.insert("customers", {"customer_id": 4, "city": "s2"})
    with s1.transaction() as t:  # s1 still sees row 2's first version: conflicts with s2's batch-1 change
        t.update("customers", {"customer_id": 2}, {"city": "s1"})
    batch2 = [r for r in wh.rows_of("replication_queue") if r not in batch1]
    run_reader(SCHEMA, **QUIET)
    live_snapshots = {r.snapshot_id for r in spark.table(f"{SCHEMA}.customers.snapshots").collect()}

    scenario = tmp_path / "live.json"
    scenario.write_text(json.dumps(_scenario_of_live_queue(wh, before, [batch1, batch2]), default=str))
    spark_results = whatif(wh.schema, list(POLICIES), 1, 2)
    reference_results = whatif(wh.schema, list(POLICIES), 1, 2, reference=True)
    for policy in POLICIES:
        replayed = replay([scenario], tmp_path / policy, policy, reference=True)[0]
        expected = {
            name: [json.loads(line) for line in (replayed / f"{name}.jsonl").read_text().splitlines()]
            for name in ("transaction_outcomes", "conflicts", "subscriptions", "publisher/customers")
        }
        assert _comparable(spark_results[policy]["outputs"]) == _comparable(expected), policy
        assert _comparable(reference_results[policy]["outputs"]) == _comparable(expected), policy
    assert spark_results["subscriber_wins"]["conflicts"]["update_update"] == 2
    # s2 loses row 1 in batch 1 and is marked for reinit; its batch-2 insert is then
    # rejected_reinit, and s1's batch-2 update meets row 2 unchanged and applies
    assert spark_results["publisher_wins_reinit"]["reinit"] == ["s2"]

    # the live publication is only read; the scratch schema is gone
    assert {r.snapshot_id for r in spark.table(f"{SCHEMA}.customers.snapshots").collect()} == live_snapshots
    assert not spark.catalog.databaseExists(f"{SCHEMA}_whatif")

    result = CliRunner().invoke(main, ["whatif", "--schema", SCHEMA, "--batches", "1..2", "--reference"])
    assert result.exit_code == 0, result.output
    header, *rows = [line for line in result.output.splitlines() if not line.startswith("what-if:")]
    assert header.split() == ["publisher_wins*", "publisher_wins_reinit", "subscriber_wins"]
    assert "conflicts update_update" in result.output and "subscribers reinitialized" in result.output
    result = CliRunner().invoke(main, ["whatif", "--schema", SCHEMA, "--batches", "3..4"])
    assert result.exit_code == 1 and "batch 3 is not a finished batch" in result.output


LIVE = "qrepl_whatif_guard"


@pytest.fixture(scope="module")
def live_one_batch(spark) -> Warehouse:
    """A live publication with one finished batch (s1 changed row 1)."""
    wh = Warehouse(spark, LIVE)
    wh.drop_schema()
    Warehouse(spark, f"{LIVE}_whatif").drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows(
        "customers", [{"customer_id": i, "city": f"c{i}", "msrepl_tran_version": new_version()} for i in (1, 2)]
    )
    add_subscription(LIVE, "s1", **QUIET)
    with Subscriber(wh.schema, "s1").transaction() as t:
        t.update("customers", {"customer_id": 1}, {"city": "s1"})
    run_reader(LIVE, **QUIET)
    return wh


def test_whatif_refuses_a_scratch_schema_it_did_not_make(spark, live_one_batch):
    """Issue 39: whatif dropped <schema>_whatif whatever it held."""
    spark.sql(f"create database if not exists {LIVE}_whatif")
    spark.sql(f"create table {LIVE}_whatif.precious using iceberg as select 1 as n")
    try:
        result = CliRunner().invoke(main, ["whatif", "--schema", LIVE, "--batches", "1"])
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert f"schema {LIVE}_whatif exists and was not made by qrepl whatif" in result.output
        assert spark.catalog.tableExists(f"{LIVE}_whatif.precious")
    finally:
        Warehouse(spark, f"{LIVE}_whatif").drop_schema()
    result = CliRunner().invoke(main, ["whatif", "--schema", LIVE, "--batches", "1"])  # its own scratch: fine
    assert result.exit_code == 0, result.output


def test_whatif_refuses_when_the_snapshot_before_the_batch_was_expired(spark, live_one_batch):
    """Issue 39: after `distribute` and `maintain` the publisher's snapshot from before batch 1
    is expired; whatif took the publisher to be empty then and reported wrong numbers."""
    from qrepl.services.distribution import distribute
    from qrepl.services.maintenance import maintain

    distribute(live_one_batch.schema)
    maintain(live_one_batch.schema)
    for extra in (["--reference"], []):
        result = CliRunner().invoke(main, ["whatif", "--schema", LIVE, "--batches", "1", *extra])
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert "what-if needs article customers as it was when batch 1 started" in result.output
        assert "expired (qrepl maintain)" in result.output
