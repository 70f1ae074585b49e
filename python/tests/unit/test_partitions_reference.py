"""Partitioned subscriptions on the reference (docs/spec.md §11), sentence by sentence: the filter
language, the rows a replica holds, writes outside the partition, compensation, filter changes
and immediate commits. Pure Python."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qrepl.core import filter_language as fl
from qrepl.core import filter_meaning as fm
from qrepl.core.modes import ConflictError
from qrepl.core.partitions import columns_of, parse_columns, parse_filters, partition_json, partition_of, write_refusal
from qrepl.core.publication import Article, publication_from_dict
from qrepl.core.reference import ReferenceReader
from qrepl.core.rows import canonical_key
from qrepl.core.values import dumps
from qrepl.core.vocabulary import REJECT_WHOLE_TRANSACTION, ConfigError
from qrepl.tools.replay import ReferenceBackend, normalized_outputs, play, scenario_from_dict
from scenario_builder import tran, v

ORDERS = {
    "name": "orders",
    "key": ["order_id"],
    "columns": {
        "order_id": "int",
        "region": "string",
        "qty": "decimal(12,2)",
        "closed": "boolean",
        "placed": "date",
        "weight": "double",
    },
}
ARTICLE = Article(
    "orders", ("order_id",), {k: t for k, t in ORDERS["columns"].items()}
)  # the same article, for the language alone
NORTH = "region = 'north'"


def order(oid: int, region: str | None, qty: str = "1.00", version: str | None = None) -> dict:
    r = {"order_id": oid, "region": region, "qty": qty, "closed": False, "placed": "2026-01-01", "weight": 1.5}
    if version:
        r["msrepl_tran_version"] = version
    return r


def scenario(policy: str, steps: list[dict], filters: dict | None = None) -> dict:
    return {
        "publication": "sales",
        "policy": policy,
        "articles": [ORDERS],
        "subscribers": ["north", "south", "hq"],  # hq takes every row
        "filters": filters
        if filters is not None
        else {"north": {"orders": NORTH}, "south": {"orders": "region = 'south'"}},
        "steps": steps,
    }


def upd(r: dict, old: str, new: str) -> dict:
    return {"article": "orders", "op": "U", "row": r, "old_version": old, "new_version": new}


def ins(r: dict, new: str) -> dict:
    return {"article": "orders", "op": "I", "row": r, "new_version": new}


def dele(oid: int, old: str) -> dict:
    return {"article": "orders", "op": "D", "key": {"order_id": oid}, "old_version": old}


def replay(data: dict) -> tuple[dict, ReferenceReader]:
    sc = scenario_from_dict(data, "t")
    backend = ReferenceBackend(sc)
    return normalized_outputs(sc, play(sc, backend)), backend.reader


# -- the language ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given_text, normalized",
    [
        ("region = 'north'", "region = 'north'"),
        ("REGION='north'", "region = 'north'"),
        ("order_id in (1,2,-3) and not closed", "order_id IN (1, 2, -3) AND NOT closed"),
        ("order_id not in (1, 2)", "order_id NOT IN (1, 2)"),
        ("qty between 1 and 9.5", "qty >= 1 AND qty <= 9.5"),
        ("placed >= date '2026-01-01'", "placed >= DATE '2026-01-01'"),
        ("lower(trim(region)) like 'n%' or region is null", "lower(trim(region)) LIKE 'n%' OR region IS NULL"),
        ("region is not null and length(region) > 2", "region IS NOT NULL AND length(region) > 2"),
        ("coalesce(region, 'none') <> 'it''s'", "coalesce(region, 'none') <> 'it''s'"),
        ("not (order_id = 1 or order_id = 2)", "NOT (order_id = 1 OR order_id = 2)"),
        ("(region = 'a' or region = 'b') and closed", "(region = 'a' OR region = 'b') AND closed"),
    ],
)
def test_a_filter_is_parsed_checked_and_printed_in_one_normalized_text(given_text, normalized):
    """'The filter is a boolean SQL expression over the article's own columns', printed by
    `subscription show` in qrepl's normalized text, which parses back to the same tree."""
    tree = fl.parse(ARTICLE, given_text)
    assert fm.text(tree) == normalized
    assert fl.parse(ARTICLE, normalized) == tree


