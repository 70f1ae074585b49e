"""Immediate updating subscriptions on the real pipeline (docs/update-modes.md): a transaction
is applied at the publisher as one compare-and-swap over all its rows, then at the replica,
or rejected with nothing changed at either side; read_only refuses capture; failover
subscriptions switch by the rules; an immediate commit during a queue-reader run is kept."""

from __future__ import annotations

from datetime import datetime

import pytest

from qrepl.services import immediate
from qrepl.storage import faults
from qrepl.services.capture import Subscriber
from qrepl.storage.dbt_runner import stamp_publisher
from qrepl.services.distribution import distribute
from qrepl.core.model import ConfigError, ConflictError, publication_from_dict
from qrepl.core.reference import ReferenceReader
from qrepl.storage.replica import Replica
from qrepl.services.service import add_subscription, run_reader, set_mode
from qrepl.storage.warehouse import Warehouse, new_version

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_immediate"
PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "articles": [
        {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}},
        {
            "name": "orders",
            "key": ["order_id"],
            "columns": {"order_id": "int", "customer_id": "int", "amount": "decimal(10,2)"},
        },
    ],
}
QUIET = {"echo": lambda _: None}


@pytest.fixture()
def wh(spark) -> Warehouse:
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    for s in spark.catalog.listDatabases():
        if s.name.startswith(SCHEMA + "__"):
            Warehouse(spark, s.name).drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows(
        "customers", [{"customer_id": i, "city": f"city{i}", "msrepl_tran_version": new_version()} for i in (1, 2, 3)]
    )
    wh.upsert_rows(
        "orders", [{"order_id": 10, "customer_id": 1, "amount": "5.00", "msrepl_tran_version": new_version()}]
    )
    add_subscription(SCHEMA, "imm", update_mode="sync tran", **QUIET)
    return wh


def publisher(wh: Warehouse, article: str = "customers") -> dict[int, dict]:
    key = "customer_id" if article == "customers" else "order_id"
    return {r[key]: r for r in wh.publisher_rows(article)}


def replica(wh: Warehouse, subscriber: str = "imm", article: str = "customers") -> dict[int, dict]:
    key = "customer_id" if article == "customers" else "order_id"
    return {r[key]: r for r in Replica(wh, subscriber).rows(article)}


def local_write(wh: Warehouse, customer_id: int, city: str) -> str:
    """A publisher-local write (a job at the publisher): new row image, new version."""
    version = new_version()
    wh.upsert_rows("customers", [{"customer_id": customer_id, "city": city, "msrepl_tran_version": version}])
    return version


def test_immediate_commit_applies_at_publisher_then_replica(wh):
    sub = Subscriber(wh.schema, "imm")
    with sub.transaction() as t:
        v1 = t.update("customers", {"customer_id": 1}, {"city": "Oslo"})
        v4 = t.insert("customers", {"customer_id": 4, "city": "Bergen"})
        t.delete("customers", {"customer_id": 2})
    pub = publisher(wh)
    assert (pub[1]["city"], pub[1]["msrepl_tran_version"]) == ("Oslo", v1)
    assert (pub[4]["city"], pub[4]["msrepl_tran_version"]) == ("Bergen", v4) and 2 not in pub
    assert replica(wh) == pub  # the replica holds the publisher's rows, versions included
    assert wh.rows_of("replication_queue") == []  # nothing queued
    assert [r["outcome"] for r in wh.rows_of("immediate_transactions")] == ["applied"]

    # the publisher commit comes first: a failure right after it leaves the replica behind,
    # and the distribution agent brings the replica to the publisher
    faults.arm_at_label("python:immediate.publisher.customers", faults.raise_fault)
    try:
        with pytest.raises(faults.InjectedFault), sub.transaction() as t:
            v3 = t.update("customers", {"customer_id": 3}, {"city": "Tromso"})
    finally:
        faults.disarm()
    assert publisher(wh)[3]["msrepl_tran_version"] == v3 and replica(wh)[3]["city"] == "city3"
    distribute(wh.schema)
    assert replica(wh) == publisher(wh)


