"""End to end with three subscribers: changes captured through the API and from a file, a
publisher-local write, one queue-reader run, distribution; then the same loop under
publisher_wins_reinit through a reinitialization. Replicas must end equal to the publisher
(rows and versions) except for rows with still-queued local changes."""

from __future__ import annotations

import json

import pytest

from qrepl.services.capture import Subscriber
from qrepl.storage.replica import replica_schema
from qrepl.services.distribution import distribute, reinitialize
from qrepl.services.maintenance import maintain
from qrepl.services.enqueue import enqueue_file
from qrepl.core.model import publication_from_dict
from qrepl.services.service import run_reader
from qrepl.storage.warehouse import Warehouse, new_version

pytestmark = pytest.mark.e2e

SUBSCRIBERS = ("north", "south", "east")


def _setup(spark, schema: str, policy: str) -> tuple[Warehouse, dict[str, Subscriber]]:
    wh = Warehouse(spark, schema)
    for sub in SUBSCRIBERS:
        Warehouse(spark, replica_schema(wh, sub)).drop_schema()
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict(
            {
                "publication": "sales",
                "policy": policy,
                "articles": [
                    {
                        "name": "customers",
                        "key": ["customer_id"],
                        "columns": {"customer_id": "int", "city": "string", "credit_limit": "decimal(12,2)"},
                    },
                    {
                        "name": "order_lines",
                        "key": ["order_id", "line_no"],
                        "columns": {"order_id": "int", "line_no": "int", "quantity": "int"},
                    },
                ],
            }
        )
    )
    wh.upsert_rows(
        "customers",
        [
            {"customer_id": i, "city": f"c{i}", "credit_limit": f"{i}00.00", "msrepl_tran_version": new_version()}
            for i in range(1, 7)
        ],
    )
    wh.upsert_rows(
        "order_lines",
        [{"order_id": 100, "line_no": n, "quantity": n, "msrepl_tran_version": new_version()} for n in (1, 2)],
    )
    subs = {}
    for name in SUBSCRIBERS:
        wh.add_subscription(name)
        subs[name] = Subscriber(wh.schema, name)
        subs[name].replica.snapshot_from_publisher()
    return wh, subs


def _rows(rows: list[dict], key: tuple[str, ...]) -> dict:
    return {tuple(r[k] for k in key): r for r in rows}


def _assert_replicas_equal_publisher(wh: Warehouse, subs: dict[str, Subscriber], local: dict[str, set] = {}):
    """Every replica equals the publisher, rows and versions, except rows still queued locally."""
    for article, key in (("customers", ("customer_id",)), ("order_lines", ("order_id", "line_no"))):
        publisher = _rows(wh.publisher_rows(article), key)
        for name, sub in subs.items():
            replica = _rows(sub.replica.rows(article), key)
            skip = local.get(name, set())
            assert {k: v for k, v in replica.items() if (article, k) not in skip} == {
                k: v for k, v in publisher.items() if (article, k) not in skip
            }, (name, article)


@pytest.fixture(scope="module")
def publisher_wins_loop(spark, tmp_path_factory):
    wh, subs = _setup(spark, "qrepl_dist_pw", "publisher_wins")
    north, south, east = (subs[n] for n in SUBSCRIBERS)
    with north.transaction("n1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "Paris"})
    with south.transaction("s1") as t:  # stale after n1: rolled back whole, compensated
        t.update("customers", {"customer_id": 1}, {"city": "Lyon"})
        t.update("order_lines", {"order_id": 100, "line_no": 1}, {"quantity": 9})
    with east.transaction("e1") as t:
        t.delete("customers", {"customer_id": 2})
        t.insert("order_lines", {"order_id": 101, "line_no": 1, "quantity": 4})
    versions = {r["customer_id"]: r["msrepl_tran_version"] for r in wh.publisher_rows("customers")}
    path = tmp_path_factory.mktemp("changes") / "south.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "tran_id": "sf1",
                    "article": "customers",
                    "op": "U",
                    "old_version": versions[3],
                    "row": {"customer_id": 3, "city": "Nice", "credit_limit": "300.00"},
                },
                {
                    "tran_id": "sf2",
                    "article": "customers",
                    "op": "I",
                    "row": {"customer_id": 7, "city": "Metz", "credit_limit": "1.00"},
                },
            ]
        )
        + "\n"
    )
    report = enqueue_file(wh.schema, "south", path, progress=lambda _: None)
    # a publisher-local write between runs (a job at the publisher), with a new version
    wh.upsert_rows(
        "customers", [{"customer_id": 4, "city": "HQ", "credit_limit": "1.00", "msrepl_tran_version": new_version()}]
    )
    history = run_reader("qrepl_dist_pw", echo=lambda _: None)
    # north changes customer 5 after the run: still queued when distribution happens
    with north.transaction("n2") as t:
        t.update("customers", {"customer_id": 5}, {"city": "offline"})
    progress: list[str] = []
    first = distribute(wh.schema, progress=progress.append)
    second = distribute(wh.schema)
    return wh, subs, report, history, first, second, progress


