"""The hostile-input catalogue as test data: queue rows an outside writer could put straight
into `replication_queue`, each class with the quarantine reason it must get (model.REJECT_REASONS),
plus good transactions that must be applied beside them. Pure Python; shared by the reference
test (unit/) and the Spark + dbt test (spark/)."""

from __future__ import annotations

import json
from datetime import datetime

PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "articles": [
        {
            "name": "customers",
            "key": ["customer_id"],
            "columns": {
                "customer_id": "int",
                "name": "string",
                "city": "string",
                "credit_limit": "decimal(12,2)",
                "since": "date",
                "active": "boolean",
                "score": "double",
            },
        },
        {
            "name": "order_lines",
            "key": ["order_id", "line_no"],
            "columns": {"order_id": "int", "line_no": "int", "product": "string", "quantity": "int"},
        },
    ],
}
SUBSCRIBERS = ["s1", "s2", "gone"]  # `gone` is subscribed, then dropped before the hostile rows arrive
ENQUEUED_AT = datetime(2026, 3, 1, 12, 0, 0)
BATCH_TIME = datetime(2026, 3, 1, 13, 0, 0)


def version(n: int) -> str:
    """A canonical (lower-case) version GUID."""
    return f"{n:08x}-abcd-4ef0-8abc-{n:012x}"


def customer(cid: int, **changes) -> dict:
    row = {
        "customer_id": cid,
        "name": f"c{cid}",
        "city": "x",
        "credit_limit": "100.00",
        "since": "2026-01-01",
        "active": True,
        "score": 0.5,
    }
    row.update(changes)
    return row


PUBLISHER_ROWS = {
    # customer 5: a job's plain SQL wrote NaN into score (as Spark's to_json spells it)
    "customers": [{**customer(cid), "msrepl_tran_version": version(cid)} for cid in (1, 2, 3, 4)]
    + [{**customer(5, score="NaN"), "msrepl_tran_version": version(5)}],
    "order_lines": [{"order_id": 1, "line_no": 1, "product": "p", "quantity": 1, "msrepl_tran_version": version(50)}],
}

_versions = iter(range(1000, 10_000))


def fresh() -> str:
    return version(next(_versions))


