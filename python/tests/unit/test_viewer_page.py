"""The static conflict viewer's generated file (qrepl.viewer), without a browser:
one self-contained page, data embedded safely, nothing loaded from outside."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import pathlib
import re

from qrepl.model import CONFLICT_CODES
from qrepl.viewer import ASSETS, render_viewer
from viewer_samples import XSS, embedded_text, sample_conflicts



def test_render_writes_single_index_file(tmp_path: pathlib.Path) -> None:
    out_dir = tmp_path / "nested" / "viewer"
    path = render_viewer(sample_conflicts(), out_dir, title="Nightly conflicts")
    assert path == out_dir / "index.html"
    assert path.is_file()
    assert [p.name for p in out_dir.iterdir()] == ["index.html"]
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Nightly conflicts</title>" in page
    for element_id in (
        "conflict-count",
        "conflict-detail",
        "chart-article",
        "chart-subscriber",
        "chart-type",
    ):
        assert f'id="{element_id}"' in page


def test_embedded_data_round_trips(tmp_path: pathlib.Path) -> None:
    conflicts = sample_conflicts()
    page = render_viewer(conflicts, tmp_path).read_text(encoding="utf-8")
    assert json.loads(embedded_text(page)) == conflicts


def test_malicious_value_cannot_break_out_of_script(tmp_path: pathlib.Path) -> None:
    conflicts = sample_conflicts()
    conflicts[1]["subscriber_row"]["name"] = XSS
    conflicts[1]["reason_text"] = "<!-- " + XSS
    page = render_viewer(conflicts, tmp_path).read_text(encoding="utf-8")
    data = embedded_text(page)
    assert "<" not in data and ">" not in data
    assert "<img" not in page
    # Exactly the template's own script closers: the data never closes a script early.
    own = render_viewer([], tmp_path / "empty").read_text(encoding="utf-8").count("</script>")
    assert page.count("</script>") == own == 3  # data, conflict types, the viewer's code
    assert json.loads(data) == conflicts


def test_title_is_html_escaped(tmp_path: pathlib.Path) -> None:
    page = render_viewer([], tmp_path, title="<b>x</b> & __QREPL_DATA__").read_text(
        encoding="utf-8"
    )
    assert "<title>&lt;b&gt;x&lt;/b&gt; &amp; __QREPL_DATA__</title>" in page
    assert json.loads(embedded_text(page)) == []


def test_non_json_values_are_converted(tmp_path: pathlib.Path) -> None:
    conflict = sample_conflicts()[0]
    conflict["detected_at"] = dt.datetime(2026, 11, 22, 10, 15)
    conflict["publisher_row"] = {
        "amount": decimal.Decimal("1.50"),
        "ratio": float("nan"),
        "ver": b"\x00\x01\xff",
    }
    page = render_viewer([conflict], tmp_path).read_text(encoding="utf-8")
    loaded = json.loads(embedded_text(page))[0]
    assert loaded["detected_at"] == "2026-11-22T10:15:00"
    assert loaded["publisher_row"] == {
        "amount": "1.50",
        "ratio": "nan",
        "ver": "0x0001FF",
    }


def test_page_loads_nothing_from_outside(tmp_path: pathlib.Path) -> None:
    page = render_viewer(sample_conflicts(), tmp_path).read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<link" not in page
    assert "@import" not in page


def test_conflict_types_come_from_the_model(tmp_path: pathlib.Path) -> None:
    """The page learns the conflict types (and their order) from qrepl.model; the viewer's
    code does not spell them a second time."""
    page = render_viewer([], tmp_path).read_text(encoding="utf-8")
    types = re.search(r'<script type="application/json" id="qrepl-types">(.*?)</script>', page, re.S)
    assert list(json.loads(types.group(1))) == list(CONFLICT_CODES)
    code = (ASSETS / "viewer.js").read_text(encoding="utf-8")
    assert [t for t in CONFLICT_CODES if t in code] == []
