"""End to end on the embedded stack: capture through the API, run the queue reader, deliver
compensations; the losing subscriber's replica ends up equal to the publisher."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from qrepl.services.capture import Subscriber
from qrepl.storage.replica import replica_schema
from qrepl.services.distribution import distribute
from qrepl.core.model import publication_from_dict
from qrepl.services.service import run_reader
from qrepl.storage.warehouse import Warehouse

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.e2e

SCHEMA = "qrepl_e2e"
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


# versions are GUIDs: the queue reader quarantines a command whose version is not one
V1, V2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"


def _fresh(spark) -> Warehouse:
    wh = Warehouse(spark, SCHEMA)
    for sub in ("a", "b"):
        Warehouse(spark, replica_schema(wh, sub)).drop_schema()
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows(
        "customers",
        [
            {"customer_id": 1, "city": "x", "credit_limit": "10.50", "msrepl_tran_version": V1},
            {"customer_id": 2, "city": "y", "credit_limit": "20.00", "msrepl_tran_version": V2},
        ],
    )
    return wh


@pytest.fixture(scope="module")
def captured_and_run(spark):
    """Two subscribers race on customer 1 through the capture API; one queue-reader run."""
    wh = _fresh(spark)
    subs = {}
    for name in ("a", "b"):
        wh.add_subscription(name)
        subs[name] = Subscriber(wh.schema, name)
        subs[name].replica.snapshot_from_publisher()

    with subs["a"].transaction("a1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "A"})
    with subs["b"].transaction("b1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "B"})
        t.delete("customers", {"customer_id": 2})

    queued = wh.rows_of("replication_queue", "tran_seq,command_seq")
    # b's replica already shows its own offline changes
    assert subs["b"].replica.row("customers", {"customer_id": 2}) is None

    history = run_reader(SCHEMA, echo=lambda _: None)
    return wh, subs, queued, history


def test_capture_run_distribute(captured_and_run):
    wh, subs, queued, history = captured_and_run
    assert {(q["subscriber"], q["tran_id"], q["op"]) for q in queued} == {
        ("a", "a1", "U"),
        ("b", "b1", "U"),
        ("b", "b1", "D"),
    }
    assert all(q["old_version"] in (V1, V2) for q in queued)
    assert (history["transactions_processed"], history["conflicts"], history["rejected"]) == (2, 1, 1)

    delivered = distribute(wh.schema)
    assert (delivered["a"]["compensations"], delivered["b"]["compensations"]) == (0, 2)
    assert delivered["b"]["rows_delivered"] == 2  # customer 1 (a's city) and customer 2 (restored)

    publisher = sorted(wh.publisher_rows("customers"), key=lambda r: r["customer_id"])
    replica_b = sorted(subs["b"].replica.rows("customers"), key=lambda r: r["customer_id"])
    assert replica_b == publisher
    assert publisher[0]["city"] == "A"


def test_dbt_build_is_green_after_a_run(captured_and_run):
    """`dbt build` on the local target after the run above: a second (empty) batch through the
    incremental path, and every schema and singular data test and every dbt unit test of the
    judging and resolving models passes."""
    from qrepl.storage.dbt_runner import dbt_invoke

    res = dbt_invoke(["build"], SCHEMA)
    statuses = {r.node.resource_type: set() for r in res.result}
    for r in res.result:
        statuses[r.node.resource_type].add(str(r.status))
    assert statuses.get("test") == {"pass"}, statuses
    assert len([r for r in res.result if r.node.resource_type == "test"]) >= 10
    assert statuses.get("unit_test") == {"pass"}, statuses
    # every unit test the project defines ran (one on an ephemeral model is not skipped)
    defined = {
        t["name"]
        for f in (ROOT / "models").rglob("*.yml")
        for t in (yaml.safe_load(f.read_text()) or {}).get("unit_tests", [])
    }
    ran = {r.node.name for r in res.result if r.node.resource_type == "unit_test"}
    assert len(defined) >= 9 and ran == defined, (defined, ran)


def test_distribution_brings_every_replica_to_the_publisher(captured_and_run):
    """After distribution every subscriber's replica equals the publisher (rows and versions):
    compensations to the loser, the winner's change to everyone, conflicts to their
    subscriber when not centralized; delivering twice changes nothing."""
    from qrepl.services.distribution import distribute

    wh, subs, _, _ = captured_and_run
    first = distribute(wh.schema)  # after test_capture_run_distribute's delivery, if it ran first
    second = distribute(wh.schema)
    assert all(c == {"compensations": 0, "rows_delivered": 0, "conflicts": 0} for c in second.values())
    # centralized_conflicts: false -> each conflict also goes to its originating subscriber
    assert first["a"]["conflicts"] == 0
    replica_conflicts = wh.spark.table(f"{subs['b'].replica.wh.schema}.conflicts").collect()
    assert [c.tran_id for c in replica_conflicts] == ["b1"]
    publisher = sorted(wh.publisher_rows("customers"), key=lambda r: r["customer_id"])
    for sub in subs.values():
        assert sorted(sub.replica.rows("customers"), key=lambda r: r["customer_id"]) == publisher


def test_dbt_docs_show_lineage_from_queue_to_viewer(captured_and_run):
    """`dbt docs generate` works on the local target, and the lineage runs from the
    replication_queue source to the conflict viewer and distribution agent exposures."""
    import json as _json
    import os
    from pathlib import Path

    from qrepl.storage.dbt_runner import dbt_invoke
    from qrepl.storage.spark import PROJECT_DIR

    dbt_invoke(["docs", "generate"], SCHEMA)
    target = Path(os.environ.get("DBT_TARGET_PATH", PROJECT_DIR / "target"))
    manifest = _json.loads((target / "manifest.json").read_text())
    catalog = _json.loads((target / "catalog.json").read_text())
    parents = manifest["parent_map"]

    def ancestors(node: str) -> set[str]:
        seen, todo = set(), [node]
        while todo:
            for p in parents.get(todo.pop(), []):
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return seen

    queue = "source.qrepl.qrepl.replication_queue"
    assert queue in ancestors("exposure.qrepl.conflict_viewer")
    assert queue in ancestors("exposure.qrepl.distribution_agent")
    assert "model.qrepl.conflicts" in catalog["nodes"]
    assert "conflict_type" in {c.lower() for c in catalog["nodes"]["model.qrepl.conflicts"]["columns"]}


def test_policy_cannot_change_while_subscribed(captured_and_run):
    """'The policy of a publication may be changed only while it has no subscriptions; any
    attempt otherwise fails with a clear error and changes nothing.'"""
    from qrepl.core.model import ConfigError

    wh = captured_and_run[0]
    with pytest.raises(ConfigError, match="has subscriptions"):
        wh.set_policy("subscriber_wins")
    assert wh.require_publication().policy == "publisher_wins"


