"""docs/spec.md §1 and §5, one named test per sentence, on the real pipeline.

One scenario per policy holds a small case per sentence (own subscribers, own rows); it is
replayed once through Spark + dbt and once through the reference. Each test quotes its
sentence, asserts the behaviour on the Spark output, and that the reference agrees.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, play, scenario_from_dict
from scenario_builder import dele, ins, row, scenario, tran, upd, v

pytestmark = pytest.mark.spark

V = defaultdict(v)  # V["name"]: a fresh version GUID per name, stable within the run
SUBSCRIBERS = ("a", "b", "c", "d", "e", "f", "g1", "g2", "h", "z")


def _publisher(n: int = 20) -> dict:
    return {"publisher_rows": {"customers": [row(i, f"city{i}", V[f"p{i}"]) for i in range(1, n + 1)]}}


def _stale_generation_steps() -> list[dict]:
    """z's generation is bumped by a snapshot; a transaction stamped with the old one is queued."""
    stale = tran("z", "z-old", upd(20, "z", V["p20"], V["z1"]))
    stale["generation"] = 0
    return [{"reinitialize": {"subscriber": "z"}}, {"enqueue": [stale]}]


def publisher_wins_scenario() -> dict:
    steps = [
        _publisher(),
        {
            "enqueue": [
                tran("a", "a1", upd(1, "a1", V["p1"], V["a1"])),
                tran("a", "a2", upd(1, "a2", V["a1"], V["a2"])),
                tran("b", "b1", upd(2, "b1", V["p2"], V["b1"]), dele(3, V["p3"])),
                tran("c", "c1", upd(4, "c1", V["p4"], V["c1"]), upd(5, "c1", V["stale5"], V["c1b"])),
                tran("d", "d1", ins(50, "d1", V["d1"]), upd(51, "d1", V["ghost"], V["d1b"])),
                tran("e", "e1", upd(6, "e1", V["p6"], V["e1"]), upd(6, "e1b", V["e1"], V["e1b"])),
                tran("e", "e2", upd(7, "e2", V["stale7"], V["e2"]), upd(7, "e2b", V["e2"], V["e2b"])),
                tran("e", "e3", ins(60, "e3", V["e3"]), dele(60, V["e3"])),
                tran("f", "f1", upd(8, "f1", V["stale8"], V["f1"])),
                tran("f", "f2", upd(8, "f2", V["f1"], V["f2"])),
                tran("f", "f3", upd(9, "f3", V["p9"], V["f3"])),
                tran("g1", "g1", upd(10, "g1", V["p10"], V["g1"])),
                tran("g2", "g2", upd(10, "g2", V["p10"], V["g2"])),
            ]
        },
        {"run": {}},
        {"enqueue": [tran("h", "h1", upd(10, "h1", V["g1"], V["h1"]))]},
        {"run": {}},
        *_stale_generation_steps(),
        {"run": {}},
        {"run": {}},
    ]
    return scenario("publisher_wins", steps, SUBSCRIBERS)


def reinit_scenario() -> dict:
    steps = [
        _publisher(),
        {
            "enqueue": [
                tran("a", "a1", upd(1, "a1", V["p1"], V["ra1"])),
                tran("a", "a2", upd(2, "a2", V["stale2"], V["ra2"])),
                tran("b", "b1", upd(3, "b1", V["p3"], V["rb1"])),
                tran("a", "a3", upd(4, "a3", V["p4"], V["ra3"])),
            ]
        },
        {"run": {}},
        {"enqueue": [tran("a", "a4", upd(5, "a4", V["p5"], V["ra4"]))]},
        {"run": {}},
        {"reinitialize": {"subscriber": "a"}},
        {"enqueue": [tran("a", "a5", upd(6, "a5", V["p6"], V["ra5"]))]},
        {"run": {}},
        *_stale_generation_steps(),
        {"run": {}},
    ]
    return scenario("publisher_wins_reinit", steps, SUBSCRIBERS)


def subscriber_wins_scenario() -> dict:
    steps = [
        _publisher(),
        {
            "enqueue": [
                tran("a", "a1", upd(51, "a1", V["ghost51"], V["sa1"])),
                tran("a", "a2", ins(1, "a2", V["sa2"])),
                tran("a", "a3", dele(2, V["stale2"])),
                tran("a", "a4", dele(52, V["ghost52"])),
                tran("b", "b1", upd(3, "b1", V["p3"], V["sb1"])),
                tran("c", "c1", upd(3, "c1", V["p3"], V["sc1"])),
            ]
        },
        {"run": {}},
        *_stale_generation_steps(),
        {"run": {}},
    ]
    return scenario("subscriber_wins", steps, SUBSCRIBERS)


