(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  // Hash/filter key -> conflict field. The hash keys are part of the shareable-link contract.
  const FILTER_FIELDS = {
    publication: "publication", article: "article", subscriber: "subscriber", partition: "partition", type: "conflict_type",
  };
  const STATE_KEYS = ["publication", "article", "subscriber", "partition", "type", "from", "to", "page", "conflict"];
  // Conflict type -> colour, in SQL Server's code order (qrepl.core.vocabulary, embedded by qrepl.services.viewer).
  const TYPE_COLORS = parseJson("qrepl-types", {});
  const TYPE_ORDER = Object.keys(TYPE_COLORS);
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
    "#ff9da7", "#9c755f", "#bab0ac"];
  // Filling every calendar day keeps gaps visible; past this span only days with data are drawn.
  const MAX_FILLED_DAYS = 120;
  const PAGE_ROWS = 100;

  // qrepl.services.viewer.write_viewer: the groups count every conflict; rows come in chunks (the first
  // inline, the others side files in META.data_dir), in group order, so a group is one run.
  const META = parseJson("qrepl-meta", { total: 0, chunk_rows: 1, chunks: 0, data_dir: "", row_fields: [] });
  const groups = parseGroups();
  const total = groups.reduce((n, g) => n + g.count, 0);
  const chunks = new Map();      // chunk number -> rows (objects with the row fields)
  const waiting = new Map();     // chunk number -> {promise, resolve, reject}
  const positionOf = new Map();  // conflict_id -> position, for the chunks loaded so far
  let allIds = null;             // every conflict_id (ids.js), loaded for a link to an unloaded one
  let idsWaiting = null;
  let renderToken = 0;
  let firstRender = true;
  const state = emptyState();
  const colorMaps = buildColorMaps();

  function parseJson(id, fallback) {
    try {
      const node = document.getElementById(id);
      return node && node.textContent ? JSON.parse(node.textContent) : fallback;
    } catch (err) {
      console.error("qrepl: cannot parse embedded " + id, err);
      return fallback;
    }
  }

  function parseGroups() {
    const parsed = parseJson("qrepl-groups", { values: {}, groups: [] });
    const fields = META.group_fields || [];
    let start = 0;
    return (parsed.groups || []).map(codes => {
      const g = { start: start, count: Number(codes[fields.length]) || 0 };
      fields.forEach((f, i) => { g[f] = (parsed.values[f] || [])[codes[i]]; });
      start += g.count;
      return g;
    });
  }

  // ---------- rows, chunk by chunk ----------
  function addChunk(data) {
    if (!data || !Array.isArray(data.rows) || chunks.has(data.chunk)) return;
    const base = data.chunk * META.chunk_rows;
    chunks.set(data.chunk, data.rows.map((values, i) => {
      const row = {};
      META.row_fields.forEach((f, j) => { row[f] = values[j]; });
      positionOf.set(str(row.conflict_id), base + i);
      return row;
    }));
    const w = waiting.get(data.chunk);
    if (w) { waiting.delete(data.chunk); w.resolve(); }
  }

  function deferred() {
    const d = {};
    d.promise = new Promise((resolve, reject) => { d.resolve = resolve; d.reject = reject; });
    return d;
  }

  function loadScript(name, onError) {
    const node = document.createElement("script");
    node.src = META.data_dir + "/" + name;
    node.onerror = () => onError(new Error("cannot load " + node.src + " (keep the " + META.data_dir +
      " folder next to the page)"));
    document.body.appendChild(node);
  }

  function loadChunk(n) {
    if (chunks.has(n)) return Promise.resolve();
    if (!waiting.has(n)) {
      const d = deferred();
      waiting.set(n, d);
      loadScript("chunk-" + n + ".js", err => { waiting.delete(n); d.reject(err); });
    }
    return waiting.get(n).promise;
  }

  function loadIds() {
    if (allIds) return Promise.resolve();
    if (!META.data_dir) { allIds = []; return Promise.resolve(); }
    if (!idsWaiting) {
      idsWaiting = deferred();
      loadScript("ids.js", err => { const d = idsWaiting; idsWaiting = null; d.reject(err); });
    }
    return idsWaiting.promise;
  }

  // The side files call these (a <script> element is the one loader that works from file://).
  window.qreplChunk = addChunk;
  window.qreplIds = ids => {
    allIds = Array.isArray(ids) ? ids.map(str) : [];
    if (idsWaiting) idsWaiting.resolve();
  };

  function groupOf(position) {
    let lo = 0, hi = groups.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (groups[mid].start <= position) lo = mid; else hi = mid - 1;
    }
    return groups[lo];
  }

  // The whole conflict at a loaded position: its group's fields and its own.
  function conflictAt(position) {
    const rows = chunks.get(Math.floor(position / META.chunk_rows));
    const own = rows && rows[position % META.chunk_rows];
    if (!own) return null;
    const c = Object.assign({}, groupOf(position), own);
    delete c.start;
    delete c.count;
    return c;
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
    groups.forEach(c => { if (c[field] !== null && c[field] !== undefined && c[field] !== "") seen.add(String(c[field])); });
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

  // The groups the filters keep; their conflicts are the table's rows, in order.
  function filtered() {
    return groups.filter(g => {
      for (const key of Object.keys(FILTER_FIELDS)) {
        if (state[key] && str(g[FILTER_FIELDS[key]]) !== state[key]) return false;
      }
      return g.count > 0 && inTimeRange(g);
    });
  }

  function countOf(selected) {
    return selected.reduce((n, g) => n + g.count, 0);
  }

  function pageCount(n) {
    return Math.max(1, Math.ceil(n / PAGE_ROWS));
  }

  function currentPage(n) {
    const p = parseInt(state.page, 10);
    return Number.isFinite(p) && p >= 1 ? Math.min(p, pageCount(n)) : 1;
  }

  // The positions of one page of the filtered conflicts.
  function pagePositions(selected, page) {
    let skip = (page - 1) * PAGE_ROWS;
    const out = [];
    for (const g of selected) {
      if (out.length === PAGE_ROWS) break;
      if (skip >= g.count) { skip -= g.count; continue; }
      for (let i = g.start + skip; i < g.start + g.count && out.length < PAGE_ROWS; i++) out.push(i);
      skip = 0;
    }
    return out;
  }

  function number(n) {
    return n.toLocaleString("en-US");
  }

  function plural(n) {
    return number(n) + (n === 1 ? " conflict" : " conflicts");
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
    state.page = "";
    writeHash();
    render();
  }

  function resetFilters() {
    STATE_KEYS.forEach(k => { if (k !== "conflict") state[k] = ""; });
    writeHash();
    syncControls();
    render();
  }

  function goToPage(page) {
    state.page = page > 1 ? String(page) : "";
    writeHash();
    render();
  }

  // ---------- table ----------
  function renderTable(selected) {
    const n = countOf(selected);
    const page = currentPage(n);
    const positions = pagePositions(selected, page);
    const first = (page - 1) * PAGE_ROWS;
    document.getElementById("page-info").textContent = n
      ? number(first + 1) + "\u2013" + number(first + positions.length) + " of " + number(n) +
        " (page " + number(page) + " of " + number(pageCount(n)) + ")"
      : "";
    document.getElementById("page-newer").disabled = page <= 1;
    document.getElementById("page-older").disabled = page >= pageCount(n);
    document.getElementById("pager").hidden = pageCount(n) <= 1;
    const missing = Array.from(new Set(positions.map(p => Math.floor(p / META.chunk_rows)))).filter(k => !chunks.has(k));
    if (missing.length) {
      const token = renderToken;
      fillTable([], n, "Loading conflicts\u2026");
      Promise.all(missing.map(loadChunk)).then(
        () => { if (token === renderToken) renderTable(selected); },
        err => { if (token === renderToken) fillTable([], n, String(err.message || err)); });
      return;
    }
    fillTable(positions.map(conflictAt), n, "");
  }

  function fillTable(rows, n, message) {
    const tbody = document.querySelector("#conflict-table tbody");
    clear(tbody);
    if (message) {
      tbody.appendChild(el("tr", { className: "loading" }, [el("td", { colspan: "9", text: message })]));
    }
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
    document.getElementById("conflict-table").hidden = n === 0;
    document.getElementById("no-conflicts").hidden = n !== 0;
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
    const wanted = state.conflict;
    const c = positionOf.has(wanted) ? conflictAt(positionOf.get(wanted)) : null;
    if (!c) {
      if (!allIds && META.data_dir) {
        // A link to a conflict in a chunk not loaded yet: ids.js says which chunk holds it.
        panel.appendChild(el("div", { className: "placeholder", text: "Looking for conflict " + wanted + "\u2026" }));
        const token = renderToken;
        loadIds().then(() => {
          const at = allIds.indexOf(wanted);
          return at < 0 ? null : loadChunk(Math.floor(at / META.chunk_rows));
        }).then(() => { if (token === renderToken) renderDetail(); },
          () => { allIds = allIds || []; if (token === renderToken) renderDetail(); });
        return;
      }
      panel.appendChild(el("div", { className: "placeholder", text: "Conflict " + wanted + " is not in this file." }));
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
      ["Partition", c.partition === null || c.partition === undefined ? "not recorded" : c.partition],
      ["Transaction", c.tran_id],
      ["Command seq", c.command_seq],
      ["Batch", c.batch_id],
      ["Publisher version", c.publisher_version],
      ["Old version (queued)", c.old_version],
      ["New version (queued)", c.new_version],
      ["Type code", c.conflict_type_code],
      ["Detected at", c.detected_at],
      ["Resolved", c.review ? "keep " + str(c.review.keep) + ": " + str(c.review.outcome) + " (by " +
        str(c.review.resolved_by) + " at " + str(c.review.resolved_at) + ")" : "not yet"],
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
  function dayRange(selected) {
    const days = Array.from(new Set(selected.map(dayOf).filter(Boolean))).sort();
    if (days.length < 2) return days;
    const start = Date.parse(days[0] + "T00:00:00Z");
    const end = Date.parse(days[days.length - 1] + "T00:00:00Z");
    const span = Math.round((end - start) / 86400000) + 1;
    if (span > MAX_FILLED_DAYS) return days;
    const all = [];
    for (let i = 0; i < span; i++) all.push(new Date(start + i * 86400000).toISOString().slice(0, 10));
    return all;
  }

  // Wide enough for the longest y-axis label (10px digits are under 6.5px wide).
  function leftMargin(labels) {
    return Math.max(30, 10 + Math.ceil(6.5 * Math.max.apply(null, labels.map(t => t.length))));
  }

  function niceStep(max) {
    const rough = Math.max(1, max / 4);
    const mag = Math.pow(10, Math.floor(Math.log10(rough)));
    const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= rough);
    return Math.max(1, Math.round(step));
  }

  function renderChart(key, field, selected) {
    const chart = document.getElementById("chart-" + key);
    const legend = document.getElementById("legend-" + key);
    const W = 420, H = 190, M = { top: 10, right: 8, bottom: 26, left: 30 };
    clear(chart);
    clear(legend);
    chart.setAttribute("viewBox", "0 0 " + W + " " + H);

    const days = dayRange(selected);
    if (!days.length) {
      chart.appendChild(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, ["No conflicts"]));
      return;
    }
    const categories = Array.from(colorMaps[key].keys());
    const counts = new Map(days.map(d => [d, new Map()]));
    selected.forEach(g => {
      const bucket = counts.get(dayOf(g));
      if (!bucket) return;
      const cat = str(g[field]) || "(none)";
      bucket.set(cat, (bucket.get(cat) || 0) + g.count);
      if (!categories.includes(cat)) categories.push(cat);
    });
    const totals = days.map(d => Array.from(counts.get(d).values()).reduce((a, b) => a + b, 0));
    const step = niceStep(Math.max.apply(null, totals));
    const yMax = Math.max(step, Math.ceil(Math.max.apply(null, totals) / step) * step);
    const ticks = [];
    for (let t = 0; t <= yMax; t += step) ticks.push(t);
    M.left = leftMargin(ticks.map(number));
    const pw = W - M.left - M.right, ph = H - M.top - M.bottom;
    const y = v => M.top + ph - (v / yMax) * ph;

    ticks.forEach(t => {
      chart.appendChild(svg("line", { x1: M.left, x2: W - M.right, y1: y(t), y2: y(t), class: "grid" }));
      chart.appendChild(svg("text", { x: M.left - 5, y: y(t) + 3, "text-anchor": "end", class: "y-label" }, [number(t)]));
    });
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
    renderToken += 1;
    const selected = filtered();
    const n = countOf(selected);
    document.getElementById("conflict-count").textContent = plural(n);
    document.getElementById("conflict-of").textContent = n === total ? "" : "of " + number(total);
    document.getElementById("no-conflicts").textContent = total ? "No conflicts match these filters" : "No conflicts";
    renderTable(selected);
    renderDetail();
    renderChart("article", "article", selected);
    renderChart("subscriber", "subscriber", selected);
    renderChart("type", "conflict_type", selected);
    if (firstRender) {
      firstRender = false;
      // The browser test reads this to measure the time to first render.
      if (window.performance && performance.mark) performance.mark("qrepl-first-render");
    }
  }

  function init() {
    addChunk(parseJson("qrepl-chunk", null));
    document.getElementById("total-count").textContent = plural(total) + " in this report";
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
    document.getElementById("page-newer").addEventListener("click", () => goToPage(currentPage(countOf(filtered())) - 1));
    document.getElementById("page-older").addEventListener("click", () => goToPage(currentPage(countOf(filtered())) + 1));
    window.addEventListener("hashchange", () => { readHash(); syncControls(); render(); });
    render();
  }

  init();
})();