def test_a_conflict_on_one_row_of_a_multi_row_transaction_rolls_back_all(wh):
    sub = Subscriber(wh.schema, "imm")
    moved = local_write(wh, 2, "Paris")  # the subscriber has not received it
    before_publisher, before_replica = publisher(wh), replica(wh)
    with pytest.raises(ConflictError) as err, sub.transaction("t-conflict") as t:
        t.update("customers", {"customer_id": 1}, {"city": "Oslo"})
        t.update("customers", {"customer_id": 2}, {"city": "Rome"})
        t.insert("customers", {"customer_id": 5, "city": "Lima"})
    assert publisher(wh) == before_publisher and replica(wh) == before_replica
    [row] = err.value.rows
    assert (row["article"], row["row_key"], row["conflict_type"]) == ("customers", '{"customer_id":2}', "update_update")
    assert row["publisher_row"] == {"customer_id": 2, "city": "Paris", "msrepl_tran_version": moved}
    assert row["subscriber_row"]["city"] == "Rome"
    text = str(err.value)
    assert text.splitlines()[0].startswith("immediate transaction t-conflict of subscriber imm rejected: 1 row(s)")
    assert '"city":"Paris"' in text and '"city":"Rome"' in text
    [recorded] = wh.rows_of("immediate_rejections")
    assert (recorded["tran_id"], recorded["row_key"], recorded["conflict_type"]) == (
        "t-conflict",
        '{"customer_id":2}',
        "update_update",
    )
    assert [r["outcome"] for r in wh.rows_of("immediate_transactions")] == ["rejected"]
    assert wh.rows_of("replication_queue") == []


def test_a_concurrent_publisher_write_makes_the_immediate_commit_fail_cleanly(wh, monkeypatch):
    """A second writer commits to a row of the transaction after the publisher check and
    before the MERGE (and, for the second article, after the first article committed): the
    MERGE's compare-and-swap refuses, the first article is put back, ConflictError names the row."""
    sub = Subscriber(wh.schema, "imm")
    check = immediate._find_mismatches
    written: list[str] = []

    def check_then_concurrent_write(*args, **kwargs):
        result = check(*args, **kwargs)
        if not written:  # the second writer lands right after the first check
            written.append(new_version())
            wh.upsert_rows(
                "orders", [{"order_id": 10, "customer_id": 2, "amount": "7.50", "msrepl_tran_version": written[0]}]
            )
        return result

    monkeypatch.setattr(immediate, "_find_mismatches", check_then_concurrent_write)
    stamp_publisher(wh)  # the publisher's trigger up to date: the commit below starts with no write of its
    before_customers = publisher(wh)
    before_replica = (replica(wh), replica(wh, article="orders"))
    faults.install()
    faults.arm(10**9, faults.raise_fault)  # count the writes only
    try:
        with pytest.raises(ConflictError) as err, sub.transaction() as t:
            t.update("customers", {"customer_id": 1}, {"city": "Oslo"})
            t.update("orders", {"order_id": 10}, {"amount": "6.00"})
    finally:
        faults.disarm()
    labels = [label.split()[0] for label in faults.labels()]
    assert labels[:3] == ["python", "python:immediate.publisher.customers", "python:immediate.undo.customers"]
    [row] = err.value.rows
    assert (row["article"], row["conflict_type"], row["publisher_version"]) == ("orders", "update_update", written[0])
    assert publisher(wh) == before_customers  # the first article was put back
    assert publisher(wh, "orders")[10]["msrepl_tran_version"] == written[0]  # the second writer's row stands
    assert (replica(wh), replica(wh, article="orders")) == before_replica