def test_conflicts_cli_filters_shows_logs_and_removes(captured_and_run, tmp_path):
    """`qrepl conflicts` as a reviewer uses it: time filters, the side-by-side detail with the
    differing columns marked, `log` to a file, `remove` after review; the old flags (--show,
    --log, --remove, --resolve) do the same, with one line on stderr naming the verb."""
    import json as _json

    from click.testing import CliRunner

    from qrepl.cli import main

    cli = CliRunner()
    listed = cli.invoke(
        main, ["conflicts", "list", "--schema", SCHEMA, "--since", "2000-01-01", "--until", "2999-01-01"]
    )
    assert listed.exit_code == 0 and listed.output.splitlines()[-1].startswith("1 conflict(s)")
    assert cli.invoke(main, ["conflicts", "--schema", SCHEMA, "--since", "2000-01-01"]).output == listed.output
    assert cli.invoke(main, ["conflicts", "list", "--schema", SCHEMA, "--since", "2999-01-01"]).output.startswith(
        "0 conflict"
    )
    conflict_id = listed.output.split()[2]

    shown = cli.invoke(main, ["conflicts", "show", conflict_id, "--schema", SCHEMA])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert "update_update (code 1), winner publisher" in lines[0]
    header = next(line for line in lines if "column" in line)
    assert "publisher (winner)" in header and "subscriber (loser)" in header
    marked = {line.split()[1] for line in lines if line.startswith("  *")}
    assert marked == {"city", "msrepl_tran_version"}  # credit_limit and the key are equal
    old = cli.invoke(main, ["conflicts", "--schema", SCHEMA, "--show", conflict_id])
    assert old.exit_code == 0 and old.stdout == shown.output
    assert old.stderr.splitlines() == [
        "qrepl: `qrepl conflicts --show` is deprecated, use `qrepl conflicts show "
        "CONFLICT_ID` (the flags go in the next release)"
    ]

    log = tmp_path / "b.jsonl"
    logged = cli.invoke(main, ["conflicts", "log", str(log), "--schema", SCHEMA, "--subscriber", "b"])
    assert logged.exit_code == 0 and logged.output == f"wrote 1 conflict(s) to {log}\n"
    assert [_json.loads(x)["conflict_id"] for x in log.read_text().splitlines()] == [conflict_id]
    old_log = tmp_path / "old.jsonl"
    assert (
        cli.invoke(main, ["conflicts", "--schema", SCHEMA, "--subscriber", "b", "--log", str(old_log)]).exit_code == 0
    )
    assert old_log.read_text() == log.read_text()

    bad = cli.invoke(main, ["conflicts", "list", "--schema", SCHEMA, "--since", "yesterday"])
    assert bad.exit_code != 0 and "--since" in bad.output
    missing = cli.invoke(main, ["conflicts", "show", "nope", "--schema", SCHEMA])
    assert missing.exit_code == 1 and "no conflict nope" in missing.output

    removed = cli.invoke(main, ["conflicts", "remove", conflict_id, "--schema", SCHEMA])
    assert removed.exit_code == 0, (removed.output, repr(removed.exception))
    assert removed.output.strip() == "removed 1 conflict(s)"
    assert cli.invoke(main, ["conflicts", "list", "--schema", SCHEMA]).output.startswith("0 conflict")
    # a removal is a review row; the conflicts mart, written only by dbt, keeps the conflict
    wh = captured_and_run[0]
    assert [c["conflict_id"] for c in wh.rows_of("conflicts") if c["conflict_id"] == conflict_id] == [conflict_id]
    assert [
        (r["outcome"], r["resolved_by"] is not None)
        for r in wh.rows_of("conflict_reviews")
        if r["conflict_id"] == conflict_id
    ] == [("removed", True)]
    again = cli.invoke(main, ["conflicts", "--schema", SCHEMA, "--remove", conflict_id])
    assert again.stdout.splitlines() == [
        "removed 0 conflict(s)",
        "1 id(s) not removed now: removed before, or no such conflict",
    ]
    assert "use `qrepl conflicts remove CONFLICT_ID...`" in again.stderr
    refused = cli.invoke(main, ["conflicts", "resolve", conflict_id, "--keep", "subscriber", "--schema", SCHEMA])
    assert refused.exit_code != 0 and "was removed from the lists" in refused.output
    refused = cli.invoke(main, ["conflicts", "--schema", SCHEMA, "--resolve", conflict_id, "--keep", "subscriber"])
    assert refused.exit_code != 0 and "was removed from the lists" in refused.output


