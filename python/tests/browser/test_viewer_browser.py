"""The static conflict viewer (qrepl.services.viewer) in a real headless Chromium (via chromedriver),
driven like a person would: filters, shared links, side-by-side rows, charts."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from qrepl.services.viewer import render_viewer
from viewer_samples import XSS, sample_conflicts

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return render_viewer(sample_conflicts(), tmp_path_factory.mktemp("viewer")).as_uri()


def open_page(driver: Any, url: str) -> None:
    # Going via about:blank forces a real load: a URL differing only by hash would just fire hashchange.
    driver.get("about:blank")
    driver.get(url)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(lambda d: d.find_element("id", "conflict-count").text.strip())


def count_text(driver: Any) -> str:
    return driver.find_element("id", "conflict-count").text


def visible_ids(driver: Any) -> list[str]:
    rows = driver.find_elements("css selector", "#conflict-table tbody tr[data-conflict-id]")
    return [r.get_attribute("data-conflict-id") for r in rows if r.is_displayed()]


def column(driver: Any, index: int) -> list[str]:
    cells = driver.find_elements("css selector", f"#conflict-table tbody tr td:nth-child({index})")
    return [c.text for c in cells]


def severe_console_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def test_browser_shows_all_conflicts_and_charts(driver: Any, page_url: str) -> None:
    open_page(driver, page_url)
    assert count_text(driver) == "6 conflicts"
    assert sorted(visible_ids(driver)) == ["c1", "c2", "c3", "c4", "c5", "c6"]
    # Newest first.
    assert visible_ids(driver)[0] == "c6"
    assert not driver.find_element("id", "no-conflicts").is_displayed()
    for chart in ("chart-article", "chart-subscriber", "chart-type"):
        assert driver.find_elements("css selector", f"#{chart} rect"), f"{chart} has no bars"
    # Three days of data -> bars on three distinct days in each chart.
    days = {r.get_attribute("data-day") for r in driver.find_elements("css selector", "#chart-type rect")}
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


def test_browser_filter_by_partition_select(driver: Any, page_url: str) -> None:
    """The partition select lists each article's partitions the conflicts were judged in; picking
    one keeps that partition's conflicts (of any subscriber that had it), and travels in the link."""
    from selenium.webdriver.support.ui import Select

    open_page(driver, page_url)
    select = Select(driver.find_element("id", "filter-partition"))
    assert [o.get_attribute("value") for o in select.options] == [
        "",
        "customers: city = 'Oslo'",
        "customers: every row",
        "orders: amount > 10",
        "orders: every row",
    ]
    select.select_by_value("customers: every row")
    assert count_text(driver) == "2 conflicts"
    assert sorted(visible_ids(driver)) == ["c2", "c5"]
    assert set(column(driver, 5)) == {"s2", "s3"}
    assert "partition=customers" in driver.current_url
    driver.find_element("css selector", '#conflict-table tr[data-conflict-id="c5"]').click()
    assert "Partition\ncustomers: every row" in driver.find_element("id", "conflict-detail").text
    # a shared link to one partition opens with it selected
    open_page(driver, page_url + "#partition=" + "orders%3A%20amount%20%3E%2010")
    assert Select(driver.find_element("id", "filter-partition")).first_selected_option.get_attribute("value") == (
        "orders: amount > 10"
    )
    assert visible_ids(driver) == ["c3"]


def test_browser_row_click_shows_diff(driver: Any, page_url: str) -> None:
    open_page(driver, page_url)
    driver.find_element("css selector", '#conflict-table tr[data-conflict-id="c2"]').click()
    detail = driver.find_element("id", "conflict-detail")
    assert "conflict=c2" in driver.current_url
    text = detail.text
    assert "Winner: publisher row" in text and "Loser: subscriber row" in text
    assert "Alice" in text and "Alicia" in text
    assert "update/update conflict on customers" in text
    assert "publisher_wins" in text and "0x000200" in text and "20" in text

    def cells(column_name: str) -> list[Any]:
        return detail.find_elements("css selector", f'tr[data-column="{column_name}"] td.value')

    for col in ("name", "msrepl_tran_version"):
        assert [("diff" in c.get_attribute("class").split()) for c in cells(col)] == [
            True,
            True,
        ], col
        marker = detail.find_element("css selector", f'tr[data-column="{col}"] td.marker').text
        assert "differs" in marker
    for col in ("customer_id", "city"):
        assert [("diff" in c.get_attribute("class").split()) for c in cells(col)] == [
            False,
            False,
        ], col
        assert detail.find_element("css selector", f'tr[data-column="{col}"] td.marker').text == ""
    # Winner column comes first: publisher value left, subscriber value right.
    assert [c.text for c in cells("name")] == ["Alice", "Alicia"]
    assert "selected" in driver.find_element("css selector", 'tr[data-conflict-id="c2"]').get_attribute("class")


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
    assert Select(driver.find_element("id", "filter-subscriber")).first_selected_option.get_attribute("value") == "s2"
    assert (
        Select(driver.find_element("id", "filter-type")).first_selected_option.get_attribute("value") == "update_update"
    )
    # Changing only the hash on a loaded page (shared link pasted) re-filters too.
    driver.execute_script("location.hash = 'from=2026-11-22&to=2026-11-22'")
    assert count_text(driver) == "3 conflicts"
    assert sorted(visible_ids(driver)) == ["c4", "c5", "c6"]
    assert driver.find_element("id", "filter-from").get_attribute("value") == "2026-11-22"
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


def test_browser_screenshot(driver: Any, page_url: str, artifacts: pathlib.Path) -> None:
    open_page(driver, page_url)
    driver.find_element("css selector", '#conflict-table tr[data-conflict-id="c2"]').click()
    target = artifacts / "viewer.png"
    assert driver.save_screenshot(str(target))
    assert target.stat().st_size > 10_000
