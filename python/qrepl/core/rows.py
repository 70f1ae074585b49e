"""An article's rows: the canonical text of a row's key, a row typed for Spark, a row as
replay writes it, and why the capture API refuses a row's values."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from . import non_finite
from .publication import Article
from .values import (
    TIMESTAMP_TYPES,
    binary_value,
    coerce_json_value,
    decimal_text,
    fit_hint,
    jackson_text,
    timestamp_value,
)


def canonical_key(article: Article, row: dict[str, Any]) -> str | None:
    """Canonical text of a row's key: compact JSON of the key columns in key order.

    Spark's `to_json(named_struct(...))` over the typed key columns yields the same text
    (the dbt macro `row_key_expr`); None when a key column is missing or mistyped.
    """
    parts = []
    for k in article.key:
        v = coerce_json_value(row.get(k), article.columns[k])
        if v is None:
            return None
        # a decimal as Java's BigDecimal.toString writes it (Python's str follows the same
        # rule: plain unless the exponent is positive or the value is below 1E-6: 0E-8, 1E-7)
        text = str(v) if isinstance(v, Decimal) else json.dumps(v, ensure_ascii=False)
        parts.append(f'"{k}":{text}')
    return jackson_text("{" + ",".join(parts) + "}")


def value_refusal(article: Article, row: dict[str, Any]) -> str | None:
    """Why the capture API refuses a row's values (None when every given value fits its column):
    a value is never rounded or turned into NULL on its way to the queue."""
    for col, v in row.items():
        typ = article.columns.get(col)
        if typ is None or v is None:
            continue
        value = coerce_json_value(v, typ)
        if value is None:
            hint = " exactly (never rounded)" if typ.startswith("decimal") else ""
            return f"{article.name}.{col}: {v!r} does not fit {typ}{hint}{fit_hint(typ)}"
        refusal = non_finite.refusal(f"{article.name}.{col}", v, value, typ) if typ in ("double", "float") else None
        if refusal:
            return refusal
    return None


def typed_row(article: Article, row: dict[str, Any]) -> dict[str, Any]:
    """A row with Python values Spark accepts for the article's column types."""
    out: dict[str, Any] = {}
    for col, typ in article.columns.items():
        v = row.get(col)
        if (isinstance(v, (date, Decimal)) and not isinstance(v, datetime)) or (typ == "date" and v is None):
            out[col] = v
            continue
        if typ in TIMESTAMP_TYPES:
            out[col] = timestamp_value(v, typ)  # aware in UTC, or naive for timestamp_ntz: Spark's toInternal
            continue
        if typ == "binary":
            out[col] = binary_value(v)
            continue
        v = coerce_json_value(v, typ)
        out[col] = date.fromisoformat(v) if (typ == "date" and v is not None) else v
    out["msrepl_tran_version"] = row.get("msrepl_tran_version")
    return out


def normalize_row(article: Article, row: dict[str, Any] | None) -> dict[str, Any] | None:
    """A row as replay writes it: every article column typed, plus msrepl_tran_version."""
    if row is None:
        return None
    out: dict[str, Any] = {}
    for col, typ in article.columns.items():
        v = coerce_json_value(row.get(col), typ)
        out[col] = decimal_text(v) if isinstance(v, Decimal) else v
    out["msrepl_tran_version"] = row.get("msrepl_tran_version")
    return out