def test_a_real_concurrent_writer_never_leaves_a_half_applied_transaction(wh):
    """Another thread commits the same rows again and again while immediate transactions
    run: each one is applied whole (publisher and replica agree on both rows) or rejected
    whole (the replica keeps what it had)."""
    import threading

    stop = threading.Event()

    def second_writer():
        while not stop.is_set():
            local_write(wh, 1, "writer")

    sub = Subscriber(wh.schema, "imm")
    thread = threading.Thread(target=second_writer)
    thread.start()
    outcomes = []
    try:
        for attempt in range(4):
            distribute(wh.schema)
            seen = replica(wh)
            try:
                with sub.transaction() as t:
                    v1 = t.update("customers", {"customer_id": 1}, {"city": f"imm{attempt}"})
                    v2 = t.update("customers", {"customer_id": 2}, {"city": f"imm{attempt}"})
                outcomes.append("applied")
                assert (replica(wh)[1]["msrepl_tran_version"], replica(wh)[2]["msrepl_tran_version"]) == (v1, v2)
                assert publisher(wh)[2]["msrepl_tran_version"] == v2
            except ConflictError as exc:
                outcomes.append("rejected")
                assert {r["row_key"] for r in exc.rows} == {'{"customer_id":1}'}
                assert replica(wh) == seen
                assert publisher(wh)[2]["msrepl_tran_version"] == seen[2]["msrepl_tran_version"]
    finally:
        stop.set()
        thread.join()
    assert len(outcomes) == 4
    recorded = [r["outcome"] for r in wh.rows_of("immediate_transactions")]
    assert sorted(recorded) == sorted(outcomes)


def test_read_only_subscription_refuses_capture(wh):
    add_subscription(SCHEMA, "ro", update_mode="read only", **QUIET)
    assert wh.subscription("ro")["update_mode"] == "read_only"
    with pytest.raises(ConfigError, match="subscriber ro is read only"), Subscriber(wh.schema, "ro").transaction() as t:
        t.update("customers", {"customer_id": 1}, {"city": "Oslo"})
    assert wh.rows_of("replication_queue") == [] and replica(wh, "ro")[1]["city"] == "city1"


def test_failover_switch_rules(wh):
    add_subscription(SCHEMA, "fo", update_mode="queued failover", **QUIET)
    with pytest.raises(ConfigError, match="only failover and queued_failover"):
        set_mode(SCHEMA, "imm", "queued")
    with pytest.raises(ConfigError, match="has not run since subscriber fo was initialized"):
        set_mode(SCHEMA, "fo", "immediate")
    sub = Subscriber(wh.schema, "fo")
    with sub.transaction() as t:  # queued: to the queue exactly as today
        t.update("customers", {"customer_id": 3}, {"city": "queued"})
    assert len(wh.rows_of("replication_queue")) == 1 and publisher(wh)[3]["city"] == "city3"
    with pytest.raises(ConfigError, match="still has 1 queued command"):
        set_mode(SCHEMA, "fo", "immediate")
    run_reader(SCHEMA, **QUIET)
    assert publisher(wh)[3]["city"] == "queued"
    assert set_mode(SCHEMA, "fo", "immediate")["current_mode"] == "immediate"
    with Subscriber(wh.schema, "fo").transaction() as t:
        t.update("customers", {"customer_id": 3}, {"city": "immediate"})
    assert publisher(wh)[3]["city"] == "immediate" and len(wh.rows_of("replication_queue")) == 1
    set_mode(SCHEMA, "fo", "queued")  # to queued: always allowed
    assert wh.subscription("fo")["current_mode"] == "queued"