@pytest.mark.parametrize(
    "given_text, named_part",
    [
        ("weight > 1", "column `weight` is a double"),
        ("other.region = 'north'", "`.` is not allowed (only the article's own columns, no other table)"),
        ("order_id = (select 1)", "a subquery is not allowed"),
        ("order_id in (select order_id from orders)", "a subquery is not allowed"),
        ("exists (select 1)", "`exists` is not allowed (no subqueries)"),
        ("rand() > 0.5", "function `rand` is not allowed"),
        ("current_date() = placed", "function `current_date` is not allowed"),
        ("order_id + 1 = 2", "`+` is not allowed"),
        ("region = 1", "= compares number and string"),
        ("region = null", "NULL is not allowed here (use IS NULL or IS NOT NULL)"),
        ("city = 'x'", "`city` is not a column of orders"),
        ("order_id", "the filter is not a condition"),
        ("region like 'a\\b'", "a LIKE pattern may escape only %, _ and \\ with \\"),
        ("region = 'north", "a string literal is not closed"),
        ("region = 'north'; drop table orders", "`;` is not allowed"),
        ("order_id in (order_id)", "IN takes a list of literals"),
        ("placed = DATE '2026-02-30'", "DATE '2026-02-30' is not a date"),
        ("qty = 1234567890123456789012345678901234567.5", "would need 39 digits"),
        ("", "empty"),
    ],
)
def test_a_filter_part_that_is_not_allowed_is_refused_in_one_line_naming_it(given_text, named_part):
    """'Anything else is refused in one line that says which part is not allowed.'"""
    with pytest.raises(ConfigError) as e:
        fl.parse(ARTICLE, given_text)
    assert str(e.value).startswith("filter for orders: ") and named_part in str(e.value)
    assert "\n" not in str(e.value)


def test_a_string_literal_reaches_spark_sql_as_its_bytes_never_as_text():
    """A quote, a backslash (an escape in Spark's own literals) or a comment marker in a filter's
    string is data: the rendered SQL holds the literal's bytes in hex."""
    content = "no'rth\\' or 1=1 --"
    tree = fl.parse(ARTICLE, "region = 'no''rth\\'' or 1=1 --'")
    assert tree["args"][1] == {"lit": content, "type": "string"}
    sql = fm.spark_sql(tree)
    assert sql == f"(`region` = cast(X'{content.encode('utf-8').hex().upper()}' as string))"


@pytest.mark.parametrize(
    "text, row, value",
    [
        ("region = 'north'", order(1, None), None),  # NULL: not in the partition
        ("region <> 'north'", order(1, None), None),
        ("region is null", order(1, None), True),
        ("order_id in (1, 3)", order(2, "x"), False),
        ("order_id not in (1, 3)", order(2, "x"), True),
        ("qty > 1", order(1, "x", "1.00"), False),
        ("qty >= 1", order(1, "x", "1.00"), True),
        ("trim(region) = 'north'", order(1, "  north  "), True),
        ("trim(region) = 'north'", order(1, "\tnorth"), False),  # Spark's trim removes spaces only
        ("region like 'n_rth%'", order(1, "north\nside"), True),  # % matches a line break
        ("region like 'n\\%'", order(1, "n%"), True),
        ("region like 'n\\%'", order(1, "nx"), False),
        ("length(region) = 2", order(1, "é🙂"), True),  # characters, not bytes or UTF-16 units
        ("region < 'z' or closed", order(1, None), None),
        ("region < 'z' and closed", order(1, None), False),
        ("region > 'é'", order(1, "🙂"), True),  # code point (UTF-8 byte) order
    ],
)
def test_a_filter_is_evaluated_with_sql_three_valued_logic(text, row, value):
    """A row is in the partition only when its filter is TRUE: NULL and FALSE are out."""
    assert fm.evaluate(ARTICLE, fl.parse(ARTICLE, text), row) == value
    assert fm.matches(ARTICLE, fl.parse(ARTICLE, text), row) is (value is True)


