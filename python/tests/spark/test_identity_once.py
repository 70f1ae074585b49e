"""An identity value or range is given once (DESIGN.md §10; issue 57 cases 5 and 6): two
processes that ask at the same instant get different ones.

Each case is hit two ways on one Spark session: deterministically, by running the second
request whole inside the first one's window (right after it read the state it decides from,
before its compare-and-swap), and by two threads that both read that state before either
writes (a barrier), then race their writes. A rerun after a failure at any write of an
assignment or a claim converges with no value or range given twice."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from qrepl.core.model import ConfigError, publication_from_dict
from qrepl.services.capture import Subscriber
from qrepl.services.service import add_subscription, create_publication, run_reader
from qrepl.storage import faults, identity_ranges
from qrepl.storage.identity_ranges import assign_range, current_range, next_value
from qrepl.storage.replica import replica_schema
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_identity_once"
ORDERS = {
    "name": "orders",
    "key": ["order_id"],
    "identity": "order_id",
    "identity_range": 5,
    "columns": {"order_id": "bigint", "item": "string"},
}
# an identity that is not the key: two rows given one number would both be kept
TICKETS = {
    "name": "tickets",
    "key": ["code"],
    "identity": "number",
    "identity_range": 10,
    "columns": {"code": "string", "number": "bigint"},
}
PUBLICATION = {"publication": "shop", "articles": [ORDERS, TICKETS]}
SUBSCRIBERS = {"north": "queued", "imm": "immediate", "imm2": "immediate"}
QUIET = {"echo": lambda _: None}
OLD_DDL = "article STRING, owner STRING, range_start BIGINT, range_end BIGINT, assigned_at TIMESTAMP"


def _drop(spark) -> Warehouse:
    wh = Warehouse(spark, SCHEMA)
    for s in spark.catalog.listDatabases():
        if s.name == SCHEMA or s.name.startswith(SCHEMA + "__"):
            Warehouse(spark, s.name).drop_schema()
    return wh


@pytest.fixture()
def wh(spark, tmp_path) -> Warehouse:
    wh = _drop(spark)
    config = tmp_path / "shop.yml"
    config.write_text(json.dumps(PUBLICATION))
    create_publication(config, SCHEMA, **QUIET)
    for name, mode in SUBSCRIBERS.items():
        add_subscription(SCHEMA, name, update_mode=mode, **QUIET)
    return wh


def _article(wh: Warehouse, name: str):
    return wh.require_publication().article(name)


def _owner_ranges(wh: Warehouse, article: str) -> list[tuple[str, int, int]]:
    return sorted(
        (r["owner"], r["range_start"], r["range_end"])
        for r in wh.rows_of("identity_ranges")
        if r["article"] == article and r["owner"] != "*"
    )


def _assert_no_block_has_two_owners(wh: Warehouse, article: str) -> None:
    """Owner ranges never overlap, and the mark is at or above every one of them."""
    ranges = sorted((s, e) for _, s, e in _owner_ranges(wh, article))
    assert all(e < s2 for (_, e), (s2, _) in zip(ranges, ranges[1:])), _owner_ranges(wh, article)
    marks = [r for r in wh.rows_of("identity_ranges") if r["article"] == article and r["owner"] == "*"]
    assert len(marks) == 1 and marks[0]["range_end"] >= ranges[-1][1], marks


def _inside_first_call(monkeypatch, name: str, action) -> None:
    """Run `action()` inside the first call of identity_ranges.<name> (after the caller read
    the state it decides from, before its compare-and-swap), as a second process would."""
    real = getattr(identity_ranges, name)
    fired = []

    def wrapped(*args, **kwargs):
        if not fired:
            fired.append(True)
            action()
        return real(*args, **kwargs)

    monkeypatch.setattr(identity_ranges, name, wrapped)


def _together(monkeypatch, name: str, *workers) -> list:
    """Run the workers in threads that each wait, in their first call of identity_ranges.<name>,
    until every one has read the state it decides from; their writes then race. Returns each
    worker's result (or the exception it raised)."""
    real = getattr(identity_ranges, name)
    barrier = threading.Barrier(len(workers), timeout=300)
    waited = threading.local()

    def wrapped(*args, **kwargs):
        if not getattr(waited, "done", False):
            waited.done = True
            barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(identity_ranges, name, wrapped)
    results: list = [None] * len(workers)

    def run(i: int) -> None:
        try:
            results[i] = workers[i]()
        except BaseException as exc:  # reported by the caller
            results[i] = exc
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# -- case 5: a range assigned twice -----------------------------------------------------------


