"""Non-finite float and double values (docs/spec.md §3): NaN, Infinity and -Infinity.

A publisher row can hold one (a job's plain SQL: `set price = double('NaN')`), and Spark's
to_json writes it as a JSON string: "NaN", "Infinity", "-Infinity". Every row image qrepl
writes spells it the same way (capture's new_row and old_row, conflicts, compensating
commands), and the queue reader reads exactly these three strings in a float or double column
as the value they name; no other text does (bare NaN tokens are not JSON, "nan" or "+INF" do
not fit). What a caller gives (the capture API, `qrepl enqueue`, an immediate commit) must be
finite: a non-finite value is refused there; one the row already holds is carried unchanged."""

from __future__ import annotations

import math
from typing import Any

# Spark's to_json spelling of each non-finite value, and back
SPELLING = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def spelled(value: Any) -> Any:
    """A value as a row image writes it: a non-finite float as its Spark spelling."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def canonical(value: float) -> float:
    """The one NaN object for every NaN, so rows holding NaN compare equal (Python compares
    container items by identity first); any other float as it is."""
    return math.nan if math.isnan(value) else value


def refusal(table_column: str, given: Any, value: float, type_name: str) -> str | None:
    """The capture API's line for a non-finite value a caller gave, or None when it is finite."""
    if math.isfinite(value):
        return None
    beyond = ", nothing beyond ±3.4028235e38" if type_name == "float" else ""
    return f"{table_column}: {given!r} does not fit {type_name} (a finite number: no NaN or Infinity{beyond})"