def test_filters_are_given_per_article_once_and_stored_as_checked_trees():
    pub = publication_from_dict(scenario("publisher_wins", []))
    partition = parse_filters(pub, ["orders: region = 'north'"])
    stored = partition_json(partition)
    assert json.loads(stored)["orders"]["filter"] == "region = 'north'"
    assert partition_of(pub, stored) == partition
    assert partition_json({}) is None and partition_of(pub, None) == {}
    for bad, says in [
        (["orders region = 'north'"], 'write it as "ARTICLE: CONDITION"'),
        (["lines: qty > 1"], "lines is not an article of sales (orders)"),
        (["orders: region = 'a'", "orders: region = 'b'"], "orders has a filter already"),
    ]:
        with pytest.raises(ConfigError) as e:
            parse_filters(pub, bad)
        assert says in str(e.value)


def test_a_stored_tree_is_checked_again_when_read():
    """The SQL is rendered from the stored tree: a tree edited in the table to call a function
    or name a column qrepl does not allow is refused, never run."""
    pub = publication_from_dict(scenario("publisher_wins", []))
    stored = json.loads(partition_json(parse_filters(pub, [f"orders: {NORTH}"])))
    stored["orders"]["tree"]["args"][1] = {"fn": "reflect", "args": []}
    with pytest.raises(ConfigError, match="function `reflect` is not allowed"):
        partition_of(pub, json.dumps(stored))
    stored["orders"]["tree"] = {"op": "=", "args": [{"col": "x` = 1 or `region"}, {"lit": "a", "type": "string"}]}
    with pytest.raises(ConfigError, match="is not a column of orders"):
        partition_of(pub, json.dumps(stored))


# -- the reference ----------------------------------------------------------------------------


def test_a_replica_holds_exactly_the_rows_its_filter_meets_and_rows_move_in_and_out():
    """'A replica holds exactly the publisher rows that match its filter. A publisher change
    that moves a row into a partition delivers the row; one that moves it out deletes it from
    that replica' -- and the same for another subscriber's change (hq's partition is the whole
    table)."""
    v1, v2, v3 = v(), v(), v()
    steps = [
        {
            "publisher_rows": {
                "orders": [order(1, "north", version=v1), order(2, "south", version=v2), order(3, None, version=v3)]
            }
        }
    ]
    out, reader = replay(scenario("publisher_wins", steps))
    assert set(reader.replica_rows("north", "orders")) == {'{"order_id":1}'}
    assert set(reader.replica_rows("south", "orders")) == {'{"order_id":2}'}  # NULL region: neither
    # a publisher change moves 1 to south; hq's change moves 2 to north
    steps += [
        {"publisher_change": {"article": "orders", "op": "U", "row": order(1, "south"), "new_version": v()}},
        {"enqueue": [tran("hq", "t1", upd(order(2, "north"), v2, v()))]},
        {"run": {}},
    ]
    out, reader = replay(scenario("publisher_wins", steps))
    assert [o["outcome"] for o in out["transaction_outcomes"]] == ["applied"]
    assert set(reader.replica_rows("north", "orders")) == {'{"order_id":2}'}
    assert set(reader.replica_rows("south", "orders")) == {'{"order_id":1}'}