def test_an_immediate_commit_during_a_run_is_kept(wh):
    """The immediate path takes no run lock: a commit that lands while a run is between
    its decisions and its publisher MERGE is, for the run, a publisher-local write, kept."""
    add_subscription(SCHEMA, "q", **QUIET)
    with Subscriber(wh.schema, "q").transaction() as t:
        t.update("customers", {"customer_id": 3}, {"city": "queued"})
    committed = {}

    def immediate_commit(k, label):
        with Subscriber(wh.schema, "imm").transaction() as t:
            committed["version"] = t.update("customers", {"customer_id": 3}, {"city": "immediate"})

    faults.arm_at_label("model.qrepl.publisher_changes", immediate_commit)
    try:
        history = run_reader(SCHEMA, **QUIET)
    finally:
        faults.disarm()
    assert committed, "the run never reached its publisher_changes mart"
    assert publisher(wh)[3]["msrepl_tran_version"] == committed["version"]
    assert publisher(wh)[3]["city"] == "immediate" and history["publisher_rows_kept"] == 1


def test_the_reference_agrees_with_spark(wh):
    """The same immediate transactions on the reference and on Spark: same publisher rows,
    same rejections."""
    ref = ReferenceReader(publication_from_dict(PUBLICATION))
    for article in ("customers", "orders"):
        for r in wh.publisher_rows(article):
            ref.put_row(article, {**r, "amount": str(r["amount"])} if article == "orders" else r)
    ref.add_subscription("imm", "immediate")
    sub = Subscriber(wh.schema, "imm")
    local = local_write(wh, 2, "Paris")
    ref.put_row("customers", {"customer_id": 2, "city": "Paris", "msrepl_tran_version": local})
    transactions = [
        lambda t: (
            t.update("customers", {"customer_id": 1}, {"city": "Oslo"}),
            t.update("orders", {"order_id": 10}, {"amount": "9.99"}),
        ),
        lambda t: (
            t.update("customers", {"customer_id": 2}, {"city": "Rome"}),
            t.insert("customers", {"customer_id": 6, "city": "Kyiv"}),
        ),
        lambda t: (t.delete("customers", {"customer_id": 3}),),
    ]
    now = datetime(2026, 1, 1)
    for n, body in enumerate(transactions):
        spark_error = ref_error = None
        try:
            with sub.transaction(f"t{n}") as t:
                body(t)
                commands = list(t.commands)
        except ConflictError as exc:
            spark_error = exc
        try:
            ref.immediate_commit("imm", f"t{n}", commands, now)
        except ConflictError as exc:
            ref_error = exc
        assert (spark_error is None) == (ref_error is None)
        if spark_error:
            keep = ("article", "row_key", "conflict_type", "publisher_row", "subscriber_row")
            assert [{k: r[k] for k in keep} for r in spark_error.rows] == [
                {k: r[k] for k in keep} for r in ref_error.rows
            ]
    for article in ("customers", "orders"):
        spark_rows = sorted(
            (ref.article(article).name, str(sorted((k, str(v)) for k, v in r.items())))
            for r in wh.publisher_rows(article)
        )
        ref_rows = sorted(
            (article, str(sorted((k, str(v)) for k, v in r.items()))) for r in ref.publisher[article].values()
        )
        assert spark_rows == ref_rows


def test_cli_modes_refusals_and_rejection_rate(wh, tmp_path):
    from click.testing import CliRunner

    from qrepl.cli import main

    cli = CliRunner()

    def qrepl(*args):
        return cli.invoke(main, [*args, "--schema", SCHEMA])

    result = qrepl("subscription", "add", "south", "--mode", "queued failover")
    assert result.exit_code == 0 and "subscribed south (queued_failover)" in result.output
    result = qrepl("subscription", "add", "west", "--mode", "merge")
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "unknown update mode 'merge'" in result.output
    result = qrepl("subscription", "set-mode", "south", "immediate")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "the queue reader has not run since subscriber south was initialized" in result.output
    result = qrepl("subscription", "set-mode", "imm", "queued")
    assert result.exit_code == 1 and "only failover and queued_failover" in result.output

    local_write(wh, 1, "Paris")
    with pytest.raises(ConflictError), Subscriber(wh.schema, "imm").transaction() as t:
        t.update("customers", {"customer_id": 1}, {"city": "Oslo"})
    with Subscriber(wh.schema, "imm").transaction() as t:
        t.update("customers", {"customer_id": 2}, {"city": "Oslo"})

    listing = qrepl("subscription", "list").output
    assert "imm          active          generation 0  mode immediate" in listing
    assert "south        active          generation 0  mode queued_failover (now queued)" in listing
    status = qrepl("status").output
    assert "immediate transactions 2, rejected 1 (50%)" in status
    page = tmp_path / "index.html"
    assert qrepl("viewer", "--out", str(tmp_path)).exit_code == 0
    assert "<td>imm</td><td>2</td><td>1</td><td>50%</td>" in page.read_text()


