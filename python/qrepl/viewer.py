"""Static HTML viewer for detected queued-updating conflicts.

`render_viewer` writes one self-contained ``index.html``: the conflict list is
embedded as JSON and all CSS/JS is inline, so the file can be opened straight
from disk (file://), attached to a ticket or published as a CI artifact with
no server and no network access.

The page is package data in ``viewer_assets/``: ``index.html.j2`` (Jinja2),
``viewer.css`` and ``viewer.js`` (linted by eslint: ``make lint-js``), inlined
at render time. The charts are hand-drawn SVG (about 80 lines of viewer.js):
an inlined chart library would add 200 kB or more to every file and draw on a
canvas, where the browser tests can no longer read each bar's day and
category.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import json
import math
import pathlib
import uuid
from collections.abc import Mapping
from importlib.resources import files
from typing import Any

import jinja2
from markupsafe import Markup

from .model import CONFLICT_CODES

__all__ = ["render_viewer"]

INDEX_FILE = "index.html"
ASSETS = files("qrepl") / "viewer_assets"
# One colour per conflict type, in the order of qrepl.model.CONFLICT_CODES (SQL Server's codes).
TYPE_COLORS = dict(zip(CONFLICT_CODES, ["#e8590c", "#1c7ed6", "#d6336c", "#7048e8", "#37b24d"], strict=True))


def render_viewer(
    conflicts: list[dict], out_dir: pathlib.Path, title: str = "qrepl conflicts",
    immediate: list[dict] | None = None,
) -> pathlib.Path:
    """Write ``out_dir/index.html`` showing ``conflicts`` and return its path. ``immediate``:
    per subscriber, its immediate transactions and how many the publisher rejected."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    page = _template().render(
        title=title,  # autoescaped
        immediate=[{**s, "rate": f"{s['rejected_rate']:.0%}"} for s in immediate or []],
        data_json=Markup(embed_json([_jsonable(c) for c in conflicts])),
        types_json=Markup(embed_json(TYPE_COLORS)),
        css=Markup(_asset("viewer.css")),
        js=Markup(_asset("viewer.js")),
    )
    path = out_dir / INDEX_FILE
    # Explicit newline/encoding so the artifact is byte-identical across OSes.
    path.write_text(page, encoding="utf-8", newline="\n")
    return path


def embed_json(value: Any) -> str:
    """Serialise ``value`` as JSON that is safe inside a ``<script>`` element.

    The HTML tokenizer ends a script element at the first ``</script`` and
    treats ``<!--`` specially, whatever the script type; escaping ``<``, ``>``
    and ``&`` as JSON unicode escapes makes that impossible while the text
    still parses to the identical value with ``JSON.parse``/``json.loads``.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        # Not needed for JSON.parse, but keeps the file safe to copy into JS.
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _jsonable(value: Any) -> Any:
    """Convert values coming from Spark/pandas rows into plain JSON types.

    Rows judged by the models can carry datetimes, decimals, binary
    rowversions or NaN; JSON.parse in the page must never see invalid JSON.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        # NaN/Infinity are not JSON; keep them visible instead of dropping them.
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        # SQL Server shows binary/rowversion values as 0x-prefixed hex.
        raw = bytes(value)
        return (
            "0x" + raw.hex().upper()
            if len(raw) <= 1024
            else base64.b64encode(raw).decode()
        )
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "asDict"):  # pyspark.sql.Row, without importing pyspark
        return _jsonable(value.asDict(recursive=True))
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    return str(value)


def _template() -> jinja2.Template:
    env = jinja2.Environment(autoescape=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_asset("index.html.j2"))


def _asset(name: str) -> str:
    text = (ASSETS / name).read_text(encoding="utf-8")
    if name != "index.html.j2" and ("</script" in text.lower() or "</style" in text.lower()):
        raise ValueError(f"viewer_assets/{name} would end its inline element early")
    return text
