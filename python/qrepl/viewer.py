"""Static HTML viewer for detected queued-updating conflicts.

`render_viewer` writes one self-contained ``index.html``: the conflict list is
embedded as JSON and all CSS/JS is inline, so the file can be opened straight
from disk (file://), attached to a ticket or published as a CI artifact with
no server and no network access.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import html
import json
import math
import pathlib
import re
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["render_viewer"]

INDEX_FILE = "index.html"


def render_viewer(
    conflicts: list[dict], out_dir: pathlib.Path, title: str = "qrepl conflicts"
) -> pathlib.Path:
    """Write ``out_dir/index.html`` showing ``conflicts`` and return its path."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    page = _fill_template(
        _TEMPLATE,
        {
            "__QREPL_TITLE__": html.escape(title, quote=True),
            "__QREPL_DATA__": embed_json([_jsonable(c) for c in conflicts]),
        },
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


def _fill_template(template: str, values: dict[str, str]) -> str:
    """Substitute all placeholders in one pass.

    A single pass matters: sequential ``str.replace`` calls would also
    substitute placeholder-looking text that arrived inside user data.
    """
    pattern = re.compile("|".join(re.escape(k) for k in values))
    return pattern.sub(lambda m: values[m.group(0)], template)


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>__QREPL_TITLE__</title>
<style>
:root {
  --bg: #f4f5f7; --card: #fff; --ink: #1f2328; --muted: #667085; --line: #e4e7ec;
  --accent: #2563eb; --accent-soft: #e8efff; --diff: #fff4d6; --diff-ink: #9a3412;
  --absent: #f2f4f7;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { background: #111827; color: #f9fafb; padding: 14px 24px; display: flex;
  align-items: baseline; gap: 16px; flex-wrap: wrap; }
header h1 { font-size: 18px; margin: 0; font-weight: 600; }
header .total { color: #9ca3af; font-size: 13px; }
main { padding: 16px 24px 32px; display: grid; gap: 16px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  box-shadow: 0 1px 2px rgba(16,24,40,.05); padding: 14px 16px; min-width: 0; }
.card h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted);
  margin: 0 0 10px; font-weight: 600; }
#filters { display: flex; flex-wrap: wrap; gap: 12px 16px; align-items: flex-end; }
#filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 3px; }
#filters select, #filters input { font: inherit; color: var(--ink); padding: 5px 8px; min-width: 150px;
  border: 1px solid #d0d5dd; border-radius: 6px; background: #fff; }
#filters button { font: inherit; padding: 6px 12px; border-radius: 6px; border: 1px solid #d0d5dd;
  background: #fff; cursor: pointer; }
