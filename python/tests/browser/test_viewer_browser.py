"""Tests for the static conflict viewer (qrepl.viewer).

Two layers: fast unit tests of the generated file, and a real headless
Chromium session (via chromedriver) that drives the page like a person would.
If the browser cannot be started the browser tests FAIL, so CI cannot go green
without them; set QREPL_ALLOW_NO_BROWSER=1 to skip them instead on machines
that have no Chromium.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import pathlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from qrepl.viewer import render_viewer

ARTIFACTS = pathlib.Path(__file__).resolve().parent / "artifacts"
XSS = '</script><img src=x onerror="window.__qrepl_pwned=1">'
DATA_RE = re.compile(
    r'<script type="application/json" id="qrepl-data">(.*?)</script>', re.S
)


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
    codes = {
        "update_update": 1,
        "update_missing": 2,
        "delete_update": 3,
        "delete_missing": 4,
        "insert_exists": 5,
    }
    key_col = "customer_id" if article == "customers" else "order_id"
    key_val = (publisher_row or subscriber_row or {key_col: 99})[key_col]
    return {
        "conflict_id": cid,
        "batch_id": 7,
        "publication": "pub_crm" if article == "customers" else "pub_sales",
        "article": article,
        "row_key": json.dumps({key_col: key_val}, separators=(",", ":")),
        "subscriber": subscriber,
        "tran_id": f"0x{int(cid[1:]):04X}00",
        "command_seq": int(cid[1:]) * 10,
        "conflict_type": ctype,
        "conflict_type_code": codes[ctype],
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


def embedded_text(page: str) -> str:
    match = DATA_RE.search(page)
    assert match, "qrepl-data script tag not found"
    return match.group(1)


# --------------------------------------------------------------------------- unit tests


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
    assert page.count("</script>") == 2
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


# --------------------------------------------------------------------------- browser


CHROMIUM = (
    os.environ.get("QREPL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
)
CHROMEDRIVER = (
    os.environ.get("QREPL_CHROMEDRIVER")
    or shutil.which("chromedriver")
    or "/usr/bin/chromedriver"
)


def _browser_unavailable(reason: str) -> None:
    """Fail loudly by default: a silently skipped browser test hides a broken viewer."""
    if os.environ.get("QREPL_ALLOW_NO_BROWSER") == "1":
        pytest.skip(
            f"headless Chromium unavailable (QREPL_ALLOW_NO_BROWSER=1): {reason}"
        )
    pytest.fail(
        f"headless Chromium unavailable: {reason}. Install it with "
        "`apt-get install -y chromium chromium-driver` and `pip install selenium`, "
        "or set QREPL_ALLOW_NO_BROWSER=1 to skip browser tests.",
        pytrace=False,
    )


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        _browser_unavailable(f"selenium is not installed ({exc})")
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not os.access(binary, os.X_OK):
            _browser_unavailable(f"{binary} not found or not executable")

    profile = tempfile.mkdtemp(prefix="qrepl-chromium-")
    options = webdriver.ChromeOptions()
    # Explicit binary + driver paths keep Selenium Manager from trying to download anything.
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1600,1300",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        browser = webdriver.Chrome(
            service=Service(executable_path=CHROMEDRIVER), options=options
        )
    except WebDriverException as exc:
        shutil.rmtree(profile, ignore_errors=True)
        _browser_unavailable(
            f"could not start {CHROMIUM} via {CHROMEDRIVER}: {exc.msg or exc}"
        )
    browser.set_page_load_timeout(30)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return render_viewer(sample_conflicts(), tmp_path_factory.mktemp("viewer")).as_uri()


def open_page(driver: Any, url: str) -> None:
    # Going via about:blank forces a real load: a URL differing only by hash would just fire hashchange.
    driver.get("about:blank")
    driver.get(url)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(
        lambda d: d.find_element("id", "conflict-count").text.strip()
    )


def count_text(driver: Any) -> str:
    return driver.find_element("id", "conflict-count").text


def visible_ids(driver: Any) -> list[str]:
    rows = driver.find_elements(
        "css selector", "#conflict-table tbody tr[data-conflict-id]"
    )
    return [r.get_attribute("data-conflict-id") for r in rows if r.is_displayed()]


def column(driver: Any, index: int) -> list[str]:
    cells = driver.find_elements(
        "css selector", f"#conflict-table tbody tr td:nth-child({index})"
    )
    return [c.text for c in cells]


def severe_console_errors(driver: Any) -> list[str]:
    return [
        e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"
    ]


def test_browser_shows_all_conflicts_and_charts(driver: Any, page_url: str) -> None:
    open_page(driver, page_url)
    assert count_text(driver) == "6 conflicts"
    assert sorted(visible_ids(driver)) == ["c1", "c2", "c3", "c4", "c5", "c6"]
    # Newest first.
    assert visible_ids(driver)[0] == "c6"
    assert not driver.find_element("id", "no-conflicts").is_displayed()
    for chart in ("chart-article", "chart-subscriber", "chart-type"):
        assert driver.find_elements("css selector", f"#{chart} rect"), (
            f"{chart} has no bars"
        )
    # Three days of data -> bars on three distinct days in each chart.
    days = {
        r.get_attribute("data-day")
        for r in driver.find_elements("css selector", "#chart-type rect")
    }
    assert days == {"2026-11-20", "2026-11-21", "2026-11-22"}
    assert len(driver.find_elements("css selector", "#chart-type rect")) == 6
    assert severe_console_errors(driver) == []


def test_browser_filter_by_subscriber_select(driver: Any, page_url: str) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(driver, page_url)
    select = Select(driver.find_element("id", "filter-subscriber"))
    assert [o.get_attribute("value") for o in select.options] == ["", "s1", "s2", "s3"]
    assert select.options[0].text == "all"
    select.select_by_value("s2")
    assert count_text(driver) == "2 conflicts"
    assert sorted(visible_ids(driver)) == ["c2", "c3"]
    assert set(column(driver, 5)) == {"s2"}
    assert "subscriber=s2" in driver.current_url
    # Charts follow the filter: s2 has conflicts on one day only.
    bars = driver.find_elements("css selector", "#chart-subscriber rect")
    assert {b.get_attribute("data-category") for b in bars} == {"s2"}
    select.select_by_value("")
    assert count_text(driver) == "6 conflicts"
    assert "subscriber=" not in driver.current_url


def test_browser_row_click_shows_diff(driver: Any, page_url: str) -> None:
    open_page(driver, page_url)
    driver.find_element(
        "css selector", '#conflict-table tr[data-conflict-id="c2"]'
    ).click()
    detail = driver.find_element("id", "conflict-detail")
    assert "conflict=c2" in driver.current_url
    text = detail.text
    assert "Winner: publisher row" in text and "Loser: subscriber row" in text
    assert "Alice" in text and "Alicia" in text
    assert "update/update conflict on customers" in text
    assert "publisher_wins" in text and "0x000200" in text and "20" in text

    def cells(column_name: str) -> list[Any]:
        return detail.find_elements(
            "css selector", f'tr[data-column="{column_name}"] td.value'
        )

    for col in ("name", "msrepl_tran_version"):
        assert [("diff" in c.get_attribute("class").split()) for c in cells(col)] == [
            True,
            True,
        ], col
        marker = detail.find_element(
            "css selector", f'tr[data-column="{col}"] td.marker'
        ).text
        assert "differs" in marker
    for col in ("customer_id", "city"):
        assert [("diff" in c.get_attribute("class").split()) for c in cells(col)] == [
            False,
            False,
        ], col
        assert (
            detail.find_element(
                "css selector", f'tr[data-column="{col}"] td.marker'
            ).text
            == ""
        )
    # Winner column comes first: publisher value left, subscriber value right.
    assert [c.text for c in cells("name")] == ["Alice", "Alicia"]
    assert "selected" in driver.find_element(
        "css selector", 'tr[data-conflict-id="c2"]'
    ).get_attribute("class")


def test_browser_subscriber_winner_is_left(driver: Any, page_url: str) -> None:
    open_page(driver, page_url + "#conflict=c4")
    detail = driver.find_element("id", "conflict-detail")
    assert "Winner: subscriber row" in detail.text
    amounts = detail.find_elements("css selector", 'tr[data-column="amount"] td.value')
    assert [a.text for a in amounts] == ["7", "5"]


def test_browser_absent_row(driver: Any, page_url: str) -> None:
    open_page(driver, page_url + "#conflict=c5")
    detail = driver.find_element("id", "conflict-detail")
    assert "(row absent)" in detail.text
    assert "Dana" in detail.text
    assert detail.find_elements("css selector", "td.diff") == []


def test_browser_hash_filters_apply(driver: Any, page_url: str) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(driver, page_url + "#subscriber=s2&type=update_update&article=customers")
    assert count_text(driver) == "1 conflict"
    assert visible_ids(driver) == ["c2"]
    assert (
        Select(
            driver.find_element("id", "filter-subscriber")
        ).first_selected_option.get_attribute("value")
        == "s2"
    )
    assert (
        Select(
            driver.find_element("id", "filter-type")
        ).first_selected_option.get_attribute("value")
        == "update_update"
    )
    # Changing only the hash on a loaded page (shared link pasted) re-filters too.
    driver.execute_script("location.hash = 'from=2026-11-22&to=2026-11-22'")
    assert count_text(driver) == "3 conflicts"
    assert sorted(visible_ids(driver)) == ["c4", "c5", "c6"]
    assert (
        driver.find_element("id", "filter-from").get_attribute("value") == "2026-11-22"
    )
    assert len(driver.find_elements("css selector", "#chart-article rect")) == 2


def test_browser_escapes_malicious_values(driver: Any, tmp_path: pathlib.Path) -> None:
    conflicts = sample_conflicts()[:2]
    conflicts[1]["subscriber_row"]["name"] = XSS
    conflicts[1]["reason_text"] = XSS
    conflicts[1]["subscriber"] = XSS
    url = render_viewer(conflicts, tmp_path).as_uri()
    open_page(driver, url + "#conflict=c2")
    assert count_text(driver) == "2 conflicts"
    assert driver.find_elements("css selector", "img") == []
    assert driver.execute_script("return window.__qrepl_pwned === undefined")
    assert XSS in driver.find_element("id", "conflict-detail").text
    assert XSS in column(driver, 9)


def test_browser_empty_report(driver: Any, tmp_path: pathlib.Path) -> None:
    open_page(driver, render_viewer([], tmp_path).as_uri())
    assert count_text(driver) == "0 conflicts"
    message = driver.find_element("id", "no-conflicts")
    assert message.is_displayed() and message.text == "No conflicts"
    assert driver.find_elements("css selector", "#chart-type rect") == []
    assert severe_console_errors(driver) == []


def test_browser_screenshot(driver: Any, page_url: str) -> None:
    open_page(driver, page_url)
    driver.find_element(
        "css selector", '#conflict-table tr[data-conflict-id="c2"]'
    ).click()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / "viewer.png"
    assert driver.save_screenshot(str(target))
    assert target.stat().st_size > 10_000