SCENARIOS = {
    "publisher_wins": publisher_wins_scenario,
    "publisher_wins_reinit": reinit_scenario,
    "subscriber_wins": subscriber_wins_scenario,
}


@pytest.fixture(scope="module")
def replayed(spark):
    out = {}
    for policy, make in SCENARIOS.items():
        sc = scenario_from_dict(make(), policy)
        spark_out = normalized_outputs(sc, play(sc, SparkBackend(sc)))
        out[policy] = (spark_out, normalized_outputs(sc, play(sc, ReferenceBackend(sc))))
    return out


class Result:
    def __init__(self, tables: dict) -> None:
        self.t = tables

    def outcome(self, tran_id: str) -> str:
        return {o["tran_id"]: o["outcome"] for o in self.t["transaction_outcomes"]}[tran_id]

    def batch(self, tran_id: str) -> int:
        return {o["tran_id"]: o["batch_id"] for o in self.t["transaction_outcomes"]}[tran_id]

    def row(self, cid: int) -> dict | None:
        return {r["customer_id"]: r for r in self.t["publisher/customers"]}.get(cid)

    def conflicts(self, tran_id: str) -> list[dict]:
        return [c for c in self.t["conflicts"] if c["tran_id"] == tran_id]

    def compensations(self, tran_id: str) -> list[dict]:
        return [c for c in self.t["compensating_commands"] if c["tran_id"] == tran_id]

    def subscription(self, name: str) -> dict:
        return {s["subscriber"]: s for s in self.t["subscriptions"]}[name]


def result(replayed, policy: str, table: str | None = None) -> Result:
    spark_out, reference_out = replayed[policy]
    tables = [table] if table else list(spark_out)
    for name in tables:  # Spark + dbt and the reference agree on what the test reads
        assert spark_out[name] == reference_out[name], name
    return Result(spark_out)


# ---- §1 ------------------------------------------------------------------------------------


def test_s1_versions_detect_conflicts_and_the_policy_resolves(replayed):
    """§1: 'a Queue Reader Agent later applies them at the Publisher, detects conflicts with a
    per-row version GUID (msrepl_tran_version) and resolves them by the publication's policy.'"""
    pw, sw = result(replayed, "publisher_wins"), result(replayed, "subscriber_wins")
    assert pw.row(10)["msrepl_tran_version"] == V["h1"]
    assert [c["winner"] for c in pw.conflicts("g2")] == ["publisher"]
    assert [c["winner"] for c in sw.conflicts("c1")] == ["subscriber"]


def test_s1_every_conflict_is_logged_and_compensated(replayed):
    """§1: 'apply the winners to the publisher tables, log every conflict, and emit compensating
    commands for the originating subscriber'."""
    r = result(replayed, "publisher_wins")
    rejected = {o["tran_id"] for o in r.t["transaction_outcomes"] if o["outcome"] == "rejected"}
    assert rejected == {"c1", "d1", "e2", "f1", "f2", "g2"}
    assert {c["tran_id"] for c in r.t["conflicts"]} == rejected
    assert {c["tran_id"] for c in r.t["compensating_commands"]} == rejected
    assert all(c["subscriber"] == r.conflicts(c["tran_id"])[0]["subscriber"] for c in r.t["compensating_commands"])


# ---- §5 Order ------------------------------------------------------------------------------


def test_each_run_processes_only_new_transactions_exactly_once(replayed):
    """'Each run processes the queued transactions not processed before (exactly once, whatever
    crashes or reruns happen).'"""
    r = result(replayed, "publisher_wins")
    ids = [(o["subscriber"], o["tran_id"]) for o in r.t["transaction_outcomes"]]
    assert len(ids) == len(set(ids)) == 15
    assert max(o["batch_id"] for o in r.t["transaction_outcomes"]) == 3  # the 4th run found nothing new


def test_transactions_in_enqueued_order_first_one_wins_the_race(replayed):
    """'Within a run, transactions are processed in ascending (enqueued_at, subscriber, tran_seq)'."""
    r = result(replayed, "publisher_wins")
    assert (r.outcome("g1"), r.outcome("g2")) == ("applied", "rejected")
    assert r.conflicts("g2")[0]["publisher_version"] == V["g1"]