def compact(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def cmd(
    op: str,
    row: dict | None = None,
    *,
    article: str = "customers",
    key: str | None = None,
    old: str | None = None,
    new: str | None = None,
    new_row: str | None = None,
    **fields,
) -> dict:
    """One queue command; row_key defaults to the canonical key of `row`, new_row to its JSON."""
    if key is None and row is not None:
        names = ["customer_id"] if article == "customers" else ["order_id", "line_no"]
        key = compact({k: row[k] for k in names})
    if new_row is None and row is not None and op.upper() in ("I", "U"):
        new_row = compact(row)
    return {
        "article": article,
        "op": op,
        "row_key": key,
        "old_version": old,
        "new_version": new,
        "new_row": new_row,
        **fields,
    }


def tran(
    tran_id: str,
    *commands: dict,
    subscriber: str = "s1",
    tran_seq: int = 1,
    generation: int | None = 0,
    enqueued_at: datetime | None = ENQUEUED_AT,
) -> list[dict]:
    rows = []
    for seq, c in enumerate(commands, 1):
        c = dict(c)
        rows.append(
            {
                "subscriber": subscriber,
                "generation": generation,
                "tran_id": tran_id,
                "tran_seq": tran_seq,
                "command_seq": c.pop("command_seq", seq),
                "old_row": None,
                "enqueued_at": enqueued_at,
                **c,
            }
        )
    return rows


def _catalogue() -> list[tuple[str, str, list[dict]]]:
    """(class, reason, queue rows): every row of the class's transaction is quarantined, with
    `reason` or (its other commands) 'transaction has a quarantined command'."""
    c = customer
    shared = fresh()
    big = "n" * 70_000
    return [
        (
            "unknown_subscriber",
            "unknown subscriber",
            tran("h_unknown_sub", cmd("I", c(20), new=fresh()), subscriber="nobody"),
        ),
        (
            "dropped_subscription",
            "unknown subscriber",
            tran("h_dropped", cmd("I", c(21), new=fresh()), subscriber="gone"),
        ),
        (
            "unknown_article",
            "unknown article",
            tran("h_article", cmd("I", c(22), article="nope", key='{"customer_id":22}', new=fresh())),
        ),
        ("bad_op", "bad op", tran("h_op", cmd("X", c(23), new=fresh(), new_row=compact(c(23))))),
        (
            "missing_key_column",
            "missing key column",
            tran("h_key_column", cmd("D", article="order_lines", key='{"order_id":1}', old=version(50))),
        ),
        ("null_key_value", "null key value", tran("h_null_key", cmd("D", key='{"customer_id":null}', old=version(1)))),
        (
            "null_key_in_row",
            "null key value",
            tran("h_null_key_row", cmd("I", c(24, customer_id=None), key='{"customer_id":24}', new=fresh())),
        ),
        ("empty_key_delete", "empty key", tran("h_empty_d", cmd("D", key="{}", old=version(1)))),
        ("empty_key_insert", "empty key", tran("h_empty_i", cmd("I", c(25), key="{}", new=fresh()))),
        (
            "non_canonical_key_spaces",
            "non-canonical key",
            tran("h_key_spaces", cmd("D", key='{"customer_id": 2}', old=version(2))),
        ),
        (
            "non_canonical_key_order",
            "non-canonical key",
            tran("h_key_order", cmd("D", article="order_lines", key='{"line_no":1,"order_id":1}', old=version(50))),
        ),
        (
            "non_canonical_key_string_for_int",
            "non-canonical key",
            tran("h_key_string", cmd("D", key='{"customer_id":"2"}', old=version(2))),
        ),
        (
            "malformed_key_json",
            "malformed key JSON",
            tran("h_key_json", cmd("D", key='{"customer_id":2', old=version(2))),
        ),
        (
            "wrong_type_int",
            "wrong value type",
            tran(
                "h_type_int",
                cmd(
                    "I",
                    {"order_id": 7, "line_no": 1, "product": "p", "quantity": "abc"},
                    article="order_lines",
                    new=fresh(),
                ),
            ),
        ),
        (
            "wrong_type_decimal",
            "wrong value type",
            tran("h_type_decimal", cmd("U", c(2, credit_limit="abc"), old=version(2), new=fresh())),
        ),
        (
            "wrong_type_impossible_date",
            "wrong value type",
            tran("h_type_date", cmd("U", c(2, since="2026-02-30"), old=version(2), new=fresh())),
        ),
        # a non-finite double is read only as exactly "NaN", "Infinity" or "-Infinity" (what to_json writes)
        (
            "wrong_type_nan_double",
            "wrong value type",
            tran("h_type_nan", cmd("U", c(2, score="nan"), old=version(2), new=fresh())),
        ),
        (
            "wrong_type_infinity_spelling_double",
            "wrong value type",
            tran("h_type_inf", cmd("U", c(2, score="+INF"), old=version(2), new=fresh())),
        ),
        (
            "malformed_json_bare_nan",
            "malformed JSON",
            tran(
                "h_json_nan",
                cmd(
                    "U", c(2), old=version(2), new=fresh(), new_row=compact(c(2)).replace('"score":0.5', '"score":NaN')
                ),
            ),
        ),
        (
            "wrong_type_number_for_string",
            "wrong value type",
            tran("h_type_string", cmd("U", c(2, name=5), old=version(2), new=fresh())),
        ),
        (
            "wrong_type_string_for_boolean",
            "wrong value type",
            tran("h_type_bool", cmd("U", c(2, active="true"), old=version(2), new=fresh())),
        ),
        (
            "wrong_type_boolean_for_string",
            "wrong value type",
            tran("h_type_string_bool", cmd("U", c(2, name=False), old=version(2), new=fresh())),
        ),
        (
            "wrong_type_exponent_for_string",
            "wrong value type",
            tran("h_type_string_exp", cmd("U", c(2, city=-1.5e3), old=version(2), new=fresh())),
        ),
        (
            "wrong_type_string_for_double",
            "wrong value type",
            tran("h_type_double_text", cmd("U", c(2, score="1.5"), old=version(2), new=fresh())),
        ),
        (
            "wrong_type_nested",
            "wrong value type",
            tran("h_type_nested", cmd("U", c(2, city={"x": 1}), old=version(2), new=fresh())),
        ),
        (
            "malformed_json_truncated",
            "malformed JSON",
            tran("h_json_cut", cmd("I", key='{"customer_id":26}', new=fresh(), new_row='{"customer_id":26,"name":')),
        ),
        (
            "malformed_json_trailing",
            "malformed JSON",
            tran("h_json_tail", cmd("I", c(27), new=fresh(), new_row=compact(c(27)) + " x")),
        ),
        (
            "malformed_json_single_quotes",
            "malformed JSON",
            tran("h_json_quotes", cmd("I", key='{"customer_id":28}', new=fresh(), new_row="{'customer_id':28}")),
        ),
        (
            "malformed_json_field_twice",
            "malformed JSON",
            tran("h_json_twice", cmd("I", c(29), new=fresh(), new_row=compact(c(29))[:-1] + ',"customer_id":29}')),
        ),
        (
            "malformed_json_not_object",
            "malformed JSON",
            tran("h_json_array", cmd("I", key='{"customer_id":30}', new=fresh(), new_row="[1,2]")),
        ),
        (
            "update_without_old_version",
            "U without old_version",
            tran("h_u_no_old", cmd("U", c(2, city="y"), new=fresh())),
        ),
        (
            "insert_with_old_version",
            "I with old_version",
            tran("h_i_old", cmd("I", c(31), old=version(2), new=fresh())),
        ),
        (
            "delete_with_new_version",
            "D with new_version",
            tran("h_d_new", cmd("D", key='{"customer_id":2}', old=version(2), new=fresh())),
        ),
        (
            "duplicate_command",
            "duplicate command",
            tran("h_dup", cmd("I", c(32), new=fresh()), cmd("I", c(33), new=fresh(), command_seq=1)),
        ),
        (
            "command_seq_gap",
            "command_seq not 1..n",
            tran("h_gap", cmd("I", c(34), new=fresh()), cmd("I", c(35), new=fresh(), command_seq=3)),
        ),
        (
            "command_seq_null",
            "command_seq not 1..n",
            tran("h_seq_null", cmd("I", c(36), new=fresh(), command_seq=None)),
        ),
        ("oversize_row", "oversize row", tran("h_big", cmd("I", c(37, name=big), new=fresh()))),
        (
            "key_not_matching_row",
            "key mismatch",
            tran("h_mismatch", cmd("I", c(38), key='{"customer_id":39}', new=fresh())),
        ),
        (
            "unknown_extra_columns",
            "unknown extra columns",
            tran("h_extra", cmd("U", {**c(2), "nickname": "z"}, old=version(2), new=fresh())),
        ),
        (
            "missing_non_key_columns",
            "missing column",
            tran("h_missing", cmd("U", {"customer_id": 2, "name": "z"}, old=version(2), new=fresh())),
        ),
        (
            "version_not_uuid",
            "version not a UUID",
            tran("h_not_uuid", cmd("U", c(2, city="y"), old=version(2), new="not-a-uuid")),
        ),
        # issue 39: `$` also matches before a final newline; these texts end in one
        (
            "version_with_trailing_newline",
            "version not a UUID",
            tran("h_uuid_newline", cmd("U", c(2, city="y"), old=version(2), new=fresh() + "\n")),
        ),
        (
            "date_with_trailing_newline",
            "wrong value type",
            tran("h_date_newline", cmd("U", c(2, since="2026-01-01\n"), old=version(2), new=fresh())),
        ),
        (
            "decimal_text_with_trailing_newline",
            "wrong value type",
            tran("h_decimal_newline", cmd("U", c(2, credit_limit="100.00\n"), old=version(2), new=fresh())),
        ),
        (
            "reused_new_version_of_publisher_row",
            "reused new_version",
            tran("h_reuse_row", cmd("U", c(3, city="y"), old=version(3), new=version(3))),
        ),
        (
            "reused_new_version_in_batch",
            "reused new_version",
            tran("h_reuse_a", cmd("I", c(40), new=shared)) + tran("h_reuse_b", cmd("I", c(41), new=shared), tran_seq=2),
        ),
        ("null_enqueued_at", "null enqueued_at", tran("h_no_time", cmd("I", c(42), new=fresh()), enqueued_at=None)),
        ("null_tran_id", "null tran_id", tran(None, cmd("I", c(43), new=fresh()))),
        ("null_generation", "null generation", tran("h_no_gen", cmd("I", c(44), new=fresh()), generation=None)),
        (
            "negative_tran_seq",
            "null or negative tran_seq",
            tran("h_neg_seq", cmd("I", c(45), new=fresh()), tran_seq=-1),
        ),
        ("null_tran_seq", "null or negative tran_seq", tran("h_null_seq", cmd("I", c(46), new=fresh()), tran_seq=None)),
        (
            "generation_ahead",
            "generation newer than the subscription",
            tran("h_gen_ahead", cmd("I", c(47), new=fresh()), generation=5),
        ),
        (
            "bad_command_quarantines_its_transaction",
            "bad op",
            tran("h_whole", cmd("X", c(48), new=fresh(), new_row=compact(c(48))), cmd("I", c(49), new=fresh())),
        ),
    ]


HOSTILE = _catalogue()

# Good transactions beside them: all must be applied. `g_copy` is written twice byte for byte
# (an outside writer's retry): the copies collapse to one and it is applied once.
GOOD = [
    (
        "g_update",
        tran("g_update", cmd("U", customer(1, city="moved"), old=version(1), new=fresh()), subscriber="s2", tran_seq=1),
    ),
    ("g_insert", tran("g_insert", cmd("I", customer(10), new=fresh()), subscriber="s2", tran_seq=2)),
    ("g_delete", tran("g_delete", cmd("D", key='{"customer_id":4}', old=version(4)), subscriber="s2", tran_seq=3)),
    (
        "g_upper_case",
        tran(
            "g_upper_case",
            cmd("u", customer(3, city="upper"), old=version(3).upper(), new=fresh().upper()),
            subscriber="s2",
            tran_seq=4,
        ),
    ),
    (
        "g_copy",
        tran(
            "g_copy",
            cmd("I", customer(11), new=fresh()),
            cmd("I", {"order_id": 2, "line_no": 1, "product": "q", "quantity": 3}, article="order_lines", new=fresh()),
            subscriber="s2",
            tran_seq=5,
        ),
    ),
    # strings that read like numbers or booleans, or hold braces and quotes, are strings; nulls fit any column
    (
        "g_number_like_strings",
        tran(
            "g_number_like_strings",
            cmd("I", customer(12, name="123", city="-1.5e3"), new=fresh()),
            subscriber="s2",
            tran_seq=6,
        ),
    ),
    (
        "g_boolean_like_strings",
        tran(
            "g_boolean_like_strings",
            cmd("I", customer(13, name="true", city="false"), new=fresh()),
            subscriber="s2",
            tran_seq=7,
        ),
    ),
    (
        "g_structure_in_strings",
        tran(
            "g_structure_in_strings",
            cmd("I", customer(14, name='{"a":[1]}', city="O'Brien"), new=fresh()),
            subscriber="s2",
            tran_seq=8,
        ),
    ),
    (
        "g_null_values",
        tran(
            "g_null_values",
            cmd(
                "I",
                customer(15, name=None, city=None, credit_limit=None, since=None, active=None, score=None),
                new=fresh(),
            ),
            subscriber="s2",
            tran_seq=9,
        ),
    ),
    # valid JSON not written the way capture writes it (names in another order, spaces): the
    # reader parses its structure instead of taking the shortcut, and applies it
    (
        "g_not_as_captured",
        tran(
            "g_not_as_captured",
            cmd("I", customer(16), new=fresh(), new_row=json.dumps(customer(16), sort_keys=True)),
            subscriber="s2",
            tran_seq=10,
        ),
    ),
    # non-finite values as every row image spells them (issue 57 case 8): a change to the row a
    # job wrote NaN into, carrying it unchanged, is judged and applied like any other
    (
        "g_publisher_nan_carried",
        tran(
            "g_publisher_nan_carried",
            cmd("U", customer(5, city="moved", score="NaN"), old=version(5), new=fresh()),
            subscriber="s2",
            tran_seq=11,
        ),
    ),
    (
        "g_non_finite",
        tran(
            "g_non_finite",
            cmd("I", customer(17, score="Infinity"), new=fresh()),
            cmd("I", customer(18, score="-Infinity"), new=fresh()),
            subscriber="s2",
            tran_seq=12,
        ),
    ),
]


def queue_rows() -> list[dict]:
    """Every hostile row, then the good ones (g_copy twice)."""
    rows = [r for _, _, rows in HOSTILE for r in rows]
    for name, good in GOOD:
        rows += good + (good if name == "g_copy" else [])
    return rows
