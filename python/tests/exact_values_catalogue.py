"""Values that must travel exactly (docs/spec.md §3): decimals of up to 38 digits, written as
JSON numbers or strings, that fit their column or must be quarantined because they would need
rounding or do not fit; string keys holding control characters, characters outside the BMP,
U+2028/U+2029, 0x7F, '/', '"' and '\\', whose canonical key text must be the text Spark's
to_json writes. Queue rows as an outside writer (or capture) puts them in `replication_queue`;
each case names the outcome it must get. Pure Python; shared by the reference test (unit/) and
the Spark + dbt test (spark/)."""

from __future__ import annotations

import base64
import json
from datetime import datetime
from decimal import Decimal

from qrepl.core.model import canonical_key, dumps, publication_from_dict

PUBLICATION = {
    "publication": "exact",
    "policy": "publisher_wins",
    "articles": [
        {
            "name": "amounts",
            "key": ["amount_id"],
            "columns": {"amount_id": "int", "d18": "decimal(18,2)", "d38": "decimal(38,2)", "d12": "decimal(12,1)"},
        },
        {"name": "tags", "key": ["tag"], "columns": {"tag": "string", "note": "string"}},
        {
            "name": "typed",
            "key": ["k_tiny", "k_small", "k_date", "k_dec", "k_bool"],
            "columns": {
                "k_tiny": "tinyint",
                "k_small": "smallint",
                "k_date": "date",
                "k_dec": "decimal(10,3)",
                "k_bool": "boolean",
                "t": "tinyint",
                "sm": "smallint",
                "f": "float",
            },
        },
        {
            "name": "moments",
            "key": ["k_ts", "k_ntz"],
            "columns": {
                "k_ts": "timestamp",
                "k_ntz": "timestamp_ntz",
                "ts": "timestamp",
                "ntz": "timestamp_ntz",
                "bin": "binary",
            },
        },
    ],
}
ARTICLES = {a.name: a for a in publication_from_dict(PUBLICATION).articles}
SUBSCRIBERS = ["s1"]
ENQUEUED_AT = datetime(2026, 3, 1, 12, 0, 0)
BATCH_TIME = datetime(2026, 3, 1, 13, 0, 0)

MAX18 = "9999999999999999.99"  # 18 digits: the largest decimal(18,2)
NEAR_FLOAT = "99999999999999.99"  # a double reads it as 99999999999999.98...
MAX38 = "999999999999999999999999999999999999.99"  # 38 digits
LONG38 = "123456789012345678901234567890123456.78"  # 38 digits, more than Python's default 28

# (case, d18, d38, d12 as written in new_row's JSON, expected: None = applied, else the reason)
DECIMAL_CASES = [
    ("max18_number", MAX18, "0", "0", None),
    ("near_float_number", NEAR_FLOAT, "0", "0", None),
    ("near_float_string", f'"{NEAR_FLOAT}"', "0", "0", None),
    ("max38_number", "0", MAX38, "0", None),
    ("long38_string", "0", f'"{LONG38}"', "0", None),
    ("long38_number_negative", "0", "-" + LONG38, "0", None),
    ("exponent_number", "1.5e3", "-2.5E-1", "12E-1", None),
    ("exponent_string", '"1.5e3"', '"25e-2"', '"0e5"', None),
    ("trailing_zeros_accepted", "1.500", '"2.5000000000"', "1.50", None),  # exact: 1.50 fits decimal(12,1)
    ("tiny_zero", '"0E-8"', "0.000", "-0", None),
    ("needs_rounding_number", "1.005", "0", "0", "wrong value type"),
    ("needs_rounding_string", "0", '"1.005"', "0", "wrong value type"),
    ("needs_rounding_scale1", "0", "0", "1.05", "wrong value type"),
    ("needs_rounding_far_digit", "0", "1.0000000000000000000000000000000000000000001", "0", "wrong value type"),
    ("too_many_digits_18", "99999999999999999.99", "0", "0", "wrong value type"),
    ("too_many_digits_38", "0", "9" + MAX38, "0", "wrong value type"),
    ("too_many_digits_38_string", "0", f'"1{MAX38}"', "0", "wrong value type"),
    ("exponent_out_of_range", "1e20", "0", "0", "wrong value type"),
    ("bad_text", '"12,5"', "0", "0", "wrong value type"),
    ("text_with_space", '" 1.5"', "0", "0", "wrong value type"),
    ("text_with_plus", '"+1.5"', "0", "0", "wrong value type"),
    ("text_with_newline", '"1.5\\n"', "0", "0", "wrong value type"),
    ("huge_exponent", '"1e1234567890"', "0", "0", "wrong value type"),
    ("boolean", "true", "0", "0", "wrong value type"),
]