@pytest.mark.parametrize(
    "why, command",
    [
        ("an insert outside the partition", lambda vs: ins(order(9, "south"), v())),
        ("an update that moves the row out", lambda vs: upd(order(1, "south"), vs[1], v())),
        ("an update of a row the replica does not hold", lambda vs: upd(order(2, "north"), vs[2], v())),
        ("a delete of a row the replica does not hold", lambda vs: dele(2, vs[2])),
    ],
)
def test_a_queued_command_outside_the_partition_is_quarantined_its_transaction_whole(why, command):
    """'A queued command that reaches the reader outside the partition anyway (written straight
    to the queue, or the filter changed since capture) is quarantined with its own reason, its
    transaction whole'; the subscriber's other transactions go on."""
    vs = {1: v(), 2: v()}
    steps = [
        {"publisher_rows": {"orders": [order(1, "north", version=vs[1]), order(2, "south", version=vs[2])]}},
        {
            "enqueue": [
                tran("north", "bad", ins(order(5, "north"), v()), command(vs)),
                tran("north", "good", ins(order(6, "north"), v())),
            ]
        },
        {"run": {}},
    ]
    out, reader = replay(scenario("publisher_wins", steps))
    reasons = [(r["tran_id"], r["command_seq"], r["reason"]) for r in out["queue_rejects"]]
    assert reasons == [("bad", 1, REJECT_WHOLE_TRANSACTION), ("bad", 2, "outside the partition")], why
    assert [(o["tran_id"], o["outcome"]) for o in out["transaction_outcomes"]] == [("good", "applied")]
    assert '{"order_id":5}' not in reader.publisher["orders"]


def test_the_partition_is_checked_only_for_the_subscriptions_current_generation():
    """A command of an older generation is rejected_reinit, as any, not quarantined."""
    vs = v()
    steps = [
        {"publisher_rows": {"orders": [order(1, "north", version=vs)]}},
        {"enqueue": [{**tran("north", "old", ins(order(9, "south"), v())), "generation": -1}]},
        {"run": {}},
    ]
    out, _ = replay(scenario("publisher_wins", steps))
    assert out["queue_rejects"] == []
    assert [o["outcome"] for o in out["transaction_outcomes"]] == ["rejected_reinit"]


def test_compensation_deletes_a_row_the_partition_no_longer_holds():
    """Publisher wins: the publisher moved the row out of the subscriber's partition, so the
    compensating command deletes it from the replica instead of writing it back."""
    v1 = v()
    steps = [
        {"publisher_rows": {"orders": [order(1, "north", version=v1)]}},
        {"publisher_change": {"article": "orders", "op": "U", "row": order(1, "south"), "new_version": v()}},
        {"enqueue": [tran("north", "t1", upd(order(1, "north", "2.00"), v1, v()))]},
        {"run": {}},
    ]
    out, _ = replay(scenario("publisher_wins", steps))
    assert [c["conflict_type"] for c in out["conflicts"]] == ["update_update"]
    assert [(c["op"], c["row"]) for c in out["compensating_commands"]] == [("delete", None)]


@pytest.mark.parametrize("policy", ["publisher_wins", "publisher_wins_reinit", "subscriber_wins"])
def test_overlapping_partitions_conflict_and_disjoint_ones_never_do(policy):
    """Two subscribers whose partitions share a row can meet on it, under every policy; two
    whose partitions are disjoint write different rows and never conflict."""
    v1, v2 = v(), v()
    rows = {"orders": [order(1, "north", version=v1), order(2, "south", version=v2)]}
    writes = [
        {"enqueue": [tran("north", "n1", upd(order(1, "north", "5.00"), v1, v()))]},
        {"enqueue": [tran("south", "s1", upd(order(2, "south", "6.00"), v2, v()))]},
        {"run": {}},
    ]
    disjoint, _ = replay(scenario(policy, [{"publisher_rows": rows}, *writes]))
    assert disjoint["conflicts"] == []
    both = {"north": {"orders": "region in ('north', 'south')"}, "south": {"orders": "region in ('north', 'south')"}}
    meet = [{"enqueue": [tran("south", "s2", upd(order(1, "north", "7.00"), v1, v()))]}]
    overlapping, _ = replay(scenario(policy, [{"publisher_rows": rows}, *writes[:1], *meet, {"run": {}}], both))
    assert [c["conflict_type"] for c in overlapping["conflicts"]] == ["update_update"]


