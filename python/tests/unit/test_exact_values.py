"""Values travel exactly through the reference (the spec), `qrepl enqueue`'s checks and the
capture API's row images: decimals of up to 38 digits are never rounded or nulled (a value that
does not fit is quarantined or refused), and the canonical key text of every string is the
text Spark's to_json writes."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from exact_values_catalogue import (
    ALL_BYTES,
    ARTICLES,
    BATCH_TIME,
    DECIMAL_CASES,
    KEY_STRINGS,
    LONG38,
    MAX38,
    MOMENT_CASES,
    NEAR_FLOAT,
    PUBLICATION,
    TYPED_CASES,
    expected_decimal,
    queue_rows,
)
from qrepl.services.enqueue import _queue_row, check_record, read_records
from qrepl.core.model import (
    Article,
    canonical_key,
    coerce_json_value,
    decimal_value,
    normalize_row,
    publication_from_dict,
    value_refusal,
)
from qrepl.core.reference import ReferenceReader


@pytest.fixture(scope="module")
def reader() -> ReferenceReader:
    r = ReferenceReader(publication_from_dict(PUBLICATION))
    r.add_subscription("s1")
    r.queue.extend(queue_rows())
    r.run(BATCH_TIME)
    return r


@pytest.mark.parametrize("case, d18, d38, d12, reason", DECIMAL_CASES, ids=[c[0] for c in DECIMAL_CASES])
def test_decimal_case_is_applied_exactly_or_quarantined_by_the_reference(reader, case, d18, d38, d12, reason):
    n = [c[0] for c in DECIMAL_CASES].index(case) + 1
    rejected = [r["reason"] for r in reader.queue_rejects if r["tran_id"] == f"dec_{case}"]
    row = reader.publisher["amounts"].get(json.dumps({"amount_id": n}, separators=(",", ":")))
    if reason is None:
        assert rejected == [] and row is not None
        assert [Decimal(row[c]) for c in ("d18", "d38", "d12")] == [expected_decimal(v) for v in (d18, d38, d12)]
    else:
        assert rejected == [reason] and row is None


def test_decimal_38_digits_exact_through_reference(reader):
    rows = {r["amount_id"]: r for r in reader.publisher["amounts"].values()}
    n = [c[0] for c in DECIMAL_CASES]
    assert rows[n.index("max38_number") + 1]["d38"] == MAX38
    assert rows[n.index("long38_string") + 1]["d38"] == LONG38
    assert rows[n.index("long38_number_negative") + 1]["d38"] == "-" + LONG38
    assert rows[n.index("near_float_number") + 1]["d18"] == NEAR_FLOAT


def test_trailing_zeros_are_accepted_and_scaled_to_the_column(reader):
    rows = {r["amount_id"]: r for r in reader.publisher["amounts"].values()}
    row = rows[[c[0] for c in DECIMAL_CASES].index("trailing_zeros_accepted") + 1]
    assert (row["d18"], row["d38"], row["d12"]) == ("1.50", "2.50", "1.5")
    zero = rows[[c[0] for c in DECIMAL_CASES].index("tiny_zero") + 1]
    assert (zero["d18"], zero["d38"], zero["d12"]) == ("0.00", "0.00", "0.0")  # plain text, never 0E-8


def test_decimal_quantize_needs_no_default_context():
    """Python's default decimal context keeps 28 digits: a decimal(38,2) value of 38 digits is
    kept whole (it became NULL through capture before)."""
    assert decimal_value(Decimal(LONG38), 38, 2) == Decimal(LONG38)
    assert decimal_value(Decimal("1E+35"), 38, 2) == Decimal("100000000000000000000000000000000000.00")
    assert decimal_value(LONG38, 38, 0) is None and decimal_value(LONG38, 37, 2) is None


def test_decimal_38_digits_exact_through_enqueue_checks(tmp_path):
    """`qrepl enqueue` reads a JSONL file with exact numbers: 99999999999999.99 stays itself in a
    decimal(18,2) column (it was ...98 through a float), 38 digits are accepted as a JSON number
    or string, and a value needing rounding is refused with one line naming the column."""
    pub = publication_from_dict(PUBLICATION)
    path = tmp_path / "changes.jsonl"
    path.write_text(
        f'{{"tran_id":"a","article":"amounts","op":"I","row":{{"amount_id":1,"d18":{NEAR_FLOAT},"d38":{MAX38},"d12":1.50}}}}\n'
        f'{{"tran_id":"b","article":"amounts","op":"I","row":{{"amount_id":2,"d18":0,"d38":"{LONG38}","d12":0}}}}\n'
        '{"tran_id":"c","article":"amounts","op":"I","row":{"amount_id":3,"d18":1.005,"d38":0,"d12":0}}\n'
    )
    records = list(read_records(path))
    assert [check_record(pub, r) for _, r, _ in records[:2]] == [None, None]
    refusal = check_record(pub, records[2][1])
    assert refusal.startswith("wrong value type for d18 (decimal(18,2): 1.005)") and "never rounded" in refusal
    first = json.loads(_queue_row(pub, "s1", 0, "a", 1, 1, records[0][1], None)["new_row"])
    second = json.loads(_queue_row(pub, "s1", 0, "b", 2, 1, records[1][1], None)["new_row"])
    assert (first["d18"], first["d38"], first["d12"]) == (NEAR_FLOAT, MAX38, "1.5")
    assert second["d38"] == LONG38


def test_decimal_refused_by_capture_instead_of_rounded_or_nulled():
    amounts = ARTICLES["amounts"]
    assert value_refusal(amounts, {"amount_id": 1, "d38": Decimal(LONG38)}) is None
    assert normalize_row(amounts, {"amount_id": 1, "d38": Decimal(LONG38)})["d38"] == LONG38
    assert "does not fit decimal(18,2) exactly" in value_refusal(amounts, {"amount_id": 1, "d18": Decimal("1.005")})
    assert "does not fit decimal(12,1)" in value_refusal(amounts, {"amount_id": 1, "d12": "123456789012.5"})
    assert value_refusal(amounts, {"amount_id": 1, "d12": Decimal("1.50")}) is None


def test_control_character_keys_applied_by_reference(reader):
    assert [r for r in reader.queue_rejects if r["tran_id"].startswith("key_")] == []
    held = {row["tag"] for row in reader.publisher["tags"].values()}
    assert held == set(KEY_STRINGS)


def _jackson_rule(text: str) -> str:
    """The fixed rule Spark's to_json (Jackson) follows for a string (measured on Spark 3.5):
    '"' and '\\' escaped, \\b \\f \\n \\r \\t short, every other code point below 0x20 as
    \\u00XX with upper-case hex, everything else as itself."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return '"' + "".join(short.get(ch) or (f"\\u{ord(ch):04X}" if ord(ch) < 0x20 else ch) for ch in text) + '"'


