"""Typed values: the supported column types, the text each value travels as in a queued row
(regular expressions), and their coercion, exact and never rounded: JSON, decimal,
timestamp, binary, float32, and Jackson's escaping of JSON text (docs/spec.md §3)."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from datetime import date, datetime, timedelta, timezone
from decimal import Context, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from . import non_finite
from .vocabulary import ConfigError

# Key columns: any supported type but float, double and binary; a decimal key is written in the
# canonical key as a JSON number, as Spark's to_json writes it.
KEY_TYPES = ("tinyint", "smallint", "int", "bigint", "string", "boolean", "date", "timestamp", "timestamp_ntz")
SCALAR_TYPES = (
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "string",
    "float",
    "double",
    "boolean",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
)
TIMESTAMP_TYPES = ("timestamp", "timestamp_ntz")
INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
DECIMAL_TYPE = re.compile(r"^decimal\((\d+),\s*(\d+)\)\Z")

# What the queue reader accepts (the dbt macro `queued_rows_typed_sql` spells the same rules).
MAX_ROW_BYTES = 65536  # a queued new_row larger than this (UTF-8 bytes) is quarantined
# A queued row_key larger than this is quarantined. An I or U command's key is part of its
# new_row, so MAX_ROW_BYTES bounds it already; a D command carries only its key, bounded here alike.
MAX_KEY_BYTES = MAX_ROW_BYTES
UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
DATE_TEXT = re.compile(r"^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
# A timestamp's text in a queued row (docs/spec.md §3): ISO-8601 date and time ('T' or a space
# between), seconds required, 0 to 6 fractional digits (a 7th is refused, never truncated), and
# for a `timestamp` (an instant) a zone: `Z` or an offset of at most 18:00 (Java's ZoneOffset
# range); a `timestamp_ntz` (a wall-clock reading) takes no zone at all. Digits are ASCII only.
# The dbt macro `_timestamp_pattern` spells the same patterns.
_WALL_CLOCK = (
    r"(?!0000)([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])"
    r"(?:\.([0-9]{1,6}))?"
)
TIMESTAMP_TEXT = re.compile(_WALL_CLOCK + r"(Z|[+-](?:(?:0[0-9]|1[0-7]):[0-5][0-9]|18:00))\Z")
TIMESTAMP_NTZ_TEXT = re.compile(_WALL_CLOCK + r"\Z")
# A binary value's text: standard base64 (RFC 4648 alphabet A-Z a-z 0-9 + /), padded with '=' to
# a multiple of 4, no line breaks or spaces, and canonical (the unused bits of the last character
# zero), so each text stands for one byte string and reads back as itself. The dbt macro
# `_base64_pattern` spells the same pattern.
BASE64_TEXT = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?\Z")
# A decimal's text (a JSON string's content, or a JSON number as written): digits, an optional
# fraction and an optional exponent of at most 9 digits. The dbt macro `_decimal_fits` spells
# the same rule.
DECIMAL_TEXT = re.compile(r"-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]{1,9}))?")
# Decimal arithmetic (quantize) with room for 38 digits on either side of the point: Python's
# default context keeps 28 digits and would round or fail on a decimal(38,s) value.
DECIMAL_CONTEXT = Context(prec=100, Emax=999_999_999, Emin=-999_999_999)


def check_type(type_name: Any, column: str) -> str:
    if not isinstance(type_name, str):
        raise ConfigError(f"column {column}: type must be a string, got {type_name!r}")
    t = type_name.strip().lower()
    if t in SCALAR_TYPES or DECIMAL_TYPE.match(t):
        return t
    raise ConfigError(f"column {column}: unsupported type {type_name!r} (use {', '.join(SCALAR_TYPES)}, decimal(p,s))")


# ---------------------------------------------------------------------------------------------
# Typed values. `coerce_json_value` mirrors Spark's from_json for the supported types: a value of
# the wrong JSON type becomes None (what from_json yields for that field).


def coerce_json_value(value: Any, type_name: str) -> Any:
    if value is None:
        return None
    if type_name in INTEGER_BITS:
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        limit = 2 ** (INTEGER_BITS[type_name] - 1)
        return value if -limit <= value < limit else None
    if type_name == "string":
        # Spark's from_json reads a JSON scalar into a string column as its text
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, Decimal):
            value = float(value)
        return json.dumps(value, separators=(",", ":")) if isinstance(value, (int, float)) else None
    if type_name in ("double", "float"):
        if isinstance(value, str) and value in non_finite.SPELLING:  # a non-finite value as row images spell it
            return non_finite.SPELLING[value]
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            return None
        return non_finite.canonical(float(value) if type_name == "double" else float32(value))
    if type_name == "boolean":
        return value if isinstance(value, bool) else None
    if type_name == "date":
        if isinstance(value, date) and not isinstance(value, datetime):
            value = value.isoformat()  # a Parquet or Spark date, a date given to the capture API
        if not (isinstance(value, str) and DATE_TEXT.match(value)):
            return None
        try:
            date.fromisoformat(value)
        except ValueError:
            return None  # 2026-02-30 is no day: Spark's cast yields NULL
        return value
    if type_name in TIMESTAMP_TYPES:
        moment = timestamp_value(value, type_name)
        return None if moment is None else timestamp_text(moment, type_name)
    if type_name == "binary":
        data = binary_value(value)
        return None if data is None else base64.b64encode(data).decode("ascii")
    m = DECIMAL_TYPE.match(type_name)
    if m:
        return decimal_value(value, int(m.group(1)), int(m.group(2)))
    raise ConfigError(f"unsupported type {type_name}")


def timestamp_value(value: Any, type_name: str) -> datetime | None:
    """The datetime a queued value stands for in a `timestamp` column (an aware datetime in UTC)
    or a `timestamp_ntz` column (a naive one), or None when it does not fit: never rounded.

    Text follows TIMESTAMP_TEXT / TIMESTAMP_NTZ_TEXT: a `timestamp` text without a zone is
    refused (an instant's text says its zone), one with an offset is converted to UTC; a
    `timestamp_ntz` text with a zone or offset is refused. A Python datetime (the capture API,
    a Spark or Parquet row): for a `timestamp`, an aware one is converted to UTC and a naive one
    is taken as UTC (Spark's session zone, in which Spark hands timestamps to Python); for a
    `timestamp_ntz` only a naive one fits. An instant outside years 0001..9999 in UTC does not
    fit (Spark could hold it, Python and the canonical text cannot)."""
    ntz = type_name == "timestamp_ntz"
    try:
        if isinstance(value, datetime):
            if ntz:
                return value if value.tzinfo is None else None
            return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
        if not isinstance(value, str):
            return None
        m = (TIMESTAMP_NTZ_TEXT if ntz else TIMESTAMP_TEXT).match(value)
        if not m:
            return None
        year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
        micro = int((m.group(7) or "").ljust(6, "0"))
        wall = datetime(year, month, day, hour, minute, second, micro)  # ValueError: no such day
        if ntz:
            return wall
        zone = m.group(8)
        offset = (
            timedelta(0)
            if zone == "Z"
            else (1 if zone[0] == "+" else -1) * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        )
        return (wall - offset).replace(tzinfo=timezone.utc)  # OverflowError: beyond 0001..9999 in UTC
    except (ValueError, OverflowError):
        return None


def timestamp_text(moment: datetime, type_name: str) -> str:
    """The canonical text of a timestamp_value: six fractional digits always, and for a
    `timestamp` the instant in UTC with `Z` (`2026-01-01T12:00:00.000000Z`); what the dbt macros
    write through to_json's timestampFormat (docs/stack.md 35)."""
    if type_name == "timestamp_ntz":
        return moment.isoformat(timespec="microseconds")
    return moment.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def stamp_text(at: datetime) -> str:
    """A commit time as a stamped column holds it: a `timestamp`; a naive time is UTC."""
    return timestamp_text(at if at.tzinfo else at.replace(tzinfo=timezone.utc), "timestamp")


def binary_value(value: Any) -> bytes | None:
    """The bytes a queued value stands for in a `binary` column: bytes as they are (a Spark or
    Parquet row, the capture API), text only as canonical base64 (BASE64_TEXT); None otherwise."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if not (isinstance(value, str) and BASE64_TEXT.match(value)):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def decimal_fits(digits: str, exponent: int, precision: int, scale: int) -> bool:
    """Whether the number digits * 10**exponent fits decimal(precision, scale) exactly: at most
    `scale` fractional digits once trailing zeros are dropped (1.50 fits decimal(12,1): the zero
    is exact; 1.05 does not: it would need rounding) and at most precision - scale digits before
    the point. Pure digit counting, so no context or float can round it."""
    significant = digits.lstrip("0")
    if not significant:
        return True  # zero, however written
    trimmed = significant.rstrip("0")
    point = -exponent - (len(significant) - len(trimmed))  # fractional digits the value needs
    return max(0, point) <= scale and len(trimmed) - point <= precision - scale


def decimal_value(value: Any, precision: int, scale: int) -> Decimal | None:
    """The exact Decimal of a queued value for decimal(precision, scale) at that scale, or None
    when it is not a decimal's text or number or does not fit exactly (never rounded).

    A JSON string holds the text (DECIMAL_TEXT); a JSON number arrives as an int or an exact
    Decimal (parse_json_object reads numbers with parse_float=Decimal)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        m = DECIMAL_TEXT.fullmatch(value)
        if not m:
            return None
        digits, exponent = m.group(1) + (m.group(2) or ""), int(m.group(3) or 0) - len(m.group(2) or "")
        number = Decimal(value)
    elif isinstance(value, (int, float, Decimal)):
        # a Python float (the capture API, a Parquet double) counts as the shortest text that
        # reads back as it, what its writer typed; JSON numbers never arrive as floats
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not number.is_finite():
            return None
        t = number.as_tuple()
        digits, exponent = "".join(map(str, t.digits)), int(t.exponent)
        if abs(exponent) >= 10**9:
            return None
    else:
        return None
    if not decimal_fits(digits, exponent, precision, scale):
        return None
    try:
        return number.quantize(Decimal(1).scaleb(-scale), context=DECIMAL_CONTEXT)
    except InvalidOperation:
        return None


def decimal_text(value: Decimal) -> str:
    """A Decimal as plain text (never exponent notation): 0.00000000, not 0E-8."""
    return format(value, "f")


# The largest float plus half its last unit: at and beyond it a number rounds to infinity.
_FLOAT32_OVERFLOW = Decimal(2**128 - 2**103)
# Below a tenth of the smallest float (2**-149, about 1.4e-45) a number rounds to zero.
_FLOAT32_UNDERFLOW = Decimal("1e-46")


def float32(value: int | float | Decimal) -> float:
    """The 32-bit float nearest to a number, ties to even, as a Python float: what Spark reads
    from a JSON number into a FLOAT column (Jackson parses the text straight to a float; going
    through the nearest double first could round twice). Beyond the largest float: +-inf."""
    exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not exact.is_finite():
        return float(exact)
    if exact.copy_abs() >= _FLOAT32_OVERFLOW:
        return math.copysign(math.inf, exact)
    if exact.copy_abs() < _FLOAT32_UNDERFLOW:
        return math.copysign(0.0, exact)
    try:
        guess = struct.unpack("<I", struct.pack("<f", float(exact)))[0]
    except OverflowError:  # just below the overflow point, the nearest double rounds up to it
        guess = 0x7F7FFFFF | (0x80000000 if exact < 0 else 0)
    candidates = [b for b in (guess - 1, guess, guess + 1) if 0 <= b < 2**32]
    values = [(b, struct.unpack("<f", struct.pack("<I", b))[0]) for b in candidates]
    values = [(b, v) for b, v in values if math.isfinite(v)]
    target = Fraction(exact)  # exact arithmetic: no decimal context can round the distances
    best = min(values, key=lambda bv: (abs(Fraction(bv[1]) - target), bv[0] & 1))
    return best[1]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicate_fields(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a field appears twice")
    return out


def parse_json_object(text: Any) -> dict | None:
    """A queued JSON object, strictly: None unless `text` is one JSON object (no NaN, no field twice,
    nothing after it)."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_fields, parse_float=Decimal
        )
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def queued_value_ok(value: Any, type_name: str) -> bool:
    """Whether a queued JSON value fits an article column of `type_name` (JSON null always fits).

    Strict where Spark's from_json is lenient or silently yields NULL: a string column takes
    only JSON strings, a double only finite numbers, a date only 'YYYY-MM-DD' of a real day, a
    decimal a number or a plain numeric string that fits its precision.
    """
    if value is None:
        return True
    if isinstance(value, (dict, list)):
        return False
    if type_name == "string":
        return isinstance(value, str)
    if type_name in ("double", "float"):
        if isinstance(value, str):
            return value in non_finite.SPELLING  # a value the publisher can hold, as Spark's to_json spells it
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            return False
        try:
            return math.isfinite(coerce_json_value(value, type_name))
        except OverflowError:
            return False
    if type_name == "date":
        if isinstance(value, date) and not isinstance(value, datetime):
            value = value.isoformat()  # a Parquet or Spark date, a date given to the capture API
        if not (isinstance(value, str) and DATE_TEXT.match(value)):
            return False
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return True
    return coerce_json_value(value, type_name) is not None


# Python's json and Spark's to_json (Jackson) escape the same characters: '"', '\\', the short
# escapes \b \f \n \r \t and every other code point below 0x20 as \u00XX; everything else
# (0x7F, U+2028/U+2029, characters outside the BMP, '/') is written as itself. The one
# difference: Jackson writes the hex digits upper case (\u001F), Python lower case (\u001f).
# Measured on Spark 3.5 for every code point 0..0x7F and samples above (docs/spec.md §3).
_PYTHON_ESCAPE = re.compile(r"\\(\\|u00[0-9a-f]{2})")


def jackson_text(text: str) -> str:
    r"""JSON text written by Python's json (ensure_ascii=False) as Spark's to_json writes it: the
    \u00XX escapes of control characters with upper-case hex digits (an escaped backslash
    before a 'u' is left alone)."""
    if "\\u00" not in text:
        return text
    return _PYTHON_ESCAPE.sub(lambda m: m.group(0) if m.group(1) == "\\" else "\\u00" + m.group(1)[3:].upper(), text)


def fit_hint(type_name: str) -> str:
    """What a value of a timestamp or binary column must look like (docs/spec.md §3), for a
    refusal's one line; empty for other types."""
    return {
        "timestamp": " (an instant: ISO-8601 with Z or an offset of at most 18:00, at most 6 fractional digits, "
        "years 0001..9999 in UTC; never truncated)",
        "timestamp_ntz": " (a wall-clock value: ISO-8601 without zone or offset, at most 6 fractional digits)",
        "binary": " (padded standard base64, alphabet A-Z a-z 0-9 + /)",
    }.get(type_name, "")


def dumps(obj: Any) -> str:
    """Compact, deterministic JSON used for row images in the queue."""
    if isinstance(obj, dict):  # a row image: a non-finite value as Spark's to_json spells it
        obj = {k: non_finite.spelled(v) for k, v in obj.items()}
    return jackson_text(json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=False, default=str))