def test_a_filter_change_is_a_reinitialization_refused_while_commands_wait_unless_forced():
    """'Changing a filter is a reinitialization of that subscription: refused while the
    subscriber has queued commands the reader has not taken, unless --force (which rejects
    them as for a generation change).'"""
    v1 = v()
    base = [
        {"publisher_rows": {"orders": [order(1, "north", version=v1), order(2, "south", version=v())]}},
        {"enqueue": [tran("north", "t1", upd(order(1, "north", "3.00"), v1, v()))]},
    ]
    widen = {"subscriber": "north", "filters": {"orders": "region in ('north', 'south')"}}
    with pytest.raises(ConfigError, match="north has 1 queued command"):
        replay(scenario("publisher_wins", [*base, {"filter_change": widen}]))
    out, reader = replay(scenario("publisher_wins", [*base, {"filter_change": {**widen, "force": True}}, {"run": {}}]))
    assert [o["outcome"] for o in out["transaction_outcomes"]] == ["rejected_reinit"]
    assert reader.subscriptions["north"].generation == 1
    assert set(reader.replica_rows("north", "orders")) == {'{"order_id":1}', '{"order_id":2}'}
    # with nothing waiting it needs no force, and the new generation's writes meet the new filter
    out, reader = replay(
        scenario(
            "publisher_wins",
            [
                *base,
                {"run": {}},
                {"filter_change": widen},
                {"enqueue": [tran("north", "t2", ins(order(7, "south"), v()))]},
                {"run": {}},
            ],
        )
    )
    assert [(o["tran_id"], o["outcome"]) for o in out["transaction_outcomes"]] == [("t1", "applied"), ("t2", "applied")]


def test_an_immediate_commit_outside_the_partition_is_refused_in_one_line():
    pub = publication_from_dict(scenario("publisher_wins", []))
    reader = ReferenceReader(pub)
    reader.add_subscription("north", update_mode="immediate", partition=parse_filters(pub, [f"orders: {NORTH}"]))
    a = pub.article("orders")
    r = order(4, "south")
    cmd = {
        "article": "orders",
        "op": "I",
        "row_key": canonical_key(a, r),
        "new_version": v(),
        "new_row": dumps(r),
        "old_row": None,
    }
    with pytest.raises(ConfigError) as e:
        reader.immediate_commit("north", "t1", [cmd], datetime(2026, 1, 1))
    assert (
        str(e.value)
        == "north inserts a row of orders outside its partition: the new row does not meet region = 'north'"
    )
    assert reader.publisher["orders"] == {} and reader.immediate_outcomes == []
    r = order(4, "north")
    cmd = {**cmd, "row_key": canonical_key(a, r), "new_row": dumps(r)}
    assert reader.immediate_commit("north", "t2", [cmd], datetime(2026, 1, 1)) == "applied"
    with pytest.raises(ConflictError):  # inside the partition, judged as any
        reader.immediate_commit("north", "t3", [cmd | {"new_version": v()}], datetime(2026, 1, 1))