# Strings as keys: each is inserted under its canonical key (what capture writes) and must be
# applied at the publisher by Spark as by the reference.
KEY_STRINGS = [chr(c) for c in range(0, 0x20)] + [
    "\x7f",
    "/",
    '"',
    "\\",
    "\\u001f",
    "a\\",
    "tab\there",
    "\u2028\u2029",
    "\U0001f600",
    "\U00010000",
    "\U0010ffff",
    "\ufeff",
    "\u00e9t\u00e9",
    "\u0085",
    "end\x1f\x0b",
]


# Keys and values of the newer types (docs/spec.md §3). Each case: (case, key JSON values as
# written: k_tiny, k_small, k_date, k_dec, k_bool; t, sm, f as written; reason or None).
# A good case's row_key is its canonical key; a bad key is written as given.
TYPED_CASES = [
    ("small_types", "1", "2", '"2026-01-01"', "1.5", "true", "-128", "32767", "1.1", None),
    ("negative_keys", "-128", "-32768", '"1999-12-31"', "-0.001", "false", "127", "-32768", "-0.0", None),
    ("float_rounds_to_nearest_float", "3", "3", '"2026-01-01"', "0", "true", "0", "0", "16777217", None),
    (
        "float_direct_not_double_rounded",
        "4",
        "4",
        '"2026-01-01"',
        "0",
        "true",
        "0",
        "0",
        "1.00000017881393432617187499",
        None,
    ),
    ("float_largest", "5", "5", '"2026-01-01"', "0", "true", "0", "0", "3.4028235e38", None),
    ("float_underflows_to_zero", "6", "6", '"2026-01-01"', "0", "true", "0", "0", "1e-46", None),
    ("decimal_key_max", "7", "7", '"2026-01-01"', "9999999.999", "true", "0", "0", "0", None),
    ("tinyint_out_of_range", "8", "8", '"2026-01-01"', "0", "true", "200", "0", "0", "wrong value type"),
    ("smallint_out_of_range", "9", "9", '"2026-01-01"', "0", "true", "0", "40000", "0", "wrong value type"),
    ("tinyint_not_whole", "10", "10", '"2026-01-01"', "0", "true", "1.0", "0", "0", "wrong value type"),
    ("float_overflows", "11", "11", '"2026-01-01"', "0", "true", "0", "0", "3.5e38", "wrong value type"),
    ("float_as_string", "12", "12", '"2026-01-01"', "0", "true", "0", "0", '"1.5"', "wrong value type"),
    ("tinyint_key_out_of_range", "200", "1", '"2026-01-01"', "0.000", "true", "0", "0", "0", "non-canonical key"),
    ("impossible_date_key", "13", "1", '"2026-02-30"', "0.000", "true", "0", "0", "0", "non-canonical key"),
    ("date_key_not_padded", "14", "1", '"2026-1-1"', "0.000", "true", "0", "0", "0", "non-canonical key"),
    ("decimal_key_as_string", "15", "1", '"2026-01-01"', '"1.500"', "true", "0", "0", "0", "non-canonical key"),
    ("decimal_key_needs_rounding", "16", "1", '"2026-01-01"', "1.0005", "true", "0", "0", "0", "non-canonical key"),
    ("decimal_key_not_at_scale", "17", "1", '"2026-01-01"', "1.5", "true", "0", "0", "0", "non-canonical key"),
]


