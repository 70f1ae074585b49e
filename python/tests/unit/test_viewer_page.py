"""The static conflict viewer's generated file (qrepl.services.viewer), without a browser:
one self-contained page for a small log, side files for a large one, data embedded safely,
nothing loaded from outside."""

from __future__ import annotations

import datetime as dt
import os
import threading
import decimal
import json
import pathlib
import re

from qrepl.core.model import CONFLICT_CODES
import pytest

from qrepl.services import viewer
from qrepl.services.viewer import ASSETS, render_viewer, write_viewer
from viewer_samples import XSS, embedded_text, read_viewer, sample_conflicts


def test_render_writes_single_index_file(tmp_path: pathlib.Path) -> None:
    out_dir = tmp_path / "nested" / "viewer"
    path = render_viewer(sample_conflicts(), out_dir, title="Nightly conflicts")
    assert path == out_dir / "index.html"
    assert path.is_file()
    assert sorted(p.name for p in out_dir.iterdir()) == [viewer.LOCK_FILE, "index.html"]  # no temporary file left
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
    groups, shown = read_viewer(render_viewer(conflicts, tmp_path))
    assert shown == [{**c, "review": None} for c in sorted(conflicts, key=lambda c: c["detected_at"], reverse=True)]
    assert sum(g["count"] for g in groups) == 6


def test_malicious_value_cannot_break_out_of_script(tmp_path: pathlib.Path) -> None:
    conflicts = sample_conflicts()
    conflicts[1]["subscriber_row"]["name"] = XSS
    conflicts[1]["reason_text"] = "<!-- " + XSS
    index = render_viewer(conflicts, tmp_path)
    page = index.read_text(encoding="utf-8")
    data = embedded_text(page)
    assert "<" not in data and ">" not in data
    assert "<img" not in page
    # Exactly the template's own script closers: the data never closes a script early.
    own = render_viewer([], tmp_path / "empty").read_text(encoding="utf-8").count("</script>")
    assert page.count("</script>") == own == 5  # meta, groups, first rows, conflict types, the viewer's code
    assert read_viewer(index)[1][4]["reason_text"] == "<!-- " + XSS


def test_title_is_html_escaped(tmp_path: pathlib.Path) -> None:
    page = render_viewer([], tmp_path, title="<b>x</b> & __QREPL_DATA__").read_text(encoding="utf-8")
    assert "<title>&lt;b&gt;x&lt;/b&gt; &amp; __QREPL_DATA__</title>" in page
    assert json.loads(embedded_text(page)) == {"chunk": 0, "rows": []}


def test_non_json_values_are_converted(tmp_path: pathlib.Path) -> None:
    conflict = sample_conflicts()[0]
    conflict["detected_at"] = dt.datetime(2026, 11, 22, 10, 15)
    conflict["publisher_row"] = {
        "amount": decimal.Decimal("1.50"),
        "ratio": float("nan"),
        "ver": b"\x00\x01\xff",
    }
    loaded = read_viewer(render_viewer([conflict], tmp_path))[1][0]
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
    """The page learns the conflict types (and their order) from qrepl.core.model; the viewer's
    code does not spell them a second time."""
    page = render_viewer([], tmp_path).read_text(encoding="utf-8")
    types = re.search(r'<script type="application/json" id="qrepl-types">(.*?)</script>', page, re.S)
    assert list(json.loads(types.group(1))) == list(CONFLICT_CODES)
    code = (ASSETS / "viewer.js").read_text(encoding="utf-8")
    assert [t for t in CONFLICT_CODES if t in code] == []


def _many(n: int) -> list[dict]:
    """n conflicts over three days: the six samples repeated with new ids."""
    base = sample_conflicts()
    return [
        {**base[i % 6], "conflict_id": f"m{i:05d}", "detected_at": f"2026-11-{20 + i % 3}T0{i % 7}:00:00"}
        for i in range(n)
    ]