def test_status_cli_reads_the_schema_from_the_environment(captured_and_run):
    """`qrepl status` with QREPL_SCHEMA set: the publication, each subscription (nothing left
    in the queue after the run) and the last run, as the service's data formatted by the CLI."""
    from click.testing import CliRunner

    from qrepl.cli import main

    wh = captured_and_run[0]
    history = wh.rows_of("queue_reader_history", "batch_id")[-1]  # earlier tests in this module run again
    result = CliRunner().invoke(main, ["status"], env={"QREPL_SCHEMA": SCHEMA})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "publication sales: policy publisher_wins, articles customers"
    assert [line.split()[:4] for line in lines[1:3]] == [
        [s["subscriber"], s["status"], "generation", str(s["generation"])] for s in wh.subscriptions()
    ]
    assert all("queued commands 0" in line for line in lines[1:3])
    assert lines[3].startswith(f"last batch: {history['batch_id']} at ")
    assert f"{history['transactions_processed']} transactions, {history['conflicts']} conflicts" in lines[3]


def test_run_cli_says_how_many_outside_writes_the_trigger_stamped(captured_and_run):
    """A job that knows nothing of qrepl updates two publisher rows without a new version; the
    next `qrepl run` that has a batch stamps them first and says so, and a run after it stamps
    nothing. Each run has a subscriber's new row to take: a run with nothing to do runs no
    trigger (docs/spec.md 5.10)."""
    from click.testing import CliRunner

    from qrepl.cli import main

    wh, subs = captured_and_run[0], captured_and_run[1]

    def queue_a_new_customer(customer_id: int) -> None:
        with subs["a"].transaction(f"a-new-{customer_id}") as t:
            t.insert("customers", {"customer_id": customer_id, "city": "new", "credit_limit": "1.00"})

    wh.spark.sql(f"update {wh.table('customers')} set city = 'outside' where customer_id in (1, 3)")
    queue_a_new_customer(9)
    result = CliRunner().invoke(main, ["run"], env={"QREPL_SCHEMA": SCHEMA})
    assert result.exit_code == 0, result.output
    written = sum(1 for r in wh.publisher_rows("customers") if r["city"] == "outside")
    assert written >= 1
    assert f"publisher's trigger: {written} row(s) written without a new version were stamped first" in result.output
    queue_a_new_customer(10)
    again = CliRunner().invoke(main, ["run"], env={"QREPL_SCHEMA": SCHEMA})
    assert again.exit_code == 0, again.output
    assert "publisher's trigger" not in again.output
    # an outside write that distribution (or an immediate commit) stamped before the run is
    # not the run's to report, though its stamp is recorded under the run's batch id
    from qrepl.storage.dbt_runner import stamp_publisher

    wh.spark.sql(f"update {wh.table('customers')} set city = 'between' where customer_id = 1")
    stamp_publisher(wh)
    queue_a_new_customer(11)
    later = CliRunner().invoke(main, ["run"], env={"QREPL_SCHEMA": SCHEMA})
    assert later.exit_code == 0, later.output
    assert "publisher's trigger" not in later.output
    # with nothing queued since, a run has nothing to do and says so in one line
    idle = CliRunner().invoke(main, ["run"], env={"QREPL_SCHEMA": SCHEMA})
    assert idle.exit_code == 0, idle.output
    last = max(h["batch_id"] for h in wh.rows_of("queue_reader_history"))
    assert f"nothing to do since batch {last}: nothing queued since; nothing was written" in idle.output