# timestamp, timestamp_ntz and binary (docs/spec.md §3). Each case: (case, k_ts, k_ntz, ts, ntz, bin
# as written in new_row's JSON (a key as written in row_key too), the canonical text the publisher
# must hold for ts (None when the case is refused), reason or None). A good case's row_key is its
# canonical key, a "non-canonical key" case's its key as written.
ALL_BYTES = base64.b64encode(bytes(range(256))).decode()
MOMENT_CASES = [
    (
        "microseconds",
        '"2026-03-01T12:00:00.123456Z"',
        '"2026-03-01T12:00:00.123456"',
        '"2026-03-01T12:00:00.000001Z"',
        '"2026-03-01T12:00:00.999999"',
        '"AP8="',
        "2026-03-01T12:00:00.000001Z",
        None,
    ),
    (
        "year_0001_and_empty_binary",
        '"0001-01-01T00:00:00.000000Z"',
        '"0001-01-01T00:00:00.000000"',
        '"0001-01-01T00:00:00Z"',
        '"0001-01-01T00:00:00"',
        '""',
        "0001-01-01T00:00:00.000000Z",
        None,
    ),
    (
        "year_9999_and_all_bytes",
        '"9999-12-31T23:59:59.999999Z"',
        '"9999-12-31T23:59:59.999999"',
        '"9999-12-31T23:59:59.999999Z"',
        '"9999-12-31T23:59:59.999999"',
        f'"{ALL_BYTES}"',
        "9999-12-31T23:59:59.999999Z",
        None,
    ),
    (
        "before_1970",
        '"1969-12-31T23:59:59.999999Z"',
        '"1900-01-01T00:00:00.000000"',
        '"1900-01-01T00:00:00.5Z"',
        '"1969-12-31T23:59:59.999999"',
        '"AA=="',
        "1900-01-01T00:00:00.500000Z",
        None,
    ),
    (
        "leap_day",
        '"2024-02-29T00:00:00.000000Z"',
        '"2024-02-29T23:59:59.000000"',
        '"2024-02-29T23:59:59.999999Z"',
        '"2000-02-29T00:00:00"',
        '"////"',
        "2024-02-29T23:59:59.999999Z",
        None,
    ),
    # 02:30 on the last Sunday of March does not exist in Central Europe; in UTC (and with an offset) it is a plain instant
    (
        "offset_converted_to_utc",
        '"2026-03-29T00:30:00.000000Z"',
        '"2026-03-29T02:30:00.000000"',
        '"2026-03-29T02:30:00+02:00"',
        '"2026-03-29 02:30:00"',
        '"1234"',
        "2026-03-29T00:30:00.000000Z",
        None,
    ),
    (
        "offset_crosses_the_year",
        '"2026-01-01T00:00:00.000001Z"',
        '"2026-01-01T00:00:00.000001"',
        '"2026-12-31T23:30:00.25-05:30"',
        '"2026-12-31T23:59:59.000001"',
        '"+/8="',
        "2027-01-01T05:00:00.250000Z",
        None,
    ),
    (
        "offset_limits",
        '"2026-01-02T00:00:00.000000Z"',
        '"2026-01-02T00:00:00.000000"',
        '"2026-01-01T00:00:00-18:00"',
        '"2026-01-01T00:00:00.1"',
        '"AAAA"',
        "2026-01-01T18:00:00.000000Z",
        None,
    ),
    (
        "offset_plus_18",
        '"2026-01-03T00:00:00.000000Z"',
        '"2026-01-03T00:00:00.000000"',
        '"2026-01-01T00:00:00+18:00"',
        '"2026-01-01T00:00:00"',
        "null",
        "2025-12-31T06:00:00.000000Z",
        None,
    ),
    (
        "seven_fraction_digits",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00.1234567Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "ntz_seven_fraction_digits",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00.0000000"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "timestamp_without_zone",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "ntz_with_offset",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00+01:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "ntz_with_z",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00Z"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "before_year_0001_in_utc",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"0001-01-01T00:30:00+01:00"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "after_year_9999_in_utc",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"9999-12-31T23:30:00-01:00"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "no_such_day",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2023-02-29T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "ntz_no_such_day",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-04-31T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "leap_second",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2016-12-31T23:59:60Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "hour_24",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T24:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "offset_beyond_18_hours",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00+18:30"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "offset_without_colon",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00+0100"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "no_seconds",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "timestamp_as_number",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        "1767225600",
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "wrong value type",
    ),
    (
        "base64_unpadded",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '"AP8"',
        None,
        "wrong value type",
    ),
    (
        "base64_url_alphabet",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '"-_8="',
        None,
        "wrong value type",
    ),
    (
        "base64_unused_bits_set",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '"AP9="',
        None,
        "wrong value type",
    ),
    (
        "base64_line_break",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '"AAAA\\nAAAA"',
        None,
        "wrong value type",
    ),
    (
        "base64_as_number",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        "1234",
        None,
        "wrong value type",
    ),
    (
        "base64_as_boolean",
        '"2026-01-04T00:00:00.000000Z"',
        '"2026-01-04T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        "true",
        None,
        "wrong value type",
    ),
    (
        "key_without_microseconds",
        '"2026-01-05T00:00:00Z"',
        '"2026-01-05T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "non-canonical key",
    ),
    (
        "key_with_offset",
        '"2026-01-05T01:00:00.000000+01:00"',
        '"2026-01-05T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "non-canonical key",
    ),
    (
        "ntz_key_with_space",
        '"2026-01-05T00:00:00.000000Z"',
        '"2026-01-05 00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "non-canonical key",
    ),
    (
        "key_seven_fraction_digits",
        '"2026-01-05T00:00:00.0000000Z"',
        '"2026-01-05T00:00:00.000000"',
        '"2026-01-01T00:00:00Z"',
        '"2026-01-01T00:00:00"',
        '""',
        None,
        "non-canonical key",
    ),
]