def _sampled_code_points() -> list[int]:
    points = set(range(0, 0x3000))
    for plane in range(0, 0x11):  # every plane's edges: where UTF-16 switches to surrogate pairs and back
        base = plane << 16
        points |= {base, base + 1, base + 0x3FF, base + 0x400, base + 0xFFFE, base + 0xFFFF}
    points |= {0xD7FF, 0xE000, 0xFEFF, 0xFFFD, 0x10000, 0x103FF, 0x10400, 0x10FFFF, 0x1F600}
    return sorted(p for p in points if p <= 0x10FFFF and not 0xD800 <= p <= 0xDFFF)  # lone surrogates are no text


def test_canonical_key_of_every_sampled_code_point_follows_the_jackson_rule():
    tags = Article("tags", ("tag",), {"tag": "string"})
    pairs = Article("pairs", ("a", "b"), {"a": "string", "b": "int"})
    points = _sampled_code_points()
    assert len(points) > 0x3000
    for cp in points:
        ch = chr(cp)
        assert canonical_key(tags, {"tag": ch}) == '{"tag":' + _jackson_rule(ch) + "}", hex(cp)
        text = f"x{ch}\\{ch}\\u00{cp & 0xFF:02x}"
        assert canonical_key(pairs, {"a": text, "b": cp}) == '{"a":' + _jackson_rule(text) + f',"b":{cp}}}', hex(cp)


