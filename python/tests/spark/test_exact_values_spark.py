"""Exact values through the real pipeline (docs/spec.md §3): the exact-values catalogue is
appended straight to `replication_queue`, the queue reader runs once through dbt, and the
publisher and queue_rejects equal the reference's: decimals of up to 38 digits held to the last
digit, values that would need rounding or do not fit quarantined; string keys with control
characters (and the rest of the catalogue's strings) applied, not quarantined as non-canonical.
And Python's canonical key text equals Spark's to_json for a table of strings, in one query."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from exact_values_catalogue import (
    ARTICLES,
    BATCH_TIME,
    DECIMAL_CASES,
    KEY_STRINGS,
    LONG38,
    MAX38,
    MOMENT_CASES,
    NEAR_FLOAT,
    PUBLICATION,
    SUBSCRIBERS,
    TYPED_CASES,
    expected_decimal,
    queue_rows,
)
from qrepl.core.model import canonical_key
from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, scenario_from_dict

pytestmark = pytest.mark.spark
SCHEMA = "qrepl_exact"


def _load(backend) -> dict:
    backend.enqueue(queue_rows())
    backend.run(BATCH_TIME)
    return backend.outputs()


@pytest.fixture(scope="module")
def both(spark):
    scenario = scenario_from_dict({**PUBLICATION, "subscribers": SUBSCRIBERS, "steps": []}, "exact")
    expected = _load(ReferenceBackend(scenario))
    actual = _load(SparkBackend(scenario, SCHEMA))
    return scenario, expected, actual


def _rejects(outputs: dict) -> list[tuple]:
    return sorted((r["tran_id"], r["reason"]) for r in outputs["queue_rejects"])


def test_spark_quarantines_the_same_values_as_the_reference(both):
    _, expected, actual = both
    assert _rejects(actual) == _rejects(expected)
    assert len(_rejects(actual)) == sum(
        1 for cases in (DECIMAL_CASES, TYPED_CASES, MOMENT_CASES) for c in cases if c[-1]
    )


def test_spark_publisher_equals_the_reference_to_the_last_digit(both):
    scenario, expected, actual = both
    assert normalized_outputs(scenario, actual) == normalized_outputs(scenario, expected)


@pytest.mark.parametrize("case, d18, d38, d12, reason", DECIMAL_CASES, ids=[c[0] for c in DECIMAL_CASES])
def test_decimal_case_on_spark(both, case, d18, d38, d12, reason):
    _, _, actual = both
    n = [c[0] for c in DECIMAL_CASES].index(case) + 1
    rows = {r["amount_id"]: r for r in actual["publisher"]["amounts"]}
    rejected = [r["reason"] for r in actual["queue_rejects"] if r["tran_id"] == f"dec_{case}"]
    if reason is None:
        assert rejected == []
        assert [Decimal(rows[n][c]) for c in ("d18", "d38", "d12")] == [expected_decimal(v) for v in (d18, d38, d12)]
    else:
        assert rejected == [reason] and n not in rows


def test_decimal_38_digits_exact_through_reader(both):
    _, _, actual = both
    held = {Decimal(r["d38"]) for r in actual["publisher"]["amounts"]} | {
        Decimal(r["d18"]) for r in actual["publisher"]["amounts"]
    }
    assert {Decimal(MAX38), Decimal(LONG38), Decimal("-" + LONG38), Decimal(NEAR_FLOAT)} <= held


def test_control_character_keys_match_spark(both):
    _, _, actual = both
    assert [r for r in actual["queue_rejects"] if r["tran_id"].startswith("key_")] == []
    assert sorted(r["tag"] for r in actual["publisher"]["tags"]) == sorted(KEY_STRINGS)


def _strings() -> list[str]:
    points = [cp for cp in range(0, 0x3000) if not 0xD800 <= cp <= 0xDFFF]
    for plane in range(0, 0x11):
        base = plane << 16
        points += [p for p in (base, base + 0x3FF, base + 0x400, base + 0xFFFF) if not 0xD800 <= p <= 0xDFFF]
    return [chr(cp) for cp in points] + KEY_STRINGS + ["".join(chr(c) for c in range(0x80)), "\\u001f\\\x1f\\\\\x0b"]


def test_python_canonical_key_text_equals_spark_to_json(spark):
    """One query: to_json over every string of the table, against Python's canonical key."""
    strings = _strings()
    df = spark.createDataFrame(list(enumerate(strings)), "n INT, tag STRING")
    spark_text = dict(df.selectExpr("n", "to_json(named_struct('tag', tag, 'note', tag)) as k").collect())
    pairs = ARTICLES["tags"].__class__("pairs", ("tag", "note"), {"tag": "string", "note": "string"})
    differ = [
        (hex(ord(s[0])) if s else "", spark_text[n])
        for n, s in enumerate(strings)
        if canonical_key(pairs, {"tag": s, "note": s}) != spark_text[n]
    ]
    assert len(spark_text) == len(strings) > 0x3000 and differ == []