def test_automatic_fallback_to_the_queue_when_the_publisher_is_unreachable(wh):
    """Off by default (the application gets the error); on, a failover subscription whose
    publisher tables cannot be reached queues the transaction, switches to queued and says
    so in status; it switches back by hand after a run, as in SQL Server."""
    import os
    from pathlib import Path

    from click.testing import CliRunner

    from qrepl.cli import main
    from qrepl.services.immediate import PublisherUnreachable

    add_subscription(SCHEMA, "fo", update_mode="failover", **QUIET)
    location = wh.spark.sql(f"describe table extended {SCHEMA}.customers").where("col_name = 'Location'").first()
    metadata = Path(location.data_type.removeprefix("file:")) / "metadata"
    os.rename(metadata, metadata.with_name("metadata.away"))  # the publisher's table is gone for now
    try:
        with (
            pytest.raises(PublisherUnreachable, match="the publisher cannot be read"),
            Subscriber(wh.schema, "fo").transaction() as t,
        ):
            t.update("customers", {"customer_id": 1}, {"city": "offline"})
        assert wh.rows_of("replication_queue") == [] and wh.subscription("fo")["current_mode"] == "immediate"
        with Subscriber(wh.schema, "fo", fallback_to_queue=True).transaction() as t:
            t.update("customers", {"customer_id": 1}, {"city": "offline"})
    finally:
        os.rename(metadata.with_name("metadata.away"), metadata)
    assert [r["subscriber"] for r in wh.rows_of("replication_queue")] == ["fo"]
    assert wh.subscription("fo")["current_mode"] == "queued" and replica(wh, "fo")[1]["city"] == "offline"
    status = CliRunner().invoke(main, ["status", "--schema", SCHEMA]).output
    assert "fell back to queued automatically at" in status and "mode failover (now queued)" in status
    with pytest.raises(ConfigError, match="still has 1 queued command"):
        set_mode(SCHEMA, "fo", "immediate")
    run_reader(SCHEMA, **QUIET)
    assert publisher(wh)[1]["city"] == "offline"
    set_mode(SCHEMA, "fo", "immediate")
    assert "fell back" not in CliRunner().invoke(main, ["status", "--schema", SCHEMA]).output


def test_an_immediate_change_meets_a_row_an_outside_writer_changed_without_a_version(wh, spark):
    """docs/spec.md §4, the publisher's trigger: a plain UPDATE at the publisher (no new
    msrepl_tran_version) counts as a change, so an immediate transaction on that row with the
    version its subscriber saw is a conflict, and nothing changes at either side."""
    seen = replica(wh)[2]["msrepl_tran_version"]
    stamp_publisher(wh)  # the trigger's history starts (`qrepl publication create` starts it)
    spark.sql(f"update {wh.table('customers')} set city = 'Paris' where customer_id = 2")
    sub = Subscriber(wh.schema, "imm")
    with pytest.raises(ConflictError) as conflict:
        with sub.transaction("t-outside") as t:
            t.update("customers", {"customer_id": 2}, {"city": "imm-2"})
    assert "customer_id" in str(conflict.value)
    row = publisher(wh)[2]
    assert row["city"] == "Paris" and row["msrepl_tran_version"] != seen  # stamped, not overwritten
    assert replica(wh)[2]["city"] == "city2"