def test_string_column_reads_exact_json_numbers_as_before():
    """A JSON number parsed exactly (Decimal) in a double or string column reads as the float it
    always did."""
    assert coerce_json_value(Decimal("1.5E+3"), "double") == 1500.0
    assert coerce_json_value(Decimal("-1.5E+3"), "string") == "-1500.0"


# The IEEE 754 single-precision value of each float text of TYPED_CASES (nearest, ties to even).
FLOAT32 = {
    "1.1": 1.100000023841858,
    "-0.0": -0.0,
    "0": 0.0,
    "16777217": 16777216.0,
    "1.00000017881393432617187499": 1.0000001192092896,
    "3.4028235e38": 3.4028234663852886e38,
    "1e-46": 0.0,
}


@pytest.mark.parametrize("case", TYPED_CASES, ids=[c[0] for c in TYPED_CASES])
def test_tinyint_smallint_float_date_decimal_boolean_as_key_and_value_on_reference(reader, case):
    name, k_tiny, k_small, k_date, k_dec, k_bool, t, sm, f, reason = case
    rejected = [r["reason"] for r in reader.queue_rejects if r["tran_id"] == f"typed_{name}"]
    held = [
        r for r in reader.publisher["typed"].values() if r["k_tiny"] == int(k_tiny) and r["k_small"] == int(k_small)
    ]
    if reason is None:
        assert rejected == [] and len(held) == 1
        row = held[0]
        assert (row["k_date"], Decimal(row["k_dec"]), row["k_bool"]) == (
            json.loads(k_date),
            Decimal(k_dec),
            json.loads(k_bool),
        )
        assert (row["t"], row["sm"]) == (int(t), int(sm))
        assert row["f"] == FLOAT32[f]
    else:
        assert rejected == [reason] and held == []


def test_float_reads_text_straight_to_the_nearest_float():
    """1.00000017881393432617187499 lies just below the midpoint of two floats: Spark (Jackson)
    reads it to the lower one; through the nearest double (the midpoint) it would round up."""
    from qrepl.core.model import float32

    assert float32(Decimal("1.00000017881393432617187499")) == 1.0000001192092896
    assert float32(Decimal("1.000000178813934326171875")) == 1.0000002384185791  # the midpoint: ties to even
    assert float32(Decimal("3.5e38")) == float("inf") and float32(Decimal("1e-46")) == 0.0
    assert float32(Decimal("1e999999999")) == float("inf") and float32(Decimal("-1e400")) == float("-inf")
    assert float32(Decimal(2**128 - 2**103 - 1)) == 3.4028234663852886e38


@pytest.mark.parametrize(
    "type_name, value, fits",
    [
        ("tinyint", 127, True),
        ("tinyint", 128, False),
        ("tinyint", -129, False),
        ("smallint", -32768, True),
        ("smallint", 32768, False),
        ("float", Decimal("3.5e38"), False),
        ("float", Decimal("1.5"), True),
        ("float", "1.5", False),
        ("date", "2026-02-30", False),
        ("date", "2026-01-01\n", False),
        ("date", "2024-02-29", True),
    ],
)
def test_new_types_out_of_range_values_do_not_fit(type_name, value, fits):
    from qrepl.core.model import queued_value_ok

    assert queued_value_ok(value, type_name) is fits