@pytest.mark.parametrize("case", TYPED_CASES, ids=[c[0] for c in TYPED_CASES])
def test_tinyint_smallint_float_date_decimal_boolean_as_key_and_value(both, case):
    """Spark holds what the reference holds for each case, or quarantines it for the same reason."""
    _, expected, actual = both
    name, k_tiny, k_small, *_ = case
    for outputs in (expected, actual):
        outputs["_typed"] = sorted(
            (
                r["k_tiny"],
                r["k_small"],
                str(r["k_date"]),
                Decimal(str(r["k_dec"])),
                r["k_bool"],
                r["t"],
                r["sm"],
                r["f"],
            )
            for r in (
                outputs["publisher"]["typed"].values()
                if isinstance(outputs["publisher"]["typed"], dict)
                else outputs["publisher"]["typed"]
            )
            if r["k_tiny"] == int(k_tiny) and r["k_small"] == int(k_small)
        )
        outputs["_why"] = [r["reason"] for r in outputs["queue_rejects"] if r["tran_id"] == f"typed_{name}"]
    assert actual["_typed"] == expected["_typed"] and actual["_why"] == expected["_why"]
    assert len(actual["_typed"]) + len(actual["_why"]) == 1


@pytest.mark.parametrize("case", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
def test_timestamp_timestamp_ntz_binary_as_key_and_value(both, case):
    """Spark holds the reference's canonical values to the microsecond and the byte (read back
    from the table and normalized), or quarantines the case for the same reason."""
    scenario, expected, actual = both
    name = case[0]
    key = canonical_key(ARTICLES["moments"], {"k_ts": json.loads(case[1]), "k_ntz": json.loads(case[2])})
    held = {}
    for side, outputs in (("expected", expected), ("actual", actual)):
        rows = normalized_outputs(scenario, outputs)["publisher/moments"]
        held[side] = (
            [r for r in rows if canonical_key(ARTICLES["moments"], r) == key and r["k_ts"] == json.loads(case[1])],
            [r["reason"] for r in outputs["queue_rejects"] if r["tran_id"] == f"moment_{name}"],
        )
    assert held["actual"] == held["expected"]
    if case[-1] is None:
        assert held["actual"][0][0]["ts"] == case[-2]


def test_timestamp_row_images_keep_microseconds(both):
    """Row images Spark writes (publisher_changes' rows, through to_json) carry six fractional
    digits and Z, as the reference's."""
    _, _, actual = both
    moments = [r for r in actual["publisher"]["moments"] if r["ts"] == "2026-03-01T12:00:00.000001Z"]
    assert len(moments) == 1 and moments[0]["k_ts"] == "2026-03-01T12:00:00.123456Z"


def test_python_canonical_timestamp_key_text_equals_spark_to_json(spark):
    """One query: to_json (with the options every article value is written with) of timestamp
    and timestamp_ntz keys at the edges (years 0001 and 9999, every microsecond digit, before
    1970, leap days) against Python's canonical key."""
    from datetime import datetime, timedelta, timezone

    from pyspark.sql import functions as F

    from qrepl.core.model import Article
    from qrepl.storage.warehouse import JSON_OPTIONS

    walls = [
        datetime(1, 1, 1),
        datetime(9999, 12, 31, 23, 59, 59, 999999),
        datetime(1969, 12, 31, 23, 59, 59, 999999),
        datetime(1970, 1, 1),
        datetime(2024, 2, 29, 12),
        datetime(1900, 2, 28, 23, 59, 59, 1),
    ]
    walls += [datetime(2026, 3, 29, 2, 30) + timedelta(microseconds=10**p, days=37 * p) for p in range(7)]
    walls += [
        datetime(1, 1, 1)
        + timedelta(days=n * 73019 % 3652058, seconds=n * 7919 % 86400, microseconds=n * 12347 % 10**6)
        for n in range(200)
    ]
    df = spark.createDataFrame(
        [(n, w.replace(tzinfo=timezone.utc), w) for n, w in enumerate(walls)], "n INT, t TIMESTAMP, w TIMESTAMP_NTZ"
    )
    spark_text = dict(df.select("n", F.to_json(F.struct("t", "w"), JSON_OPTIONS)).collect())
    moments = Article("m", ("t", "w"), {"t": "timestamp", "w": "timestamp_ntz"})
    differ = [
        (w, spark_text[n])
        for n, w in enumerate(walls)
        if canonical_key(moments, {"t": w.replace(tzinfo=timezone.utc), "w": w}) != spark_text[n]
    ]
    assert len(spark_text) == len(walls) and differ == []
