"""The conflict viewer of a real conflict log, 100k conflicts, in headless Chromium: the page
stays small, opens at once (time to first render printed, not asserted), counts every
conflict, and its filters, pages and links reach conflicts far from the first page.

The conflicts go straight into the `conflicts` table of a small publication, with one
DataFrame over range(100000) (a real batch of 100k conflicts would take minutes); `qrepl
viewer` (service.write_conflict_viewer) then reads them as it reads any log."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from qrepl.services.service import write_conflict_viewer
from queue_fixtures import CUSTOMERS, customers_publication

pytestmark = [pytest.mark.browser, pytest.mark.spark]

SCHEMA = "qrepl_viewer_scale"
TOTAL = 100_000
# The page (index.html alone): counts per group + the first 500 rows + the code. It grows with
# the groups, not the conflicts: 100k conflicts in 75 groups make 0.18 MB.
PAGE_BYTES_BOUND = 1_000_000
# Five conflicts of subscriber "rare", spread over the log: none among the newest rows.
RARE = (12_345, 33_333, 54_321, 77_777, 99_990)
TYPES = ("update_update", "update_missing", "delete_update", "delete_missing", "insert_exists")


@pytest.fixture(scope="module")
def scale_viewer(spark, tmp_path_factory):
    wh = customers_publication(
        spark, SCHEMA, {"publication": "pub_scale", "policy": "publisher_wins", "articles": [CUSTOMERS]}, 3
    )
    rare = ", ".join(str(i) for i in RARE)
    types = ", ".join(f"'{t}'" for t in TYPES)
    # Ten batches, seven hours apart (three days); subscribers s0..s6 and the rare one.
    spark.range(TOTAL).selectExpr(
        "md5(cast(id as string)) as conflict_id",
        "cast(id % 10 as bigint) as batch_id",
        "'pub_scale' as publication",
        "'customers' as article",
        "to_json(named_struct('customer_id', id)) as row_key",
        f"case when id in ({rare}) then 'rare' else concat('s', id % 7) end as subscriber",
        "concat('t-', id) as tran_id",
        "1 as command_seq",
        f"element_at(array({types}), cast(id % 5 as int) + 1) as conflict_type",
        "cast(id % 5 as int) + 1 as conflict_type_code",
        f"concat(element_at(array({types}), cast(id % 5 as int) + 1), ' conflict on customers') as reason_text",
        "'publisher_wins' as policy",
        "'publisher' as winner",
        "to_json(named_struct('customer_id', id, 'city', concat('pub ', id), 'msrepl_tran_version', "
        "concat('P-', id))) as publisher_row",
        "to_json(named_struct('customer_id', id, 'city', concat('sub ', id), 'msrepl_tran_version', "
        "concat('S-', id))) as subscriber_row",
        "concat('P-', id) as publisher_version",
        "concat('O-', id) as old_version",
        "concat('S-', id) as new_version",
        "timestamp'2026-11-20 00:00:00' + make_interval(0, 0, 0, 0, cast(id % 10 as int) * 7) as detected_at",
    ).writeTo(wh.table("conflicts")).using("iceberg").create()
    # One of the rare conflicts was resolved by hand (conflict_reviews, as the resolve macro writes it).
    spark.createDataFrame(
        [(_id(RARE[2]), "subscriber", "subscriber row applied", "dba", "V-resolved")],
        "conflict_id STRING, keep STRING, outcome STRING, resolved_by STRING, written_version STRING",
    ).selectExpr("*", "timestamp'2026-11-23 12:00:00' as resolved_at").writeTo(wh.table("conflict_reviews")).using(
        "iceberg"
    ).create()
    out = tmp_path_factory.mktemp("scale-viewer")
    started = time.perf_counter()
    index = write_conflict_viewer(SCHEMA, out, title="100k conflicts")
    print(
        f"\nqrepl viewer of {TOTAL:,} conflicts: written in {time.perf_counter() - started:.1f} s; "
        f"index.html {index.stat().st_size:,} bytes; side files "
        f"{sum(p.stat().st_size for p in out.rglob('*.js')):,} bytes in {len(list(out.rglob('*.js')))} files"
    )
    return index


def _id(n: int) -> str:
    import hashlib

    return hashlib.md5(str(n).encode()).hexdigest()


def _open(driver: Any, url: str) -> float:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    started = time.perf_counter()
    driver.get(url)
    WebDriverWait(driver, 60).until(lambda d: d.find_element("id", "conflict-count").text.strip())
    return time.perf_counter() - started


def _wait(driver: Any, condition) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 30).until(lambda d: condition(d))


def _ids(driver: Any) -> list[str]:
    return [
        r.get_attribute("data-conflict-id")
        for r in driver.find_elements("css selector", "#conflict-table tbody tr[data-conflict-id]")
    ]


def test_100k_conflicts_open_small_and_count_every_conflict(driver, scale_viewer, artifacts):
    size = scale_viewer.stat().st_size
    assert size < PAGE_BYTES_BOUND, f"index.html is {size:,} bytes"
    wall = _open(driver, scale_viewer.as_uri())
    first_render = driver.execute_script(
        "const m = performance.getEntriesByName('qrepl-first-render'); return m.length ? m[0].startTime : null;"
    )
    print(
        f"\nviewer of {TOTAL:,} conflicts: index.html {size:,} bytes; first render {first_render:.0f} ms "
        f"after navigation start (load + count visible: {wall:.2f} s)"
    )
    assert first_render is not None
    assert driver.find_element("id", "conflict-count").text == "100,000 conflicts"
    assert driver.find_element("id", "total-count").text == "100,000 conflicts in this report"
    assert len(_ids(driver)) == 100  # one page of rows in the DOM, not 100k
    assert driver.find_element("id", "page-info").text == "1–100 of 100,000 (page 1 of 1,000)"
    # The charts count every conflict (per-group counts), whatever the table shows.
    total = driver.execute_script("""
        return Array.from(document.querySelectorAll('#chart-type rect')).reduce((n, r) =>
          n + Number(r.querySelector('title').textContent.replace(/.*: ([0-9,]+) conflicts?$/, '$1').replace(/,/g, '')), 0);""")
    assert total == TOTAL
    # Each y-axis label is a whole number and lies inside its chart (old: "0000" for 40000).
    for chart in ("chart-article", "chart-subscriber", "chart-type"):
        labels = driver.execute_script(f"""
            return Array.from(document.querySelectorAll('#{chart} text.y-label')).map(t =>
              [t.textContent, t.getBBox().x]);""")
        assert labels[-1][0] == "40,000", labels
        assert all(x >= 0 for _, x in labels), (chart, labels)
    assert [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []
    assert driver.save_screenshot(str(artifacts / "viewer-100k.png"))


def test_100k_filter_reaches_conflicts_far_from_the_first_page(driver, scale_viewer):
    from selenium.webdriver.support.ui import Select

    _open(driver, scale_viewer.as_uri())
    first_page = set(_ids(driver))
    Select(driver.find_element("id", "filter-subscriber")).select_by_value("rare")
    assert driver.find_element("id", "conflict-count").text == "5 conflicts"
    assert driver.find_element("id", "conflict-of").text == "of 100,000"
    # Their rows come from side files: the table fills once the chunks have loaded.
    _wait(driver, lambda d: len(_ids(d)) == 5)
    assert set(_ids(driver)) == {_id(i) for i in RARE} and not first_page & set(_ids(driver))
    assert {c.text for c in driver.find_elements("css selector", "#conflict-table tbody td:nth-child(5)")} == {"rare"}
    driver.find_element("css selector", f'#conflict-table tr[data-conflict-id="{_id(RARE[2])}"]').click()
    detail = driver.find_element("id", "conflict-detail").text
    assert f"sub {RARE[2]}" in detail and f"pub {RARE[2]}" in detail
    assert "keep subscriber: subscriber row applied (by dba at 2026-11-23T12:00:00)" in detail
    bars = driver.find_elements("css selector", "#chart-subscriber rect")
    assert {b.get_attribute("data-category") for b in bars} == {"rare"}


def test_100k_pages_and_links_reach_any_conflict(driver, scale_viewer):
    _open(driver, scale_viewer.as_uri())
    page1 = _ids(driver)
    driver.find_element("id", "page-older").click()
    assert "page=2" in driver.current_url
    page2 = _ids(driver)
    assert len(page2) == 100 and not set(page1) & set(page2)
    # The last page lies in the last side file.
    driver.execute_script("location.hash = 'page=1000'")
    _wait(driver, lambda d: len(_ids(d)) == 100 and d.find_element("id", "page-info").text.startswith("99,901–100,000"))
    # A shared link to a conflict in no loaded chunk: ids.js says where it is.
    deep = _id(RARE[0])
    _open(driver, scale_viewer.as_uri() + f"#conflict={deep}")
    _wait(driver, lambda d: deep in d.find_element("id", "conflict-detail").text)
    assert f"sub {RARE[0]}" in driver.find_element("id", "conflict-detail").text
    _open(driver, scale_viewer.as_uri() + "#conflict=no-such-conflict")
    _wait(driver, lambda d: "is not in this file" in d.find_element("id", "conflict-detail").text)
    assert re.fullmatch(r"[\d,]+ conflicts", driver.find_element("id", "conflict-count").text)