def test_float_double_and_binary_keys_are_refused():
    for typ in ("float", "double", "binary"):
        with pytest.raises(Exception, match="key column k must be of type"):
            publication_from_dict(
                {"publication": "p", "articles": [{"name": "a", "key": ["k"], "columns": {"k": typ}}]}
            )


def test_date_key_given_as_a_date_object_has_its_canonical_key():
    """A Parquet file (or the capture API) hands a date key over as a date, not as text."""
    from datetime import date

    typed = ARTICLES["typed"]
    row = {"k_tiny": 1, "k_small": 2, "k_date": date(2026, 1, 1), "k_dec": Decimal("1.5"), "k_bool": True}
    assert canonical_key(typed, row) == '{"k_tiny":1,"k_small":2,"k_date":"2026-01-01","k_dec":1.500,"k_bool":true}'


@pytest.mark.parametrize("case", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
def test_timestamp_timestamp_ntz_binary_as_key_and_value_on_reference(reader, case):
    """Each case is applied with its canonical values (a timestamp as the instant in UTC with six
    fractional digits and Z, binary as padded base64) or quarantined for its reason: never
    rounded, truncated or nulled."""
    name, k_ts, k_ntz, ts, ntz, binary, expected_ts, reason = case
    rejected = [r["reason"] for r in reader.queue_rejects if r["tran_id"] == f"moment_{name}"]
    key = ARTICLES["moments"]
    held = reader.publisher["moments"].get(canonical_key(key, {"k_ts": json.loads(k_ts), "k_ntz": json.loads(k_ntz)}))
    if reason is None:
        assert rejected == [] and held is not None
        assert held["ts"] == expected_ts
        assert (held["k_ts"], held["k_ntz"]) == (json.loads(k_ts), json.loads(k_ntz))  # canonical keys hold as written
        assert held["ntz"] == coerce_json_value(json.loads(ntz), "timestamp_ntz") and len(held["ntz"]) == 26
        assert held["bin"] == json.loads(binary)
    else:
        assert rejected == [reason]
        if reason == "non-canonical key" or name == "seven_fraction_digits":
            assert held is None


def test_timestamp_text_is_the_instant_in_utc_with_microseconds():
    from datetime import datetime, timedelta, timezone

    from qrepl.core.model import timestamp_value, typed_row

    assert coerce_json_value("2026-01-01 12:00:00.5+05:30", "timestamp") == "2026-01-01T06:30:00.500000Z"
    assert coerce_json_value("2026-01-01T00:00:00-00:00", "timestamp") == "2026-01-01T00:00:00.000000Z"
    assert coerce_json_value("2026-01-01T12:00:00.1234567Z", "timestamp") is None  # refused, not truncated
    assert coerce_json_value("2026-01-01T12:00:00", "timestamp") is None  # an instant's text says its zone
    assert coerce_json_value("2026-01-01T12:00:00", "timestamp_ntz") == "2026-01-01T12:00:00.000000"
    assert coerce_json_value("2026-01-01T12:00:00+00:00", "timestamp_ntz") is None
    assert coerce_json_value("２０２６-01-01T12:00:00Z", "timestamp") is None  # ASCII digits only
    # Python datetimes (capture API, Spark and Parquet rows): naive is UTC for a timestamp, aware is converted
    aware = datetime(2026, 1, 1, 12, 0, 0, 1, tzinfo=timezone(timedelta(hours=-3)))
    assert coerce_json_value(aware, "timestamp") == "2026-01-01T15:00:00.000001Z"
    assert coerce_json_value(datetime(1, 1, 1), "timestamp") == "0001-01-01T00:00:00.000000Z"
    assert coerce_json_value(aware, "timestamp_ntz") is None
    assert (
        coerce_json_value(datetime(9999, 12, 31, 23, 59, 59, 999999), "timestamp_ntz") == "9999-12-31T23:59:59.999999"
    )
    assert timestamp_value(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))), "timestamp") is None  # year 0 in UTC
    moments = ARTICLES["moments"]
    typed = typed_row(
        moments,
        {
            "k_ts": "2026-01-01T01:00:00+01:00",
            "k_ntz": "2026-01-01T00:00:00",
            "ts": None,
            "ntz": None,
            "bin": ALL_BYTES,
        },
    )
    assert typed["k_ts"] == datetime(2026, 1, 1, tzinfo=timezone.utc) and typed["k_ts"].tzinfo is timezone.utc
    assert typed["k_ntz"] == datetime(2026, 1, 1) and typed["bin"] == bytes(range(256))