#filters button:hover { background: var(--accent-soft); }
.summary { margin-left: auto; font-size: 13px; color: var(--muted); }
#conflict-count { font-size: 20px; font-weight: 700; color: var(--ink); margin-right: 6px; }
#charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 16px; }
.chart svg { width: 100%; height: auto; display: block; }
.chart svg text { font-size: 10px; fill: var(--muted); }
.chart svg .grid { stroke: var(--line); stroke-width: 1; }
.chart svg text.empty { font-size: 18px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 12px; margin-top: 6px; font-size: 12px; color: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; background: var(--swatch); }
#workspace { display: grid; grid-template-columns: minmax(0, 1.75fr) minmax(360px, 1fr); gap: 16px; align-items: start; }
@media (max-width: 1400px) { #workspace { grid-template-columns: 1fr; } }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 7px; border-bottom: 1px solid var(--line); vertical-align: top; }
#conflict-table { font-size: 13px; }
#conflict-table .time { color: var(--muted); }
th { font-size: 12px; color: var(--muted); font-weight: 600; white-space: nowrap; }
#conflict-table tbody tr { cursor: pointer; }
#conflict-table tbody tr:hover { background: #f9fafb; }
#conflict-table tbody tr.selected { background: var(--accent-soft); box-shadow: inset 3px 0 0 var(--accent); }
#conflict-table tbody tr:focus { outline: 2px solid var(--accent); outline-offset: -2px; }
td.mono, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
td.nowrap { white-space: nowrap; }
td.reason { color: var(--muted); min-width: 100px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600;
  white-space: nowrap; color: #fff; background: var(--badge, #475467); }
.winner-publisher { color: #1d4ed8; font-weight: 600; }
.winner-subscriber { color: #047857; font-weight: 600; }
#no-conflicts { padding: 28px; text-align: center; color: var(--muted); font-size: 15px; }
#conflict-detail { position: sticky; top: 12px; }
#conflict-detail .placeholder { color: var(--muted); padding: 20px 0; text-align: center; }
.detail-head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; margin-bottom: 10px; }
.detail-head .cid { font-weight: 700; }
.detail-head button { margin-left: auto; border: none; background: none; font-size: 20px; line-height: 1;
  cursor: pointer; color: var(--muted); }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; margin: 0 0 14px; font-size: 13px; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; word-break: break-word; }
table.compare th { white-space: normal; }
.compare-wrap { overflow-x: auto; }
table.compare td.col { font-weight: 600; white-space: nowrap; }
table.compare td.value { word-break: break-word; }
table.compare td.diff { background: var(--diff); }
table.compare td.marker { color: var(--diff-ink); font-weight: 700; white-space: nowrap; width: 1%; }
table.compare td.absent { background: var(--absent); color: var(--muted); font-style: italic; text-align: center;
  vertical-align: middle; }
.null { color: var(--muted); font-style: italic; }
.key-tag { font-size: 10px; color: var(--accent); border: 1px solid var(--accent); border-radius: 3px;
  padding: 0 3px; margin-left: 4px; font-weight: 600; }
.diff-note { margin-top: 8px; font-size: 12px; color: var(--muted); }
</style>
</head>
<body>
<header>
  <h1>__QREPL_TITLE__</h1>
  <span class="total" id="total-count"></span>
</header>
<main>
  <section class="card" aria-label="Filters">
    <div id="filters">
      <label>Publication <select id="filter-publication" data-filter="publication"></select></label>
      <label>Article <select id="filter-article" data-filter="article"></select></label>
      <label>Subscriber <select id="filter-subscriber" data-filter="subscriber"></select></label>
      <label>Conflict type <select id="filter-type" data-filter="type"></select></label>
      <label>Detected from <input type="date" id="filter-from" data-filter="from"></label>
      <label>Detected to <input type="date" id="filter-to" data-filter="to"></label>
      <button type="button" id="filter-reset">Clear filters</button>
      <div class="summary"><span id="conflict-count">0 conflicts</span><span id="conflict-of"></span></div>
    </div>
  </section>
  <section id="charts">
    <div class="card chart"><h2>Per day by article</h2><svg id="chart-article" role="img" aria-label="Conflicts per day by article"></svg><div class="legend" id="legend-article"></div></div>
    <div class="card chart"><h2>Per day by subscriber</h2><svg id="chart-subscriber" role="img" aria-label="Conflicts per day by subscriber"></svg><div class="legend" id="legend-subscriber"></div></div>
    <div class="card chart"><h2>Per day by conflict type</h2><svg id="chart-type" role="img" aria-label="Conflicts per day by conflict type"></svg><div class="legend" id="legend-type"></div></div>
  </section>
  <section id="workspace">
    <div class="card">
      <h2>Conflicts</h2>
      <div class="table-wrap">
        <table id="conflict-table">
          <thead><tr><th>Detected at</th><th>Publication</th><th>Article</th><th>Row key</th><th>Subscriber</th>
            <th>Transaction</th><th>Type</th><th>Winner</th><th>Reason</th></tr></thead>
          <tbody></tbody>
        </table>
      </div>
      <div id="no-conflicts" hidden>No conflicts</div>
    </div>
    <aside class="card" id="conflict-detail" aria-live="polite">
      <h2>Conflict detail</h2>
      <div class="placeholder">Select a conflict to compare the winning and losing rows.</div>
    </aside>
  </section>
</main>
<script type="application/json" id="qrepl-data">__QREPL_DATA__</script>
<script>
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  // Hash/filter key -> conflict field. The hash keys are part of the shareable-link contract.
  const FILTER_FIELDS = { publication: "publication", article: "article", subscriber: "subscriber", type: "conflict_type" };
  const STATE_KEYS = ["publication", "article", "subscriber", "type", "from", "to", "conflict"];
  const TYPE_ORDER = ["update_update", "update_missing", "delete_update", "delete_missing", "insert_exists"];
  const TYPE_COLORS = { update_update: "#e8590c", update_missing: "#1c7ed6", delete_update: "#d6336c",
    delete_missing: "#7048e8", insert_exists: "#37b24d" };
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
    "#ff9da7", "#9c755f", "#bab0ac"];
  // Filling every calendar day keeps gaps visible; past this span only days with data are drawn.
  const MAX_FILLED_DAYS = 120;

  const conflicts = parseData();
  const state = emptyState();
  const colorMaps = buildColorMaps();

  function parseData() {
    try {
      const parsed = JSON.parse(document.getElementById("qrepl-data").textContent || "[]");
      return Array.isArray(parsed) ? parsed.filter(c => c && typeof c === "object") : [];
    } catch (err) {
      console.error("qrepl: cannot parse embedded conflict data", err);
      return [];
    }
  }

  function emptyState() {
    const s = {};
    STATE_KEYS.forEach(k => { s[k] = ""; });
    return s;
  }

  // ---------- small DOM helpers (all data goes through textContent, never innerHTML) ----------
  function el(tag, props, children) {
    const node = document.createElement(tag);
    applyProps(node, props);
    appendChildren(node, children);
    return node;
  }

  function svg(tag, attrs, children) {
    const node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(k => node.setAttribute(k, String(attrs[k])));
    appendChildren(node, children);
    return node;
  }

  function applyProps(node, props) {
    Object.keys(props || {}).forEach(k => {
      const v = props[k];
      if (v === undefined || v === null) return;
      if (k === "text") node.textContent = String(v);
      else if (k === "className") node.className = v;
      else if (k === "style") Object.keys(v).forEach(p => node.style.setProperty(p, v[p]));
      else if (k === "dataset") Object.keys(v).forEach(d => { node.dataset[d] = v[d]; });
      else node.setAttribute(k, String(v));
    });
  }

  function appendChildren(node, children) {
    (children || []).forEach(c => {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function str(v) {
    return v === null || v === undefined ? "" : String(v);
  }

  // ---------- data helpers ----------
  function distinct(field) {
    const seen = new Set();
    conflicts.forEach(c => { if (c[field] !== null && c[field] !== undefined && c[field] !== "") seen.add(String(c[field])); });
    const values = Array.from(seen);
    if (field === "conflict_type") {
      return values.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    }
    return values.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  }

  function rank(type) {
    const i = TYPE_ORDER.indexOf(type);
    return i < 0 ? TYPE_ORDER.length : i;
  }

  function buildColorMaps() {
    const maps = {};
    [["article", "article"], ["subscriber", "subscriber"], ["type", "conflict_type"]].forEach(([key, field]) => {
      const m = new Map();
      distinct(field).forEach((v, i) => {
        m.set(v, key === "type" && TYPE_COLORS[v] ? TYPE_COLORS[v] : PALETTE[i % PALETTE.length]);
      });
      maps[key] = m;
    });
    return maps;
  }

  function dayOf(c) {
    const d = str(c.detected_at);
    return /^\d{4}-\d{2}-\d{2}/.test(d) ? d.slice(0, 10) : "";
  }

  // A bare date in "to" means "through the end of that day"; a full timestamp is an exact bound.
  function inTimeRange(c) {
    if (!state.from && !state.to) return true;
    const at = str(c.detected_at);
    if (!at) return false;
    if (state.from && at < state.from) return false;
    if (state.to) {
      const bound = state.to.length <= 10 ? at.slice(0, 10) : at;
      if (bound > state.to) return false;
    }
    return true;
  }

  function filtered() {
    return conflicts.filter(c => {
      for (const key of Object.keys(FILTER_FIELDS)) {
        if (state[key] && str(c[FILTER_FIELDS[key]]) !== state[key]) return false;
      }
      return inTimeRange(c);
    }).sort((a, b) => str(b.detected_at).localeCompare(str(a.detected_at))
      || str(a.conflict_id).localeCompare(str(b.conflict_id), undefined, { numeric: true }));
  }

  function plural(n) {
    return n + (n === 1 ? " conflict" : " conflicts");
  }

  // ---------- URL hash <-> state ----------
  function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    STATE_KEYS.forEach(k => { state[k] = params.get(k) || ""; });
  }

  function hashFromState() {
    const params = new URLSearchParams();
    STATE_KEYS.forEach(k => { if (state[k]) params.set(k, state[k]); });
    return params.toString();
  }

  function writeHash() {
    const hash = hashFromState();
    if (location.hash.replace(/^#/, "") === hash) return;
    // replaceState does not fire hashchange (no re-render loop) and keeps history clean.
    try {
      history.replaceState(null, "", hash ? "#" + hash : location.href.split("#")[0]);
    } catch (err) {
      location.hash = hash;
    }
  }

  // ---------- filters ----------
  function fillSelects() {
    Object.keys(FILTER_FIELDS).forEach(key => {
      const select = document.getElementById("filter-" + key);
      clear(select);
      select.appendChild(el("option", { value: "", text: "all" }));
      distinct(FILTER_FIELDS[key]).forEach(v => select.appendChild(el("option", { value: v, text: v })));
    });
  }

  function syncControls() {
    Object.keys(FILTER_FIELDS).forEach(key => {
      const select = document.getElementById("filter-" + key);
      const wanted = state[key];
      // A shared link may name a value absent from this file; show it rather than silently dropping it.
      if (wanted && !Array.from(select.options).some(o => o.value === wanted)) {
        select.appendChild(el("option", { value: wanted, text: wanted + " (no data)" }));
      }
      select.value = wanted;
    });
    ["from", "to"].forEach(key => {
      document.getElementById("filter-" + key).value = state[key].slice(0, 10);
    });
  }

  function onFilterChange(event) {
    const key = event.target.dataset.filter;
    state[key] = event.target.value;
    writeHash();
    render();
  }

  function resetFilters() {
    STATE_KEYS.forEach(k => { if (k !== "conflict") state[k] = ""; });
    writeHash();
    syncControls();
    render();
  }

  // ---------- table ----------
  function renderTable(rows) {
    const tbody = document.querySelector("#conflict-table tbody");
    clear(tbody);
    rows.forEach(c => {
      const tr = el("tr", { tabindex: "0", dataset: { conflictId: str(c.conflict_id) } }, [
        detectedCell(c.detected_at),
        el("td", { text: str(c.publication) }),
        el("td", { text: str(c.article) }),
        el("td", { className: "mono", text: str(c.row_key) }),
        el("td", { text: str(c.subscriber) }),
        el("td", { className: "mono", text: str(c.tran_id) }),
        el("td", {}, [typeBadge(c.conflict_type)]),
        el("td", { className: "winner-" + str(c.winner), text: str(c.winner) }),
        el("td", { className: "reason", text: str(c.reason_text) }),
      ]);
      if (state.conflict && str(c.conflict_id) === state.conflict) tr.classList.add("selected");
      tbody.appendChild(tr);
    });
    document.getElementById("conflict-table").hidden = rows.length === 0;
    document.getElementById("no-conflicts").hidden = rows.length !== 0;
  }

  // Date and time on two lines keep the widest column narrow enough for the side-by-side layout.
  function detectedCell(at) {
    const [date, time] = str(at).split("T");
    return el("td", { className: "nowrap mono" }, [el("div", { text: date }), time ? el("div", { className: "time", text: time }) : null]);
  }

  function typeBadge(type) {
    const color = colorMaps.type.get(str(type)) || "#475467";
    return el("span", { className: "badge", style: { "--badge": color }, text: str(type) || "unknown" });
  }

  function selectConflict(id) {
    state.conflict = state.conflict === id ? "" : id;
    writeHash();
    render();
  }

  function rowFromEvent(event) {
    const tr = event.target.closest("tr[data-conflict-id]");
    return tr ? tr.dataset.conflictId : null;
  }

  // ---------- detail ----------
  function renderDetail() {
    const panel = document.getElementById("conflict-detail");
    clear(panel);
    panel.appendChild(el("h2", { text: "Conflict detail" }));
    if (!state.conflict) {
      panel.appendChild(el("div", { className: "placeholder", text: "Select a conflict to compare the winning and losing rows." }));
      return;
    }
    const c = conflicts.find(x => str(x.conflict_id) === state.conflict);
    if (!c) {
      panel.appendChild(el("div", { className: "placeholder", text: "Conflict " + state.conflict + " is not in this file." }));
      return;
    }
    const close = el("button", { type: "button", title: "Close", "aria-label": "Close detail", text: "\u00d7" });
    close.addEventListener("click", () => selectConflict(state.conflict));
    panel.appendChild(el("div", { className: "detail-head" }, [
      el("span", { className: "cid mono", text: str(c.conflict_id) }), typeBadge(c.conflict_type), close,
    ]));
    panel.appendChild(metaList(c));
    panel.appendChild(compareTable(c));
  }

  function metaList(c) {
    const items = [
      ["Reason", c.reason_text],
      ["Policy", c.policy],
      ["Winner", c.winner],
      ["Publication / article", str(c.publication) + " / " + str(c.article)],
      ["Row key", c.row_key],
      ["Subscriber", c.subscriber],
      ["Transaction", c.tran_id],
      ["Command seq", c.command_seq],
      ["Batch", c.batch_id],
      ["Publisher version", c.publisher_version],
      ["Old version (queued)", c.old_version],
      ["New version (queued)", c.new_version],
      ["Type code", c.conflict_type_code],
      ["Detected at", c.detected_at],
    ];
    const dl = el("dl", { className: "meta" });
    items.forEach(([label, value]) => {
      dl.appendChild(el("dt", { text: label }));
      dl.appendChild(el("dd", { className: /version|Transaction/.test(label) ? "mono" : "" }, [valueNode(value)]));
    });
    return dl;
  }

  function valueNode(v) {
    if (v === null || v === undefined) return el("span", { className: "null", text: "NULL" });
    return document.createTextNode(typeof v === "object" ? JSON.stringify(v) : String(v));
  }

  // Sorting keys makes {"a":1,"b":2} and {"b":2,"a":1} compare equal.
  function canonical(v) {
    if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
    if (v && typeof v === "object") {
      return "{" + Object.keys(v).sort().map(k => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
    }
    return JSON.stringify(v === undefined ? null : v);
  }

  function isRow(r) {
    return r !== null && r !== undefined && typeof r === "object" && !Array.isArray(r);
  }

  function keyColumns(c) {
    try {
      const parsed = JSON.parse(str(c.row_key));
      return new Set(isRow(parsed) ? Object.keys(parsed) : []);
    } catch (err) {
      return new Set();
    }
  }

  function compareTable(c) {
    const subscriberWins = str(c.winner) === "subscriber";
    const win = { label: "Winner", who: subscriberWins ? "subscriber" : "publisher" };
    const lose = { label: "Loser", who: subscriberWins ? "publisher" : "subscriber" };
    win.row = win.who === "publisher" ? c.publisher_row : c.subscriber_row;
    lose.row = lose.who === "publisher" ? c.publisher_row : c.subscriber_row;
    const sides = [win, lose];

    const columns = [];
    sides.forEach(s => { if (isRow(s.row)) Object.keys(s.row).forEach(k => { if (!columns.includes(k)) columns.push(k); }); });
    const keys = keyColumns(c);
    // Differences are only meaningful when both rows exist; an absent row is shown as such instead.
    const bothPresent = sides.every(s => isRow(s.row));

    const head = el("tr", {}, [el("th", { text: "Column" })].concat(sides.map(s =>
      el("th", { className: "side winner-" + s.who, text: s.label + ": " + s.who + " row" }))).concat([el("th", {})]));
    const tbody = el("tbody");
    const lines = columns.length ? columns : [null];
    let diffCount = 0;
    lines.forEach((col, i) => {
      const tr = el("tr", { dataset: col === null ? {} : { column: col } });
      const nameCell = el("td", { className: "col mono" }, col === null ? ["\u2014"] : [col]);
      if (col !== null && keys.has(col)) nameCell.appendChild(el("span", { className: "key-tag", text: "key" }));
      tr.appendChild(nameCell);
      const differs = bothPresent && col !== null && (
        !(col in win.row) || !(col in lose.row) || canonical(win.row[col]) !== canonical(lose.row[col]));
      if (differs) diffCount += 1;
      sides.forEach(s => {
        if (!isRow(s.row)) {
          // One tall cell per absent row reads better than repeating the message on every line.
          if (i === 0) tr.appendChild(el("td", { className: "absent", rowspan: String(lines.length), text: "(row absent)" }));
          return;
        }
        const cell = el("td", { className: "value mono" + (differs ? " diff" : "") });
        if (col !== null && !(col in s.row)) cell.appendChild(el("span", { className: "null", text: "(no such column)" }));
        else if (col !== null) cell.appendChild(valueNode(s.row[col]));
        tr.appendChild(cell);
      });
      tr.appendChild(el("td", { className: "marker", title: differs ? "values differ" : "", text: differs ? "\u2260 differs" : "" }));
      tbody.appendChild(tr);
    });

    const wrap = el("div", { className: "compare-wrap" }, [el("table", { className: "compare" }, [el("thead", {}, [head]), tbody])]);
    const note = bothPresent
      ? (diffCount ? diffCount + " of " + columns.length + " columns differ." : "No column values differ.")
      : "One or both rows are absent, so columns are not compared.";
    wrap.appendChild(el("div", { className: "diff-note", text: note }));
    return wrap;
  }

  // ---------- charts ----------
  function dayRange(rows) {
    const days = Array.from(new Set(rows.map(dayOf).filter(Boolean))).sort();
    if (days.length < 2) return days;
    const start = Date.parse(days[0] + "T00:00:00Z");
    const end = Date.parse(days[days.length - 1] + "T00:00:00Z");
    const span = Math.round((end - start) / 86400000) + 1;
    if (span > MAX_FILLED_DAYS) return days;
    const all = [];
    for (let i = 0; i < span; i++) all.push(new Date(start + i * 86400000).toISOString().slice(0, 10));
    return all;
  }

  function niceStep(max) {
    const rough = Math.max(1, max / 4);
    const mag = Math.pow(10, Math.floor(Math.log10(rough)));
    const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= rough);
    return Math.max(1, Math.round(step));
  }

  function renderChart(key, field, rows) {
    const chart = document.getElementById("chart-" + key);
    const legend = document.getElementById("legend-" + key);
    const W = 420, H = 190, M = { top: 10, right: 8, bottom: 26, left: 30 };
    const pw = W - M.left - M.right, ph = H - M.top - M.bottom;
    clear(chart);
    clear(legend);
    chart.setAttribute("viewBox", "0 0 " + W + " " + H);

    const days = dayRange(rows);
    if (!days.length) {
      chart.appendChild(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, ["No conflicts"]));
      return;
    }
    const categories = Array.from(colorMaps[key].keys());
    const counts = new Map(days.map(d => [d, new Map()]));
    rows.forEach(c => {
      const bucket = counts.get(dayOf(c));
      if (!bucket) return;
      const cat = str(c[field]) || "(none)";
      bucket.set(cat, (bucket.get(cat) || 0) + 1);
      if (!categories.includes(cat)) categories.push(cat);
    });
    const totals = days.map(d => Array.from(counts.get(d).values()).reduce((a, b) => a + b, 0));
    const step = niceStep(Math.max.apply(null, totals));
    const yMax = Math.max(step, Math.ceil(Math.max.apply(null, totals) / step) * step);
    const y = v => M.top + ph - (v / yMax) * ph;

    for (let t = 0; t <= yMax; t += step) {
      chart.appendChild(svg("line", { x1: M.left, x2: W - M.right, y1: y(t), y2: y(t), class: "grid" }));
      chart.appendChild(svg("text", { x: M.left - 5, y: y(t) + 3, "text-anchor": "end" }, [String(t)]));
    }
    const slot = pw / days.length;
    const barW = Math.max(2, Math.min(40, slot * 0.7));
    const labelEvery = Math.ceil(days.length / 8);
    const used = new Set();
    days.forEach((day, i) => {
      const x = M.left + i * slot + (slot - barW) / 2;
      let acc = 0;
      categories.forEach(cat => {
        const n = counts.get(day).get(cat) || 0;
        if (!n) return;
        used.add(cat);
        const rect = svg("rect", { x: x.toFixed(1), y: y(acc + n).toFixed(1), width: barW.toFixed(1),
          height: Math.max(0.5, y(acc) - y(acc + n)).toFixed(1), fill: colorFor(key, cat), "data-day": day, "data-category": cat },
          [svg("title", {}, [day + " \u00b7 " + cat + ": " + plural(n)])]);
        chart.appendChild(rect);
        acc += n;
      });
      if (i % labelEvery === 0) {
        chart.appendChild(svg("text", { x: (M.left + i * slot + slot / 2).toFixed(1), y: H - 8, "text-anchor": "middle" }, [day.slice(5)]));
      }
    });
    chart.appendChild(svg("line", { x1: M.left, x2: W - M.right, y1: y(0), y2: y(0), stroke: "#98a2b3" }));
    categories.filter(c => used.has(c)).forEach(cat => {
      legend.appendChild(el("span", { style: { "--swatch": colorFor(key, cat) }, text: cat }));
    });
  }

  function colorFor(key, cat) {
    return colorMaps[key].get(cat) || "#98a2b3";
  }

  // ---------- top-level render ----------
  function render() {
    const rows = filtered();
    document.getElementById("conflict-count").textContent = plural(rows.length);
    document.getElementById("conflict-of").textContent = rows.length === conflicts.length ? "" : "of " + conflicts.length;
    document.getElementById("no-conflicts").textContent = conflicts.length ? "No conflicts match these filters" : "No conflicts";
    renderTable(rows);
    renderDetail();
    renderChart("article", "article", rows);
    renderChart("subscriber", "subscriber", rows);
    renderChart("type", "conflict_type", rows);
  }

  function init() {
    document.getElementById("total-count").textContent = plural(conflicts.length) + " in this report";
    fillSelects();
    readHash();
    syncControls();
    document.querySelectorAll("#filters [data-filter]").forEach(node => node.addEventListener("change", onFilterChange));
    document.getElementById("filter-reset").addEventListener("click", resetFilters);
    const tbody = document.querySelector("#conflict-table tbody");
    tbody.addEventListener("click", event => { const id = rowFromEvent(event); if (id !== null) selectConflict(id); });
    tbody.addEventListener("keydown", event => {
      if (event.key !== "Enter" && event.key !== " ") return;
      const id = rowFromEvent(event);
      if (id !== null) { event.preventDefault(); selectConflict(id); }
    });
    window.addEventListener("hashchange", () => { readHash(); syncControls(); render(); });
    render();
  }

  init();
})();
</script>
</body>
</html>
"""