def test_a_subscribers_transactions_in_its_commit_order(replayed):
    """'a subscriber's transactions are processed in its own commit order (tran_seq)'."""
    r = result(replayed, "publisher_wins")
    assert (r.outcome("a1"), r.outcome("a2")) == ("applied", "applied")
    assert r.row(1)["msrepl_tran_version"] == V["a2"]


def test_later_runs_come_after_everything_already_processed(replayed):
    """'transactions that become visible in a later run are processed after everything already
    processed.'"""
    r = result(replayed, "publisher_wins")
    assert (r.batch("g1"), r.batch("h1"), r.outcome("h1")) == (1, 2, "applied")


def test_commands_in_command_seq_order(replayed):
    """'Commands within a transaction in command_seq order.' (insert, then delete what it inserted)"""
    r = result(replayed, "publisher_wins")
    assert r.outcome("e3") == "applied" and r.row(60) is None and r.conflicts("e3") == []


# ---- §5 Judging ----------------------------------------------------------------------------


def test_conflict_type_codes_follow_sql_server(replayed):
    """'conflict_type_code follows SQL Server's transactional conflict tables: 1 update_update,
    2 update_missing, 3 delete_update, 4 delete_missing, 5 insert_exists.'"""
    r = result(replayed, "subscriber_wins", "conflicts")
    codes = {c["conflict_type"]: c["conflict_type_code"] for c in r.t["conflicts"]}
    assert codes == {
        "update_update": 1,
        "update_missing": 2,
        "delete_update": 3,
        "delete_missing": 4,
        "insert_exists": 5,
    }


def test_a_transaction_sees_its_own_writes(replayed):
    """'A command that follows another command of the same transaction on the same row is judged
    against the state that the earlier command produced'."""
    r = result(replayed, "publisher_wins")
    assert r.outcome("e1") == "applied" and r.row(6)["msrepl_tran_version"] == V["e1b"]


def test_a_conflict_is_logged_where_it_arises_not_for_its_consequences(replayed):
    """'whether or not that earlier command conflicted (a transaction sees its own writes; a
    conflict is logged where it arises, not again for its consequences inside the same transaction).'"""
    r = result(replayed, "publisher_wins")
    assert [(c["command_seq"], c["conflict_type"]) for c in r.conflicts("e2")] == [(1, "update_update")]


# ---- §5 publisher_wins -----------------------------------------------------------------------


def test_publisher_wins_applies_a_clean_transaction_whole(replayed):
    """'a transaction with no conflicting command is applied whole (each row gets the command's
    new_version; D deletes).'"""
    r = result(replayed, "publisher_wins")
    assert r.outcome("b1") == "applied"
    assert r.row(2)["msrepl_tran_version"] == V["b1"] and r.row(2)["city"] == "b1" and r.row(3) is None


def test_publisher_wins_rejects_a_conflicting_transaction_whole(replayed):
    """'A transaction with any conflict is rejected whole: nothing of it is applied; every
    conflicting command is logged with winner publisher'."""
    r = result(replayed, "publisher_wins")
    assert r.outcome("c1") == "rejected"
    assert r.row(4)["msrepl_tran_version"] == V["p4"]  # its clean command was not applied either
    assert [(c["command_seq"], c["winner"]) for c in r.conflicts("c1")] == [(2, "publisher")]


def test_publisher_wins_compensates_every_row_the_transaction_touched(replayed):
    """'for every distinct row the transaction touched, one compensating command is emitted to the
    originating subscriber that makes its row equal the publisher's row at that point (upsert with
    the publisher's row and version, or delete where the publisher has no row).'"""
    r = result(replayed, "publisher_wins", "compensating_commands")
    c1 = {c["row_key"]: c for c in r.compensations("c1")}
    assert {k: (c["op"], c["row"]["msrepl_tran_version"]) for k, c in c1.items()} == {
        '{"customer_id":4}': ("upsert", V["p4"]),
        '{"customer_id":5}': ("upsert", V["p5"]),
    }
    assert {(c["row_key"], c["op"], c["row"]) for c in r.compensations("d1")} == {
        ('{"customer_id":50}', "delete", None),
        ('{"customer_id":51}', "delete", None),
    }
    assert {c["subscriber"] for c in r.compensations("c1") + r.compensations("d1")} == {"c", "d"}


