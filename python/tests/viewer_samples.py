"""Sample conflicts for the viewer tests (unit/test_viewer_page.py, browser/test_viewer_browser.py)."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

from qrepl.core.model import CONFLICT_CODES

XSS = '</script><img src=x onerror="window.__qrepl_pwned=1">'
# each subscriber's partition of each article (s1 holds the Oslo customers and s2 the large orders)
PARTITIONS = {
    ("s1", "customers"): "customers: city = 'Oslo'",
    ("s2", "orders"): "orders: amount > 10",
}


def _conflict(
    cid: str,
    *,
    article: str,
    subscriber: str,
    ctype: str,
    detected_at: str,
    publisher_row: dict | None,
    subscriber_row: dict | None,
    winner: str = "publisher",
    policy: str = "publisher_wins",
) -> dict[str, Any]:
    key_col = "customer_id" if article == "customers" else "order_id"
    key_val = (publisher_row or subscriber_row or {key_col: 99})[key_col]
    return {
        "conflict_id": cid,
        "batch_id": 7,
        "publication": "pub_crm" if article == "customers" else "pub_sales",
        "article": article,
        "row_key": json.dumps({key_col: key_val}, separators=(",", ":")),
        "subscriber": subscriber,
        "partition": PARTITIONS.get((subscriber, article), f"{article}: every row"),
        "tran_id": f"0x{int(cid[1:]):04X}00",
        "command_seq": int(cid[1:]) * 10,
        "conflict_type": ctype,
        "conflict_type_code": CONFLICT_CODES[ctype],
        "reason_text": f"{ctype.replace('_', '/')} conflict on {article}",
        "policy": policy,
        "winner": winner,
        "publisher_row": publisher_row,
        "subscriber_row": subscriber_row,
        "publisher_version": (publisher_row or {}).get("msrepl_tran_version"),
        "old_version": "V-OLD",
        "new_version": (subscriber_row or {}).get("msrepl_tran_version"),
        "detected_at": detected_at,
    }


def sample_conflicts() -> list[dict[str, Any]]:
    """Six conflicts: 2 articles, 3 subscribers, 5 types, 3 days."""
    return [
        _conflict(
            "c1",
            article="customers",
            subscriber="s1",
            ctype="update_update",
            detected_at="2026-11-20T09:00:00",
            publisher_row={
                "customer_id": 3,
                "name": "Bob",
                "city": "Bergen",
                "msrepl_tran_version": "P-3",
            },
            subscriber_row={
                "customer_id": 3,
                "name": "Bob",
                "city": "Oslo",
                "msrepl_tran_version": "S-3",
            },
        ),
        _conflict(
            "c2",
            article="customers",
            subscriber="s2",
            ctype="update_update",
            detected_at="2026-11-21T10:15:00",
            publisher_row={
                "customer_id": 1,
                "name": "Alice",
                "city": "Oslo",
                "msrepl_tran_version": "P-1",
            },
            subscriber_row={
                "customer_id": 1,
                "name": "Alicia",
                "city": "Oslo",
                "msrepl_tran_version": "S-1",
            },
        ),
        _conflict(
            "c3",
            article="orders",
            subscriber="s2",
            ctype="delete_update",
            detected_at="2026-11-21T11:00:00",
            publisher_row={
                "order_id": 10,
                "amount": 12.5,
                "msrepl_tran_version": "P-10",
            },
            subscriber_row=None,
        ),
        _conflict(
            "c4",
            article="orders",
            subscriber="s3",
            ctype="insert_exists",
            detected_at="2026-11-22T08:30:00",
            winner="subscriber",
            policy="subscriber_wins",
            publisher_row={
                "order_id": 11,
                "amount": 5.0,
                "msrepl_tran_version": "P-11",
            },
            subscriber_row={
                "order_id": 11,
                "amount": 7.0,
                "msrepl_tran_version": "S-11",
            },
        ),
        _conflict(
            "c5",
            article="customers",
            subscriber="s3",
            ctype="update_missing",
            detected_at="2026-11-22T09:45:00",
            policy="publisher_wins_reinit",
            publisher_row=None,
            subscriber_row={
                "customer_id": 4,
                "name": "Dana",
                "city": None,
                "msrepl_tran_version": "S-4",
            },
        ),
        _conflict(
            "c6",
            article="orders",
            subscriber="s1",
            ctype="delete_missing",
            detected_at="2026-11-22T16:00:00",
            publisher_row=None,
            subscriber_row=None,
        ),
    ]


def embedded_text(page: str, element_id: str = "qrepl-chunk") -> str:
    """The text of one of the page's JSON <script> elements (the first chunk of rows by default)."""
    match = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', page, re.S)
    assert match, f"{element_id} script tag not found"
    return match.group(1)


def read_viewer(index: pathlib.Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Decode a written viewer as the page does: (its groups with their counts, every conflict
    in the table's order), from the inline JSON and the side files next to the page."""
    page = index.read_text(encoding="utf-8")
    meta = json.loads(embedded_text(page, "qrepl-meta"))
    encoded = json.loads(embedded_text(page, "qrepl-groups"))
    fields = meta["group_fields"]
    groups = [
        {**{f: encoded["values"][f][codes[i]] for i, f in enumerate(fields)}, "count": codes[-1]}
        for codes in encoded["groups"]
    ]
    chunks = [json.loads(embedded_text(page))]
    for n in range(1, meta["chunks"]):
        text = (index.parent / meta["data_dir"] / f"chunk-{n}.js").read_text(encoding="utf-8")
        assert text.startswith("qreplChunk(") and text.endswith(");\n")
        chunks.append(json.loads(text[len("qreplChunk(") : -3]))
    assert [c["chunk"] for c in chunks] == list(range(len(chunks)))
    rows = [dict(zip(meta["row_fields"], values, strict=True)) for c in chunks for values in c["rows"]]
    conflicts, at = [], 0
    for g in groups:
        for row in rows[at : at + g["count"]]:
            conflicts.append({**{f: g[f] for f in fields}, **row})
        at += g["count"]
    assert at == len(rows) == meta["total"]
    return groups, conflicts