def test_a_large_log_keeps_the_page_small_and_every_conflict_reachable(tmp_path: pathlib.Path) -> None:
    """Past one chunk, the rows go to side files next to the page; the page holds the counts
    (groups) of every conflict and the first chunk only, and decoding it all gives back every
    conflict, each group's conflicts together, newest first."""
    conflicts = _many(2 * viewer.CHUNK_ROWS + 7)
    index = render_viewer(conflicts, tmp_path)
    meta = json.loads(embedded_text(index.read_text(encoding="utf-8"), "qrepl-meta"))
    assert meta["chunks"] == 3 and meta["total"] == len(conflicts)
    data = tmp_path / meta["data_dir"]
    assert sorted(p.name for p in data.iterdir()) == ["chunk-1.js", "chunk-2.js", "ids.js"]
    assert len(json.loads(embedded_text(index.read_text(encoding="utf-8")))["rows"]) == viewer.CHUNK_ROWS
    groups, shown = read_viewer(index)
    assert sorted(c["conflict_id"] for c in shown) == sorted(c["conflict_id"] for c in conflicts)
    assert sum(g["count"] for g in groups) == len(conflicts) and len(groups) < 60
    assert [c["detected_at"] for c in shown] == sorted((c["detected_at"] for c in conflicts), reverse=True)
    ids = (data / "ids.js").read_text(encoding="utf-8")
    assert json.loads(ids[len("qreplIds(") : -3]) == [c["conflict_id"] for c in shown]
    # A rerun replaces the data folder; the old one goes once the new page points elsewhere.
    again = render_viewer(conflicts[:3], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [viewer.LOCK_FILE, "index.html"]
    assert len(read_viewer(again)[1]) == 3


def test_rows_out_of_the_groups_order_are_refused(tmp_path: pathlib.Path) -> None:
    rows = [{**c, "review": None} for c in sample_conflicts()]  # oldest first: not the viewer's order
    groups = [{**{f: c[f] for f in viewer.GROUP_FIELDS}, "count": 1} for c in reversed(rows)]
    with pytest.raises(ValueError, match="not in the groups' order at row 0"):
        write_viewer(groups, rows, tmp_path)
    with pytest.raises(ValueError, match="groups count 6 conflicts, the rows are 5"):
        write_viewer(groups, list(reversed(rows))[:5], tmp_path)


def test_a_link_planted_where_the_page_is_written_is_never_followed(tmp_path: pathlib.Path) -> None:
    """On a shared host the viewer may be written into a directory another user can write to:
    a link planted at a name the writer uses must not redirect the write into that user's
    choice of file (the writer's own files, say)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    out = tmp_path / "viewer"
    out.mkdir()
    for name in ("index.html.tmp", f".index.html.{os.getpid()}"):
        (out / name).symlink_to(victim)
    index = render_viewer(sample_conflicts(), out)
    assert victim.read_text() == "mine\n"
    assert not index.is_symlink() and len(read_viewer(index)[1]) == len(sample_conflicts())


def test_two_viewers_written_at_once_into_one_directory_leave_a_whole_one(tmp_path: pathlib.Path) -> None:
    """A scheduled `qrepl viewer` and a user's, into the same directory: the second one, run
    while the first is still writing its side files, must not delete them under it, nor the
    first its own. Whichever finishes last, the page and every side file it loads are there."""
    conflicts = _many(2 * viewer.CHUNK_ROWS + 7)
    rows = sorted((viewer._jsonable(c) for c in conflicts), key=viewer._order_key)
    groups: list[dict] = []
    for r in rows:
        if groups and all(groups[-1][f] == r.get(f) for f in viewer.GROUP_FIELDS):
            groups[-1]["count"] += 1
        else:
            groups.append({**{f: r.get(f) for f in viewer.GROUP_FIELDS}, "count": 1})
    other: list[BaseException] = []

    def second_writer() -> None:
        try:
            render_viewer(conflicts[:3], tmp_path)
        except BaseException as e:  # noqa: BLE001 - reported below
            other.append(e)

    def first_rows():
        for n, r in enumerate(rows):
            if n == len(rows) - 1:  # the first writer's side files are written: the second one runs
                t = threading.Thread(target=second_writer)
                t.start()
                t.join(timeout=3)  # done, or waiting for the first to finish
                yield r
                threads.append(t)
            else:
                yield r

    threads: list[threading.Thread] = []
    write_viewer(groups, first_rows(), tmp_path)
    for t in threads:
        t.join()
    assert other == []
    meta = json.loads(embedded_text((tmp_path / "index.html").read_text(encoding="utf-8"), "qrepl-meta"))
    for n in range(1, meta["chunks"]):
        assert (tmp_path / meta["data_dir"] / f"chunk-{n}.js").exists(), n
    assert len(read_viewer(tmp_path / "index.html")[1]) == meta["total"]