def test_three_subscribers_converge_after_distribution(publisher_wins_loop):
    """API captures, a file of change records and a publisher-local write, one run, one
    distribution: every replica equals the publisher except north's still-queued row."""
    wh, subs, report, history, first, _, _ = publisher_wins_loop
    assert (report.transactions, report.rejected_records) == (2, 0)
    assert (history["transactions_processed"], history["rejected"]) == (5, 1)
    _assert_replicas_equal_publisher(wh, subs, {"north": {("customers", (5,))}})
    assert subs["north"].replica.row("customers", {"customer_id": 5})["city"] == "offline"
    publisher = {r["customer_id"]: r for r in wh.publisher_rows("customers")}
    assert publisher[1]["city"] == "Paris" and publisher[3]["city"] == "Nice" and 2 not in publisher
    assert publisher[4]["city"] == "HQ"  # the publisher-local write reached every subscriber
    assert first["south"]["compensations"] == 2 and first["north"]["compensations"] == 0


def test_delivering_twice_changes_nothing(publisher_wins_loop):
    _, _, _, _, _, second, progress = publisher_wins_loop
    assert all(c == {"compensations": 0, "rows_delivered": 0, "conflicts": 0} for c in second.values())
    assert len(progress) == 3 and progress[0].startswith("[1/3] ")  # one progress line per subscriber


def test_maintain_keeps_what_distribution_needs(publisher_wins_loop):
    """`qrepl maintain` compacts and expires snapshots, yet the next delivery still finds its
    snapshot: nothing is resent, and a later publisher change reaches every subscriber."""
    wh, subs = publisher_wins_loop[:2]
    snapshots = f"{wh.table('customers')}.snapshots"
    before = wh.spark.table(snapshots).count()
    lines = maintain(wh.schema)
    assert len(lines) == 2 and lines[0].startswith("customers: ")
    assert wh.spark.table(snapshots).count() < before
    assert all(c["rows_delivered"] == 0 for c in distribute(wh.schema).values())
    wh.upsert_rows(
        "customers", [{"customer_id": 6, "city": "late", "credit_limit": "6.00", "msrepl_tran_version": new_version()}]
    )
    assert {n: c["rows_delivered"] for n, c in distribute(wh.schema).items()} == dict.fromkeys(SUBSCRIBERS, 1)
    _assert_replicas_equal_publisher(wh, subs, {"north": {("customers", (5,))}})


def test_reinitialization_brings_the_subscriber_back(spark):
    """publisher_wins_reinit: a conflict marks the subscriber reinit_pending; distribution
    skips it; reinitialization replaces its replica with the publisher's rows, status active,
    generation + 1; then all three replicas equal the publisher again."""
    wh, subs = _setup(spark, "qrepl_dist_reinit", "publisher_wins_reinit")
    north, south, east = (subs[n] for n in SUBSCRIBERS)
    with north.transaction("n1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "Paris"})
    with south.transaction("s1") as t:
        t.update("customers", {"customer_id": 1}, {"city": "Lyon"})
    with south.transaction("s2") as t:  # after south's conflict: rejected_reinit too
        t.update("customers", {"customer_id": 6}, {"city": "Brest"})
    with east.transaction("e1") as t:
        t.update("order_lines", {"order_id": 100, "line_no": 2}, {"quantity": 20})
    run_reader("qrepl_dist_reinit", echo=lambda _: None)
    assert wh.subscription("south")["status"] == "reinit_pending"
    report = distribute(wh.schema)
    assert report["south"]["rows_delivered"] == 0
    assert subs["south"].replica.row("customers", {"customer_id": 6})["city"] == "Brest"  # not yet replaced
    lines: list[str] = []
    assert reinitialize(wh.schema, "south", progress=lines.append) == 1
    assert [line.split(" (")[0] for line in lines] == ["south: snapshot of customers", "south: snapshot of order_lines"]
    counts = [spark.table(f"{replica_schema(wh, 'south')}.{a}").count() for a in ("customers", "order_lines")]
    assert [line.split(" (")[1] for line in lines] == [f"{n} row{'' if n == 1 else 's'})" for n in counts]
    sub = wh.subscription("south")
    assert (sub["status"], sub["generation"]) == ("active", 1)
    _assert_replicas_equal_publisher(wh, subs)
    # south resumes in its new generation
    with south.transaction("s3") as t:
        t.update("customers", {"customer_id": 6}, {"city": "Brest"})
    run_reader("qrepl_dist_reinit", echo=lambda _: None)
    distribute(wh.schema)
    _assert_replicas_equal_publisher(wh, subs)
    assert {r["customer_id"]: r for r in wh.publisher_rows("customers")}[6]["city"] == "Brest"