def moment_rows() -> list[dict]:
    rows = []
    names = ("k_ts", "k_ntz", "ts", "ntz", "bin")
    for n, (case, *written, _, reason) in enumerate(MOMENT_CASES, 3000):
        new_row = "{" + ",".join(f'"{c}":{v}' for c, v in zip(names, written)) + "}"
        key_text = "{" + ",".join(f'"{c}":{v}' for c, v in zip(names[:2], written[:2])) + "}"
        if reason != "non-canonical key":
            key_text = canonical_key(ARTICLES["moments"], json.loads(key_text))
        rows.append(_row(f"moment_{case}", n, "moments", key_text, new_row, version(n)))
    return rows


def typed_rows() -> list[dict]:
    rows = []
    names = ("k_tiny", "k_small", "k_date", "k_dec", "k_bool", "t", "sm", "f")
    for n, (case, *written, reason) in enumerate(TYPED_CASES, 2000):
        new_row = "{" + ",".join(f'"{c}":{v}' for c, v in zip(names, written)) + "}"
        key_text = "{" + ",".join(f'"{c}":{v}' for c, v in zip(names[:5], written[:5])) + "}"
        if reason != "non-canonical key" or case == "decimal_key_not_at_scale":
            key_text = canonical_key(ARTICLES["typed"], json.loads(key_text, parse_float=Decimal))
            if case == "decimal_key_not_at_scale":
                key_text = key_text.replace('"k_dec":1.500', '"k_dec":1.5')
        rows.append(_row(f"typed_{case}", n, "typed", key_text, new_row, version(n)))
    return rows


def version(n: int) -> str:
    return f"{n:08x}-abcd-4ef0-8abc-{n:012x}"


def _row(tran_id: str, seq: int, article: str, key: str, new_row: str, new: str) -> dict:
    return {
        "subscriber": "s1",
        "generation": 0,
        "tran_id": tran_id,
        "tran_seq": seq,
        "command_seq": 1,
        "article": article,
        "op": "I",
        "row_key": key,
        "old_version": None,
        "new_version": new,
        "new_row": new_row,
        "old_row": None,
        "enqueued_at": ENQUEUED_AT,
    }


def decimal_rows() -> list[dict]:
    rows = []
    for n, (case, d18, d38, d12, _) in enumerate(DECIMAL_CASES, 1):
        new_row = f'{{"amount_id":{n},"d18":{d18},"d38":{d38},"d12":{d12}}}'
        rows.append(_row(f"dec_{case}", n, "amounts", f'{{"amount_id":{n}}}', new_row, version(n)))
    return rows


def key_rows() -> list[dict]:
    rows = []
    for n, text in enumerate(KEY_STRINGS, 1000):
        row = {"tag": text, "note": f"note {text}"}
        rows.append(_row(f"key_{n}", n, "tags", canonical_key(ARTICLES["tags"], row), dumps(row), version(n)))
    return rows


def queue_rows() -> list[dict]:
    return decimal_rows() + key_rows() + typed_rows() + moment_rows()


def expected_decimal(text: str) -> Decimal:
    """The exact value a JSON value of DECIMAL_CASES stands for."""
    return Decimal(text.strip('"'))