def test_publisher_wins_judges_later_transactions_normally(replayed):
    """'Later transactions of the same subscriber are judged normally (dependent transactions are
    not compensated).'"""
    r = result(replayed, "publisher_wins")
    assert (r.outcome("f1"), r.outcome("f2"), r.outcome("f3")) == ("rejected", "rejected", "applied")
    assert r.conflicts("f2")[0]["publisher_version"] == V["p8"]  # f2 met the publisher, not f1


# ---- §5 publisher_wins_reinit ---------------------------------------------------------------


def test_reinit_rejects_the_first_conflict_and_everything_after(replayed):
    """'at a subscriber's first conflicting transaction, that transaction and every later queued
    transaction of that subscriber are rejected (rejected_reinit), the conflict is logged, and the
    subscription is marked reinit_pending.'"""
    r = result(replayed, "publisher_wins_reinit")
    assert [r.outcome(t) for t in ("a1", "a2", "a3")] == ["applied", "rejected_reinit", "rejected_reinit"]
    assert [c["tran_id"] for c in r.t["conflicts"] if c["subscriber"] == "a"] == ["a2"]
    assert r.row(4)["msrepl_tran_version"] == V["p4"]


def test_reinit_pending_rejects_everything_until_reinitialized(replayed):
    """'While pending, and for queued rows of an older generation, everything from that subscriber
    is rejected.'"""
    r = result(replayed, "publisher_wins_reinit")
    assert r.outcome("a4") == "rejected_reinit" and r.row(5)["msrepl_tran_version"] == V["p5"]
    assert r.outcome("a5") == "applied"  # after the reinitialization (generation 1)
    assert (r.subscription("a")["status"], r.subscription("a")["generation"]) == ("active", 1)


def test_reinit_sends_no_compensating_commands(replayed):
    """'No compensating commands: reinitialization (section 6) replaces the subscriber's data.'"""
    assert result(replayed, "publisher_wins_reinit", "compensating_commands").t["compensating_commands"] == []


def test_reinit_leaves_other_subscribers_alone(replayed):
    """'Other subscribers are unaffected.'"""
    r = result(replayed, "publisher_wins_reinit")
    assert r.outcome("b1") == "applied" and r.subscription("b")["status"] == "active"


# ---- §5 subscriber_wins ---------------------------------------------------------------------


def test_subscriber_wins_applies_everything_and_logs_conflicts(replayed):
    """'subscriber_wins: every transaction is applied; conflicts are logged with winner subscriber.'"""
    r = result(replayed, "subscriber_wins")
    outcomes = {o["tran_id"]: o["outcome"] for o in r.t["transaction_outcomes"] if o["subscriber"] != "z"}
    assert set(outcomes.values()) == {"applied", "applied_with_conflicts"}
    assert {c["winner"] for c in r.t["conflicts"]} == {"subscriber"}


def test_subscriber_wins_missing_and_existing_rows(replayed):
    """'U on an absent row re-inserts it; I on an existing row overwrites it; D on an existing row
    deletes it whatever its version; D on an absent row changes nothing. The row takes the
    command's new_version.'"""
    r = result(replayed, "subscriber_wins")
    assert r.row(51)["msrepl_tran_version"] == V["sa1"]
    assert (r.row(1)["city"], r.row(1)["msrepl_tran_version"]) == ("a2", V["sa2"])
    assert r.row(2) is None and r.row(52) is None
    assert r.outcome("a4") == "applied_with_conflicts"


def test_subscriber_wins_last_subscriber_wins(replayed):
    """'Last subscriber transaction to reach the publisher wins.'"""
    r = result(replayed, "subscriber_wins")
    assert (r.row(3)["city"], r.row(3)["msrepl_tran_version"]) == ("c1", V["sc1"])


# ---- §5 generations ------------------------------------------------------------------------


@pytest.mark.parametrize("policy", list(SCENARIOS))
def test_an_older_generation_is_rejected_reinit_under_every_policy(replayed, policy):
    """'Under every policy, a queued transaction stamped with a generation older than its
    subscription's current one is rejected_reinit'."""
    r = result(replayed, policy)
    assert r.outcome("z-old") == "rejected_reinit" and r.row(20)["msrepl_tran_version"] == V["p20"]