def test_binary_is_padded_standard_base64():
    assert coerce_json_value(bytearray(b"\x00\xff"), "binary") == "AP8="
    assert coerce_json_value(b"", "binary") == ""
    assert coerce_json_value(bytes(range(256)), "binary") == ALL_BYTES
    for bad in ("AP8", "AP9=", "-_8=", "AP8=\n", " AP8=", "AP8==", "A===", 1234, True):
        assert coerce_json_value(bad, "binary") is None, bad


def test_timestamp_keys_canonical_and_binary_refused_by_capture():
    from datetime import datetime, timezone

    moments = ARTICLES["moments"]
    key = {"k_ts": datetime(2026, 1, 1, 12, tzinfo=timezone.utc), "k_ntz": datetime(2026, 1, 1, 12, 0, 0, 5)}
    assert canonical_key(moments, key) == '{"k_ts":"2026-01-01T12:00:00.000000Z","k_ntz":"2026-01-01T12:00:00.000005"}'
    assert value_refusal(moments, {**key, "ts": "2026-01-01T00:00:00", "ntz": None, "bin": b""}).startswith(
        "moments.ts: '2026-01-01T00:00:00' does not fit timestamp (an instant: ISO-8601 with Z or an offset"
    )
    assert "does not fit binary" in value_refusal(moments, {**key, "bin": "AP8"})
    assert value_refusal(moments, {**key, "ts": datetime(2026, 1, 1), "bin": bytearray(b"x")}) is None
    image = normalize_row(moments, {**key, "ts": None, "ntz": None, "bin": b"\x00\xff"})
    assert (image["k_ts"], image["bin"]) == ("2026-01-01T12:00:00.000000Z", "AP8=")


def test_timestamp_and_binary_through_enqueue_checks(tmp_path):
    """`qrepl enqueue` JSONL: an offset is converted to UTC in the queued row, a 7th fractional
    digit, a missing zone and bad base64 are refused with one line naming the column."""
    pub = publication_from_dict(PUBLICATION)
    path = tmp_path / "changes.jsonl"
    path.write_text(
        '{"tran_id":"a","article":"moments","op":"I","row":{"k_ts":"2026-01-01T01:00:00.000001+01:00",'
        '"k_ntz":"2026-01-01 00:00:00","ts":null,"ntz":"0001-01-01T00:00:00","bin":"AP8="}}\n'
        '{"tran_id":"b","article":"moments","op":"I","row":{"k_ts":"2026-01-01T00:00:00.1234567Z",'
        '"k_ntz":"2026-01-01T00:00:00","ts":null,"ntz":null,"bin":""}}\n'
        '{"tran_id":"c","article":"moments","op":"I","row":{"k_ts":"2026-01-01T00:00:00Z",'
        '"k_ntz":"2026-01-01T00:00:00","ts":"2026-01-01T00:00:00","ntz":null,"bin":"AP8"}}\n'
    )
    records = list(read_records(path))
    assert check_record(pub, records[0][1]) is None
    assert check_record(pub, records[1][1]).startswith(
        "key column k_ts (timestamp) does not fit: '2026-01-01T00:00:00.1234567Z' (an instant: ISO-8601 with Z"
    )
    assert check_record(pub, records[2][1]).startswith(
        "wrong value type for ts (timestamp: 2026-01-01T00:00:00), bin (binary: AP8)"
    )
    row = _queue_row(pub, "s1", 0, "a", 1, 1, records[0][1], None)
    assert row["row_key"] == '{"k_ts":"2026-01-01T00:00:00.000001Z","k_ntz":"2026-01-01T00:00:00.000000"}'
    assert json.loads(row["new_row"]) == {
        "k_ts": "2026-01-01T00:00:00.000001Z",
        "k_ntz": "2026-01-01T00:00:00.000000",
        "ts": None,
        "ntz": "0001-01-01T00:00:00.000000",
        "bin": "AP8=",
    }