def test_case5_a_range_assignment_inside_anothers_window_gets_the_next_range(wh, monkeypatch):
    """`qrepl subscription range south` runs whole while `qrepl subscription range north`
    has read the mark and not yet moved it: before the fix both saw the mark at the range they
    computed and both appended an owner row for it."""
    orders = _article(wh, "orders")
    second = []
    _inside_first_call(monkeypatch, "next_range", lambda: second.append(assign_range(wh, "south", orders)))
    first = assign_range(wh, "north", orders)
    assert second and first != second[0], (first, second)
    assert current_range(wh, "north", "orders") == first and current_range(wh, "south", "orders") == second[0]
    _assert_no_block_has_two_owners(wh, "orders")


def test_case5_two_range_assignments_in_two_threads_get_different_ranges(wh, monkeypatch):
    orders = _article(wh, "orders")
    results = _together(
        monkeypatch, "next_range", lambda: assign_range(wh, "north", orders), lambda: assign_range(wh, "south", orders)
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert results[0] != results[1], results
    _assert_no_block_has_two_owners(wh, "orders")


def test_case5_an_identity_ranges_table_of_an_earlier_version_is_upgraded_in_place(spark):
    """A store whose identity_ranges was created before the token and claim columns: the
    next assignment adds them (ALTER TABLE), keeps every range, and assigns above them; the
    next value is claimed in the upgraded table."""
    wh = _drop(spark)
    wh.write_publication(publication_from_dict(PUBLICATION))
    spark.sql(f"create table {wh.table('identity_ranges')} ({OLD_DDL}) using iceberg")
    spark.sql(
        f"insert into {wh.table('identity_ranges')} values "
        f"('orders', '*', 6, 10, current_timestamp()), ('orders', '', 1, 5, current_timestamp()), "
        f"('orders', 'north', 6, 10, current_timestamp())"
    )
    orders = _article(wh, "orders")
    assert assign_range(wh, "south", orders) == (11, 15)
    assert {"token", "claimed"} <= set(wh.columns_of(wh.table("identity_ranges")))
    assert _owner_ranges(wh, "orders") == [("", 1, 5), ("north", 6, 10), ("south", 11, 15)]
    assert next_value(wh, "", orders, wh.article_table(orders), []) == 1
    assert next_value(wh, "", orders, wh.article_table(orders), []) == 2  # claimed: never given twice
    _assert_no_block_has_two_owners(wh, "orders")


def test_a_failure_at_any_write_of_an_assignment_leaves_no_block_with_two_owners(wh):
    """A failure right after each write of `assign_range` (the mark's compare-and-swap, the
    owner's row), then the rerun: at most a block no one holds, never two owners."""
    orders = _article(wh, "orders")
    faults.arm(10**6, faults.raise_fault)  # count only
    try:
        assign_range(wh, "probe", orders)
    finally:
        writes = faults.disarm()
    labels = faults.labels()
    assert any("python:identity.mark" in label for label in labels), labels
    for k in range(1, writes + 1):
        faults.arm(k, faults.raise_fault)
        try:
            with pytest.raises(faults.InjectedFault):
                assign_range(wh, f"crash{k}", orders)
        finally:
            faults.disarm()
        rng = assign_range(wh, f"crash{k}", orders)  # the rerun
        assert current_range(wh, f"crash{k}", "orders") == rng
        _assert_no_block_has_two_owners(wh, "orders")


# -- case 6: the same next value to two open transactions ---------------------------------------


def _capture(subscriber: str, article: str, row: dict, out: list | None = None) -> dict:
    with Subscriber(SCHEMA, subscriber).transaction() as t:
        t.insert(article, row)
    if out is not None:
        out.append(t.identities)
    return t.identities


def test_case6_two_captures_of_one_subscriber_open_at_once_get_different_values(wh, monkeypatch):
    """A second capture of north runs whole while the first has read its replica's highest
    value and not yet taken the next: before the fix both tickets got one number (a non-key
    identity: both rows kept) and both orders one key (the first then refused)."""
    second = []
    _inside_first_call(monkeypatch, "next_identity", lambda: _capture("north", "tickets", {"code": "b"}, second))
    first = _capture("north", "tickets", {"code": "a"})
    assert first["tickets"] != second[0]["tickets"], (first, second)

    monkeypatch.undo()
    _inside_first_call(monkeypatch, "next_identity", lambda: _capture("north", "orders", {"item": "y"}, second))
    first = _capture("north", "orders", {"item": "x"})
    assert first["orders"] != second[1]["orders"], (first, second)

    run_reader(SCHEMA, **QUIET)
    assert [r for r in wh.rows_of("transaction_outcomes") if r["outcome"] != "applied"] == []
    numbers = [r["number"] for r in wh.publisher_rows("tickets")]
    assert len(numbers) == 2 and len(set(numbers)) == 2, numbers
    assert sorted(r["item"] for r in wh.publisher_rows("orders")) == ["x", "y"]


def test_case6_two_captures_in_two_threads_get_different_values(wh, monkeypatch):
    results = _together(
        monkeypatch,
        "next_identity",
        lambda: _capture("north", "tickets", {"code": "a"}),
        lambda: _capture("north", "tickets", {"code": "b"}),
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert results[0]["tickets"] != results[1]["tickets"], results
    replica = wh.spark.table(f"{replica_schema(wh, 'north')}.tickets").collect()
    assert sorted(r.code for r in replica) == ["a", "b"] and len({r.number for r in replica}) == 2, replica


def test_case6_two_immediate_transactions_open_at_once_get_different_values(wh, monkeypatch):
    """imm2 commits an immediate insert while imm's transaction has read the publisher's
    highest value: before the fix both took the same value and imm's insert was rejected as
    a spurious insert_exists."""
    second = []
    _inside_first_call(monkeypatch, "next_identity", lambda: _capture("imm2", "orders", {"item": "b"}, second))
    first = _capture("imm", "orders", {"item": "a"})
    assert first["orders"] != second[0]["orders"], (first, second)
    assert sorted(r["item"] for r in wh.publisher_rows("orders")) == ["a", "b"]
    assert [r["outcome"] for r in wh.rows_of("immediate_transactions")] == ["applied", "applied"]


def test_case6_two_immediate_transactions_in_two_threads_get_different_values(wh, monkeypatch):
    results = _together(
        monkeypatch,
        "next_identity",
        lambda: _capture("imm", "tickets", {"code": "a"}),
        lambda: _capture("imm2", "tickets", {"code": "b"}),
    )
    assert not [r for r in results if isinstance(r, BaseException)], results
    numbers = [r["number"] for r in wh.publisher_rows("tickets")]
    assert sorted(numbers) == sorted(results[0]["tickets"] + results[1]["tickets"]) and len(set(numbers)) == 2


def test_case6_a_failure_at_any_write_of_a_capture_never_gives_a_value_twice(wh):
    """A failure right after each write of a queued capture of an identity insert (the claim,
    the queue append, the replica), then the capture again: every value queued is distinct."""
    faults.arm(10**6, faults.raise_fault)  # count only
    try:
        _capture("north", "tickets", {"code": "probe"})
    finally:
        writes = faults.disarm()
    labels = faults.labels()
    for k in range(1, writes + 1):
        faults.arm(k, faults.raise_fault)
        try:
            with pytest.raises(faults.InjectedFault):
                _capture("north", "tickets", {"code": f"c{k}"})
        finally:
            faults.disarm()
        _capture("north", "tickets", {"code": f"r{k}"})
    queued = [json.loads(q["new_row"])["number"] for q in wh.rows_of("replication_queue") if q["article"] == "tickets"]
    # before the claim, a failure after the queue append (the commit point) and before the
    # replica write gave the queued value again to the next capture
    assert not [n for n, c in Counter(queued).items() if c > 1], queued
    assert any("python:identity.claim" in label for label in labels), labels


def test_a_used_up_range_is_still_refused_with_claims(wh):
    """Claims stop at the range's end: the capture after the last value is refused in one line."""
    for i in range(5):
        _capture("north", "orders", {"item": f"t{i}"})
    with pytest.raises(ConfigError, match=r"subscriber north has used its identity range 6\.\.10 of orders"):
        _capture("north", "orders", {"item": "over"})
