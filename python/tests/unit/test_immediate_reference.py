"""Update modes in the reference (docs/update-modes.md): immediate commits as one
compare-and-swap, read_only refusal, failover switch rules. Pure Python, no Spark."""

from __future__ import annotations

from datetime import datetime

import pytest

from qrepl.core.model import (
    ConfigError,
    ConflictError,
    dumps,
    initial_current_mode,
    normalize_update_mode,
    publication_from_dict,
)
from qrepl.core.reference import ReferenceReader
from scenario_builder import CUSTOMERS, row, v

AT = datetime(2026, 1, 1, 12)


def reader(mode: str = "immediate") -> ReferenceReader:
    r = ReferenceReader(publication_from_dict({"publication": "sales", "articles": [CUSTOMERS]}))
    r.add_subscription("s1", mode)
    r.add_subscription("s2")
    return r


def cmd(op: str, cid: int, city: str | None, old: str | None, new: str | None) -> dict:
    return {
        "article": "customers",
        "op": op,
        "row_key": f'{{"customer_id":{cid}}}',
        "old_version": old,
        "new_version": new,
        "new_row": dumps(row(cid, city)) if city is not None else None,
    }


def test_sql_server_spellings_are_normalized():
    assert [
        normalize_update_mode(m)
        for m in ("queued tran", "sync tran", "failover", "Queued Failover", "read only", "read_only", "immediate")
    ] == ["queued", "immediate", "failover", "queued_failover", "read_only", "read_only", "immediate"]
    assert [initial_current_mode(m) for m in ("queued", "immediate", "failover", "queued_failover", "read_only")] == [
        "queued",
        "immediate",
        "immediate",
        "queued",
        "read_only",
    ]
    with pytest.raises(ConfigError, match="unknown update mode 'merge'"):
        normalize_update_mode("merge")


def test_immediate_commit_applies_every_row_when_all_versions_match():
    r = reader()
    v1, v2 = v(), v()
    r.put_row("customers", row(1, "a", v1))
    r.put_row("customers", row(2, "b", v2))
    n1, n3 = v(), v()
    assert (
        r.immediate_commit(
            "s1", "t1", [cmd("U", 1, "x", v1, n1), cmd("D", 2, None, v2, None), cmd("I", 3, "c", None, n3)], AT
        )
        == "applied"
    )
    assert r.publisher["customers"] == {'{"customer_id":1}': row(1, "x", n1), '{"customer_id":3}': row(3, "c", n3)}
    assert r.immediate_rejections == [] and r.immediate_outcomes[0]["outcome"] == "applied"


def test_a_conflict_on_one_row_rejects_the_whole_transaction():
    r = reader()
    v1, v2 = v(), v()
    r.put_row("customers", row(1, "a", v1))
    r.put_row("customers", row(2, "b", v2))
    before = {k: dict(x) for k, x in r.publisher["customers"].items()}
    stale = v()
    with pytest.raises(ConflictError) as err:
        r.immediate_commit("s1", "t1", [cmd("U", 1, "x", v1, v()), cmd("U", 2, "y", stale, v())], AT)
    assert r.publisher["customers"] == before
    [conflict] = err.value.rows
    assert (conflict["row_key"], conflict["conflict_type"]) == ('{"customer_id":2}', "update_update")
    assert conflict["publisher_row"] == row(2, "b", v2) and conflict["subscriber_row"]["city"] == "y"
    assert 'update_update (code 1) on customers {"customer_id":2}' in str(err.value)
    assert r.immediate_rejections == err.value.rows and r.immediate_outcomes[0]["outcome"] == "rejected"


@pytest.mark.parametrize(
    "command, has_row, conflict_type",
    [
        (lambda v0: cmd("U", 1, "x", v0, v()), False, "update_missing"),
        (lambda v0: cmd("D", 1, None, v(), None), True, "delete_update"),
        (lambda v0: cmd("D", 1, None, v0, None), False, "delete_missing"),
        (lambda v0: cmd("I", 1, "x", None, v()), True, "insert_exists"),
    ],
)
def test_conflict_types_are_those_of_the_conflict_log(command, has_row, conflict_type):
    r = reader()
    v0 = v()
    if has_row:
        r.put_row("customers", row(1, "a", v0))
    with pytest.raises(ConflictError) as err:
        r.immediate_commit("s1", "t1", [command(v0)], AT)
    assert [c["conflict_type"] for c in err.value.rows] == [conflict_type]


def test_read_only_refuses_capture_and_queued_is_not_immediate():
    r = reader("read only")
    with pytest.raises(ConfigError, match="read only"):
        r.check_capture("s1")
    with pytest.raises(ConfigError, match="read only"):
        r.immediate_commit("s1", "t1", [cmd("I", 1, "x", None, v())], AT)
    with pytest.raises(ConfigError, match="not immediate"):
        r.immediate_commit("s2", "t1", [cmd("I", 1, "x", None, v())], AT)


def test_failover_switch_rules():
    r = reader("failover")
    with pytest.raises(ConfigError, match="only failover and queued_failover"):
        r.set_mode("s2", "immediate")
    r.set_mode("s1", "queued")  # to queued: always allowed
    with pytest.raises(ConfigError, match="has not run since subscriber s1 was initialized"):
        r.set_mode("s1", "immediate")
    r.queue.append(
        {
            "subscriber": "s1",
            "generation": 0,
            "tran_id": "q1",
            "tran_seq": 1,
            "command_seq": 1,
            **cmd("I", 1, "x", None, v()),
            "old_row": None,
            "enqueued_at": AT,
        }
    )
    with pytest.raises(ConfigError, match="still has 1 queued command"):
        r.set_mode("s1", "immediate")
    r.run(AT)
    r.set_mode("s1", "immediate")
    assert r.subscriptions["s1"].current_mode == "immediate"
    r.reinitialize("s1")
    r.set_mode("s1", "queued")
    with pytest.raises(ConfigError, match="has not run since"):
        r.set_mode("s1", "immediate")


def test_a_row_rewritten_keeping_its_version_is_a_conflict_the_row_is_the_evidence():
    """docs/spec.md §10: the before image the subscriber saw (old_row) is compared with the
    publisher's row. A job rewrote customer 1 keeping its version: the update and the delete
    that saw the old city both conflict; a before image equal to the row passes."""
    r = reader()
    v1 = v()
    r.put_row("customers", row(1, "by-job", v1))
    seen_before_job = dumps({"customer_id": 1, "name": "c1", "city": "a"})
    update = {**cmd("U", 1, "x", v1, v()), "old_row": seen_before_job}
    delete = {**cmd("D", 1, None, v1, None), "old_row": seen_before_job}
    for tran, command, kind in (("t1", update, "update_update"), ("t2", delete, "delete_update")):
        with pytest.raises(ConflictError) as err:
            r.immediate_commit("s1", tran, [command], AT)
        assert [row_["conflict_type"] for row_ in err.value.rows] == [kind]
    assert r.publisher["customers"]['{"customer_id":1}'] == row(1, "by-job", v1)
    seen_now = {**update, "old_row": dumps({"customer_id": 1, "name": "c1", "city": "by-job"})}
    assert r.immediate_commit("s1", "t3", [seen_now], AT) == "applied"
