"""Columns the publisher generates, in the reference (docs/spec.md §3): an identity column
assigned from ranges (the publisher's and one per subscriber, never overlapping), and a column
the publisher stamps at commit. Pure Python, no Spark."""

from __future__ import annotations

from datetime import datetime

import pytest

from qrepl.core.model import (
    PUBLISHER_RANGE_OWNER,
    ConfigError,
    dumps,
    next_identity,
    next_range,
    publication_from_dict,
)
from qrepl.core.reference import ReferenceReader
from scenario_builder import v

AT = datetime(2026, 3, 29, 0, 30, 0, 1)
ORDERS = {
    "name": "orders",
    "key": ["order_id"],
    "identity": "order_id",
    "identity_range": 3,
    "stamped": "placed_at",
    "columns": {"order_id": "bigint", "item": "string", "placed_at": "timestamp"},
}


def reader(**changes) -> ReferenceReader:
    r = ReferenceReader(publication_from_dict({"publication": "sales", "articles": [{**ORDERS, **changes}]}))
    r.add_subscription("imm", "immediate")
    r.add_subscription("north")
    return r


def insert(item: str, order_id: int | None = None) -> dict:
    return {
        "article": "orders",
        "op": "I",
        "row_key": None if order_id is None else f'{{"order_id":{order_id}}}',
        "old_version": None,
        "new_version": v(),
        "new_row": dumps({"order_id": order_id, "item": item, "placed_at": None}),
    }


@pytest.mark.parametrize(
    "change, message",
    [
        ({"identity": "item"}, "identity column item must be bigint, not string"),
        ({"identity": "nope"}, "identity column 'nope' is not among its columns"),
        ({"identity_range": 0}, "identity_range must be a whole number from 1"),
        ({"identity": None, "identity_range": 5}, "identity_range needs an identity column"),
        ({"stamped": "item"}, "stamped column item must be timestamp, not string"),
        ({"stamped": "order_id"}, "stamped column order_id must be timestamp"),
    ],
)
def test_generated_columns_are_validated_with_one_line(change, message):
    with pytest.raises(ConfigError, match=message):
        publication_from_dict({"publication": "sales", "articles": [{**ORDERS, **change}]})


def test_a_stamped_key_column_is_refused():
    article = {**ORDERS, "key": ["order_id", "placed_at"]}
    with pytest.raises(ConfigError, match="stamped column placed_at cannot be a key column"):
        publication_from_dict({"publication": "sales", "articles": [article]})


def test_the_declaration_round_trips():
    pub = publication_from_dict({"publication": "sales", "articles": [ORDERS]})
    assert publication_from_dict(pub.to_dict()) == pub
    assert pub.articles[0].identity == "order_id" and pub.articles[0].stamped == "placed_at"


def test_ranges_never_overlap_and_start_above_the_publisher_rows():
    assert next_range([], None, 3) == (1, 3)
    assert next_range([(1, 3), (4, 6)], 2, 3) == (7, 9)
    assert next_range([(1, 3)], 41, 10) == (42, 51)  # a row an outside writer gave 41
    r = reader()
    assert r.identity_range(PUBLISHER_RANGE_OWNER, "orders") == (1, 3)
    assert r.identity_range("imm", "orders") == (4, 6) and r.identity_range("north", "orders") == (7, 9)


def test_next_identity_counts_only_values_inside_the_range():
    assert next_identity((7, 9), [1, 2, 100]) == 7
    assert next_identity((7, 9), [7, 8, 4]) == 9
    assert next_identity((7, 9), [9]) is None  # used up: never wraps around, never leaves the range


def test_an_immediate_insert_gets_the_next_value_of_the_publisher_range_and_the_commit_stamp():
    r = reader()
    assert r.immediate_commit("imm", "t1", [insert("pen"), insert("ink")], AT) == "applied"
    rows = r.publisher["orders"]
    assert sorted(rows) == ['{"order_id":1}', '{"order_id":2}']
    assert rows['{"order_id":1}']["item"] == "pen" and rows['{"order_id":2}']["item"] == "ink"
    assert {row["placed_at"] for row in rows.values()} == {"2026-03-29T00:30:00.000001Z"}
    assert r.committed_images[("orders", '{"order_id":2}')]["order_id"] == 2  # what the replica gets


def test_an_immediate_update_is_stamped_again():
    r = reader()
    r.immediate_commit("imm", "t1", [insert("pen")], AT)
    version = r.publisher["orders"]['{"order_id":1}']["msrepl_tran_version"]
    later = datetime(2026, 3, 30, 8)
    update = {
        "article": "orders",
        "op": "U",
        "row_key": '{"order_id":1}',
        "old_version": version,
        "new_version": v(),
        "new_row": dumps({"order_id": 1, "item": "quill", "placed_at": "2026-01-01T00:00:00Z"}),
    }
    r.immediate_commit("imm", "t2", [update], later)
    assert r.publisher["orders"]['{"order_id":1}']["placed_at"] == "2026-03-30T08:00:00.000000Z"


def test_a_used_up_publisher_range_is_refused_with_what_to_do():
    r = reader()
    r.immediate_commit("imm", "t1", [insert("a"), insert("b"), insert("c")], AT)
    before = dict(r.publisher["orders"])
    with pytest.raises(
        ConfigError,
        match=r"the publisher has used its identity range 1\.\.3 of orders\.order_id: "
        r"run `qrepl publication range --article orders`",
    ):
        r.immediate_commit("imm", "t2", [insert("d")], AT)
    assert r.publisher["orders"] == before
    assert r.assign_range(PUBLISHER_RANGE_OWNER, "orders") == (10, 12)  # above every subscriber's range
    r.immediate_commit("imm", "t3", [insert("d")], AT)
    assert '{"order_id":10}' in r.publisher["orders"]


def test_a_queued_subscriber_takes_values_from_its_own_range_until_it_runs_out():
    r = reader()
    assert r.capture_identity("north", "orders", []) == 7
    assert r.capture_identity("north", "orders", [1, 2, 7]) == 8  # values of other ranges do not count
    with pytest.raises(
        ConfigError,
        match=r"subscriber north has used its identity range 7\.\.9 of orders\.order_id: "
        r"run `qrepl subscription range north --article orders`",
    ):
        r.capture_identity("north", "orders", [7, 8, 9])
    assert r.assign_range("north", "orders") == (10, 12)
    assert r.capture_identity("north", "orders", [7, 8, 9]) == 10


def test_a_subscriber_added_again_gets_a_fresh_range():
    r = reader()
    r.drop_subscription("north")
    r.add_subscription("north")
    assert r.identity_range("north", "orders") == (10, 12)


def test_case6_two_open_transactions_of_one_owner_get_different_values():
    """Issue 57 case 6: two captures of north open at once both see its replica without the
    other's row; the second still gets the next value (the first claimed its own). A value
    claimed once is not given again, whatever the table holds later."""
    r = reader()
    assert r.capture_identity("north", "orders", []) == 7
    assert r.capture_identity("north", "orders", []) == 8
    assert r.capture_identity("north", "orders", [7]) == 9  # 8's transaction failed: its value is a gap
    r.immediate_commit("imm", "t1", [insert("a")], AT)
    r.delete_row("orders", {"order_id": 1})
    r.immediate_commit("imm", "t2", [insert("b")], AT)
    assert sorted(r.publisher["orders"]) == ['{"order_id":2}']  # 1 was given, its row deleted: not given again
