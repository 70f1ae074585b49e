"""Static HTML viewer for detected queued-updating conflicts.

`render_viewer` / `write_viewer` write ``index.html``; all CSS/JS is inline, so the page opens
straight from disk (file://), with no server and no network access.

A conflict log can hold 100k conflicts, so the page does not embed them all (docs/conflicts.md):

* **groups**: the count of conflicts per (detected_at, publication, article, subscriber,
  partition, type, policy, winner, ...), computed by the caller (Spark's groupBy for `qrepl viewer`). The
  counts, the filters and the charts read only these, so they count every conflict.
* **rows**, in the viewer's order (newest first, then by group, then conflict_id), so each
  group's conflicts are one run of positions: a filter selects groups, and the positions it
  reaches follow from the groups' counts with no per-conflict index. Rows travel in chunks of
  ``CHUNK_ROWS``: the first chunk is inline (a small log is one self-contained file), the rest
  are side files ``viewer-data-<token>/chunk-<n>.js`` next to the page, loaded per table page.
  ``ids.js`` there lists every conflict_id, loaded only when a link names a conflict the page
  has not loaded.

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
import fcntl
import json
import math
import os
import pathlib
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Mapping
from importlib.resources import files
from typing import Any

import jinja2
from markupsafe import Markup

from ..core.vocabulary import CONFLICT_CODES

__all__ = ["render_viewer", "write_viewer", "GROUP_FIELDS", "ROW_FIELDS", "VIEWER_ORDER"]

INDEX_FILE = "index.html"
LOCK_FILE = ".qrepl-viewer.lock"
DATA_PREFIX = "viewer-data-"
CHUNK_ROWS = 500
ASSETS = files("qrepl.services") / "viewer_assets"
# One colour per conflict type, in the order of qrepl.core.vocabulary.CONFLICT_CODES (SQL Server's codes).
TYPE_COLORS = dict(zip(CONFLICT_CODES, ["#e8590c", "#1c7ed6", "#d6336c", "#7048e8", "#37b24d"], strict=True))
# What a group of conflicts shares (the page's filters, charts and table columns read these).
GROUP_FIELDS = (
    "detected_at",
    "publication",
    "article",
    "subscriber",
    "partition",
    "conflict_type",
    "conflict_type_code",
    "reason_text",
    "policy",
    "winner",
)
# What each conflict has of its own (the table's other columns and the detail).
ROW_FIELDS = (
    "conflict_id",
    "batch_id",
    "row_key",
    "tran_id",
    "command_seq",
    "publisher_row",
    "subscriber_row",
    "publisher_version",
    "old_version",
    "new_version",
    "review",
)
# The rows' order: newest first, each group's conflicts together, then by conflict_id.
# (field, descending); every GROUP_FIELD is in it, so a group is one run of rows.
VIEWER_ORDER = (("detected_at", True), *((f, False) for f in GROUP_FIELDS[1:]), ("conflict_id", False))


def render_viewer(
    conflicts: list[dict],
    out_dir: pathlib.Path,
    title: str = "qrepl conflicts",
    immediate: list[dict] | None = None,
) -> pathlib.Path:
    """Write ``out_dir/index.html`` showing ``conflicts`` (dicts as qrepl.services.conflicts.list_conflicts
    returns) and return its path. ``immediate``: per subscriber, its immediate transactions and
    how many the publisher rejected. A log too large to hold in memory goes through
    `write_viewer` (qrepl.services.conflicts.write_conflict_viewer does, with Spark's aggregates)."""
    rows = sorted((_jsonable(c) for c in conflicts), key=_order_key)
    groups: list[dict] = []
    for r in rows:
        if groups and all(groups[-1][f] == r.get(f) for f in GROUP_FIELDS):
            groups[-1]["count"] += 1
        else:
            groups.append({**{f: r.get(f) for f in GROUP_FIELDS}, "count": 1})
    return write_viewer(groups, rows, out_dir, title, immediate)


def _order_key(row: dict) -> tuple:
    # None sorts first ascending and last descending, as Spark's default null ordering does.
    key = []
    for field, descending in VIEWER_ORDER:
        v = row.get(field)
        text = "" if v is None else str(v)
        if descending:  # the reversed text; a prefix sorts after what it prefixes
            key.append((v is None, (*(-ord(ch) for ch in text), 1)))
        else:
            key.append((v is not None, text))
    return tuple(key)


def write_viewer(
    groups: list[dict],
    rows: Iterable[dict],
    out_dir: pathlib.Path,
    title: str = "qrepl conflicts",
    immediate: list[dict] | None = None,
) -> pathlib.Path:
    """Write the viewer from ``groups`` (each GROUP_FIELDS value and ``count``, in VIEWER_ORDER)
    and ``rows`` (each conflict with GROUP_FIELDS and ROW_FIELDS, in VIEWER_ORDER: read once,
    chunk by chunk). A rerun converges: the side files go to a new folder, index.html is
    replaced in one rename, and only then are other data folders removed. Two writers into
    one directory take turns (a lock file in it), so neither removes the other's side files
    while they are being written."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return _write_viewer_locked(groups, rows, out_dir, title, immediate)
    finally:
        os.close(fd)  # releases the lock


def _write_viewer_locked(
    groups: list[dict], rows: Iterable[dict], out_dir: pathlib.Path, title: str, immediate: list[dict] | None
) -> pathlib.Path:
    groups = [_jsonable(g) for g in groups]
    total = sum(int(g["count"]) for g in groups)
    data_dir = f"{DATA_PREFIX}{uuid.uuid4().hex[:12]}"
    expected = _expected_groups(groups)
    first_chunk: list[list] = []
    chunk: list[list] = []
    ids: list[str] = []
    chunks = 0
    for position, row in enumerate(rows):
        row = _jsonable(row)
        group = next(expected, None)
        if group is None or any(group[f] != row.get(f) for f in GROUP_FIELDS):
            raise ValueError(
                f"viewer rows are not in the groups' order at row {position} (conflict {row.get('conflict_id')})"
            )
        chunk.append([row.get(f) for f in ROW_FIELDS])
        ids.append(str(row.get("conflict_id")))
        if len(chunk) == CHUNK_ROWS:
            chunks = _flush(chunk, chunks, first_chunk, out_dir / data_dir)
            chunk = []
    if chunk:
        chunks = _flush(chunk, chunks, first_chunk, out_dir / data_dir)
    if len(ids) != total:
        raise ValueError(f"viewer groups count {total} conflicts, the rows are {len(ids)}")
    if chunks > 1:
        _write_atomic(out_dir / data_dir / "ids.js", "qreplIds(" + embed_json(ids) + ");\n")
    meta = {
        "total": total,
        "chunk_rows": CHUNK_ROWS,
        "chunks": chunks,
        "data_dir": data_dir if chunks > 1 else "",
        "group_fields": list(GROUP_FIELDS),
        "row_fields": list(ROW_FIELDS),
    }
    page = _template().render(
        title=title,  # autoescaped
        immediate=[{**s, "rate": f"{s['rejected_rate']:.0%}"} for s in immediate or []],
        meta_json=Markup(embed_json(meta)),
        groups_json=Markup(embed_json(_encode_groups(groups))),
        chunk_json=Markup(embed_json({"chunk": 0, "rows": first_chunk})),
        types_json=Markup(embed_json(TYPE_COLORS)),
        css=Markup(_asset("viewer.css")),
        js=Markup(_asset("viewer.js")),
    )
    path = out_dir / INDEX_FILE
    _write_atomic(path, page)
    for old in out_dir.glob(DATA_PREFIX + "*"):
        if old.name != data_dir and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return path


def _expected_groups(groups: list[dict]):
    for g in groups:
        for _ in range(int(g["count"])):
            yield g


def _flush(chunk: list[list], number: int, first_chunk: list[list], data_dir: pathlib.Path) -> int:
    """The first chunk goes inline; the others are side files a <script> element loads."""
    if number == 0:
        first_chunk.extend(chunk)
    else:
        data_dir.mkdir(parents=True, exist_ok=True)
        _write_atomic(
            data_dir / f"chunk-{number}.js", "qreplChunk(" + embed_json({"chunk": number, "rows": chunk}) + ");\n"
        )
    return number + 1


def _encode_groups(groups: list[dict]) -> dict:
    """Each group field as a dictionary of its distinct values, each group as their indexes
    and its count: a reason text or a subscriber name is written once, not once per group."""
    values: dict[str, list] = {f: [] for f in GROUP_FIELDS}
    lookup: dict[str, dict] = {f: {} for f in GROUP_FIELDS}
    encoded = []
    for g in groups:
        codes = []
        for f in GROUP_FIELDS:
            key = json.dumps(g.get(f))
            if key not in lookup[f]:
                lookup[f][key] = len(values[f])
                values[f].append(g.get(f))
            codes.append(lookup[f][key])
        encoded.append([*codes, int(g["count"])])
    return {"values": values, "groups": encoded}


def _write_atomic(path: pathlib.Path, text: str) -> None:
    """`path` replaced in one rename by a file made new (O_EXCL, owner-only, a name no one
    can have planted a link at). Explicit newline/encoding: byte-identical across OSes."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise


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
        return "0x" + raw.hex().upper() if len(raw) <= 1024 else base64.b64encode(raw).decode()
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