NON_FINITE = {
    "publication": "p",
    "articles": [
        {"name": "prices", "key": ["price_id"], "columns": {"price_id": "int", "price": "double", "ratio": "float"}}
    ],
}


@pytest.mark.parametrize(
    "column, value",
    [
        ("price", float("nan")),
        ("price", float("inf")),
        ("price", float("-inf")),
        ("price", "NaN"),
        ("ratio", float("nan")),
        ("ratio", "-Infinity"),
        ("ratio", Decimal("3.5e38")),
    ],
)
def test_capture_refuses_nan_and_infinity_in_one_line(column, value):
    # issue 57 case 8: a value the caller gives must be finite (docs/spec.md §3)
    prices = publication_from_dict(NON_FINITE).articles[0]
    refusal = value_refusal(prices, {"price_id": 1, column: value})
    assert refusal.startswith(f"prices.{column}: ") and "no NaN or Infinity" in refusal and "\n" not in refusal
    assert value_refusal(prices, {"price_id": 1, "price": 1e308, "ratio": 3.4e38}) is None


def test_enqueue_refuses_nan_and_infinity_from_a_file(tmp_path):
    # issue 57 case 8: as bare JSON tokens (Python's json reads them), or as the text the reader
    # reads for a value the publisher holds: a record is the caller's input, refused either way
    pub = publication_from_dict(NON_FINITE)
    path = tmp_path / "changes.jsonl"
    rows = [
        '{"price_id":1,"price":NaN,"ratio":0.5}',
        '{"price_id":2,"price":1.5,"ratio":-Infinity}',
        '{"price_id":3,"price":"Infinity","ratio":0.5}',
        '{"price_id":4,"price":1.5,"ratio":1e39}',
        '{"price_id":5,"price":1.5,"ratio":0.5}',
    ]
    path.write_text(
        "".join(f'{{"tran_id":"t{i}","article":"prices","op":"I","row":{r}}}\n' for i, r in enumerate(rows))
    )
    refusals = [check_record(pub, r) for _, r, _ in read_records(path)]
    assert refusals[-1] is None
    for refusal, column in zip(refusals[:-1], ["price", "ratio", "price", "ratio"]):
        assert refusal.startswith(f"wrong value type for {column} (") and "no NaN or Infinity" in refusal, refusal


def test_a_non_finite_value_is_read_only_as_the_text_spark_writes():
    # a value the publisher can hold: every row image spells it as Spark's to_json does
    import math

    from qrepl.core.model import dumps, queued_value_ok

    prices = publication_from_dict(NON_FINITE).articles[0]
    image = normalize_row(prices, {"price_id": 1, "price": float("nan"), "ratio": float("-inf")})
    assert dumps(image) == '{"price_id":1,"price":"NaN","ratio":"-Infinity","msrepl_tran_version":null}'
    assert math.isnan(coerce_json_value("NaN", "double")) and coerce_json_value("Infinity", "float") == math.inf
    assert normalize_row(prices, json.loads(dumps(image))) == image  # NaN rows compare equal
    assert [queued_value_ok(v, "double") for v in ("NaN", "Infinity", "-Infinity")] == [True] * 3
    assert [queued_value_ok(v, "double") for v in ("nan", "+INF", "inf", float("nan"), "1.5")] == [False] * 5