def test_write_refusal_names_what_the_subscriber_did():
    pub = publication_from_dict(scenario("publisher_wins", []))
    part, a = parse_filters(pub, [f"orders: {NORTH}"]), pub.article("orders")
    assert write_refusal("n", part, a, "I", order(1, "north"), None) is None
    assert "n moves a row of orders outside its partition" in write_refusal(
        "n", part, a, "U", order(1, "x"), order(1, "north")
    )
    assert "n deletes a row of orders outside its partition" in write_refusal("n", part, a, "D", None, order(1, "x"))
    assert write_refusal("n", {}, a, "I", order(1, "x"), None) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["north", "south"]), st.integers(1, 6), st.sampled_from("IUD")), max_size=30),
    st.integers(1, 6),
)
def test_disjoint_partitions_never_conflict_whatever_each_subscriber_writes_in_its_own(writes, every):
    """Each subscriber writes offline, against its own replica (refreshed by distribution after
    a run), rows of its own partition, and inserts keys of its own range: with disjoint
    partitions no transaction ever conflicts or is quarantined, however the runs fall."""
    pub = publication_from_dict(scenario("publisher_wins", []))
    reader = ReferenceReader(pub)
    for s in ("north", "south"):
        reader.add_subscription(s, partition=parse_filters(pub, [f"orders: region = '{s}'"]))
    a = pub.article("orders")
    replicas = {s: reader.replica_rows(s, "orders") for s in ("north", "south")}
    for n, (sub, oid, op) in enumerate(writes):
        oid = oid * 2 + (sub == "south")  # north's keys are even, south's odd (identity ranges)
        key = canonical_key(a, {"order_id": oid})
        held = replicas[sub].get(key)
        new = order(oid, sub, f"{n}.00")
        new_version = v()
        if op == "I" and held is None:
            cmd = {"op": "I", "old_version": None, "new_version": new_version, "new_row": dumps(new)}
        elif op in "UD" and held is not None:
            cmd = {"op": op, "old_version": held["msrepl_tran_version"], "new_version": None, "new_row": None}
            if op == "U":
                cmd.update(new_version=new_version, new_row=dumps(new))
        else:
            continue
        replicas[sub][key] = {**new, "msrepl_tran_version": new_version} if op != "D" else None
        replicas[sub] = {k: r for k, r in replicas[sub].items() if r is not None}
        queued = {"subscriber": sub, "generation": 0, "tran_id": f"t{n}", "tran_seq": n, "command_seq": 1}
        queued |= {"article": "orders", "row_key": key, "old_row": None, "enqueued_at": datetime(2026, 1, 1, 0, 0, n)}
        reader.append_queue([{**queued, **cmd}])
        if n % every == 0:
            reader.run(datetime(2026, 1, 2, 0, 0, n))
            replicas = {s: reader.replica_rows(s, "orders") for s in ("north", "south")}
    reader.run(datetime(2026, 1, 3))
    assert reader.conflicts == [] and reader.queue_rejects == []
    assert {o["outcome"] for o in reader.transaction_outcomes} <= {"applied"}


# -- column filters (reference only) -----------------------------------------------------------

NORTH_COLUMNS = {"north": {"orders": ["order_id", "region", "qty"]}}  # not closed, placed, weight


def short(oid: int, region: str | None, qty: str) -> dict:
    """A row as the column-filtered north holds it."""
    return {"order_id": oid, "region": region, "qty": qty}


def test_a_column_list_must_hold_the_key_and_the_row_filters_columns():
    pub = publication_from_dict(scenario("publisher_wins", []))
    part = parse_filters(pub, [f"orders: {NORTH}"])
    assert parse_columns(pub, ["orders: qty, order_id, region"], part) == {"orders": ("order_id", "region", "qty")}
    for bad, says in [
        (["orders: region, qty"], "the key column order_id must be in the list"),
        (["orders: order_id, qty"], "the row filter of orders reads region, which the list leaves out"),
        (["orders: order_id, region, city"], "city is not a column of orders"),
        (["lines: order_id"], "ARTICLE one of the publication's"),
        (["orders: order_id, region", "orders: order_id, region"], "orders has a column list already"),
    ]:
        with pytest.raises(ConfigError) as e:
            parse_columns(pub, bad, part)
        assert says in str(e.value)
    stored = partition_json(part, {"orders": ("order_id", "region", "qty")})
    assert columns_of(pub, stored) == {"orders": ("order_id", "region", "qty")} and partition_of(pub, stored) == part


def test_a_column_list_must_hold_the_identity_and_the_stamped_column():
    """qrepl gives an identity column's values and stamps a stamped column at every write
    (docs/spec.md §3): a subscriber that did not hold them would insert rows without them."""
    data = scenario("publisher_wins", [], filters={})
    data["articles"] = [
        {
            **ORDERS,
            "columns": {**ORDERS["columns"], "line": "bigint", "placed_at": "timestamp"},
            "identity": "line",
            "stamped": "placed_at",
        }
    ]
    pub = publication_from_dict(data)
    assert parse_columns(pub, ["orders: order_id, line, placed_at"], {}) == {
        "orders": ("order_id", "line", "placed_at")
    }
    for bad, says in [
        (["orders: order_id, placed_at"], "the identity column line must be in the list (qrepl gives its values)"),
        (["orders: order_id, line, qty"], "the stamped column placed_at must be in the list"),
    ]:
        with pytest.raises(ConfigError) as e:
            parse_columns(pub, bad, {})
        assert says in str(e.value)


def test_a_column_filtered_update_changes_its_columns_and_keeps_the_publishers_others():
    """'Its updates change only those columns at the publisher, and the others keep their
    publisher values.' Its replica holds its columns only."""
    v1 = v()
    data = scenario("publisher_wins", [], filters={})
    data |= {"columns": NORTH_COLUMNS}
    data["steps"] = [
        {"publisher_rows": {"orders": [{**order(1, "north", "1.00", v1), "closed": True, "weight": 9.5}]}},
        {"enqueue": [tran("north", "t1", upd(short(1, "north", "2.00"), v1, v()))]},
        {"run": {}},
    ]
    out, reader = replay(data)
    assert [o["outcome"] for o in out["transaction_outcomes"]] == ["applied"]
    (row,) = reader.publisher["orders"].values()
    assert (row["qty"], row["closed"], row["weight"]) == ("2.00", True, 9.5)
    (held,) = reader.replica_rows("north", "orders").values()
    assert set(held) == {"order_id", "region", "qty", "msrepl_tran_version"}


@pytest.mark.parametrize("policy", ["publisher_wins", "subscriber_wins"])
def test_a_column_filtered_update_beside_a_publisher_change_to_another_column_conflicts_on_the_row(policy):
    """'Conflicts stay row-level (the version is the row's)': a publisher change to a column the
    subscriber does not take still meets its update. Under subscriber_wins the subscriber's
    columns are written and the publisher's change to the other column stays; the conflict row
    and the compensating command carry the subscriber's columns only."""
    v1 = v()
    data = scenario(policy, [], filters={}) | {"columns": NORTH_COLUMNS}
    data["steps"] = [
        {"publisher_rows": {"orders": [order(1, "north", "1.00", v1)]}},
        {
            "publisher_change": {
                "article": "orders",
                "op": "U",
                "row": {**order(1, "north"), "closed": True},
                "new_version": v(),
            }
        },
        {"enqueue": [tran("north", "t1", upd(short(1, "north", "2.00"), v1, v()))]},
        {"run": {}},
    ]
    out, reader = replay(data)
    (conflict,) = out["conflicts"]
    assert conflict["conflict_type"] == "update_update"
    assert (
        set(conflict["subscriber_row"])
        == set(conflict["publisher_row"])
        == {"order_id", "region", "qty", "msrepl_tran_version"}
    )
    (row,) = reader.publisher["orders"].values()
    if policy == "subscriber_wins":
        assert (row["qty"], row["closed"]) == ("2.00", True)
    else:
        assert (row["qty"], row["closed"]) == ("1.00", True)
        (comp,) = out["compensating_commands"]
        assert comp["op"] == "upsert" and set(comp["row"]) == {"order_id", "region", "qty", "msrepl_tran_version"}


def test_a_column_filtered_insert_leaves_the_other_columns_null_and_a_full_row_is_quarantined():
    data = scenario("publisher_wins", [], filters={}) | {"columns": NORTH_COLUMNS}
    data["steps"] = [
        {"publisher_rows": {"orders": []}},
        {
            "enqueue": [
                tran("north", "t1", ins(short(1, "north", "3.00"), v())),
                tran("north", "t2", ins(order(2, "north"), v())),
            ]
        },
        {"run": {}},
    ]
    out, reader = replay(data)
    assert [(o["tran_id"], o["outcome"]) for o in out["transaction_outcomes"]] == [("t1", "applied")]
    assert [(r["tran_id"], r["reason"]) for r in out["queue_rejects"]] == [("t2", "unknown extra columns")]
    (row,) = reader.publisher["orders"].values()
    assert (row["qty"], row["closed"], row["placed"], row["weight"]) == ("3.00", None, None, None)
