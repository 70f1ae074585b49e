"""Headless Chromium for the browser tests (Debian's chromium + chromium-driver: `make browser`).

If the browser cannot be started the tests FAIL, so CI cannot go green without them; set
QREPL_ALLOW_NO_BROWSER=1 to skip them instead on a machine that has no Chromium.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

ARTIFACTS = pathlib.Path(__file__).resolve().parents[1] / "artifacts"  # screenshots kept by CI

CHROMIUM = os.environ.get("QREPL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("QREPL_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _browser_unavailable(reason: str) -> None:
    """Fail loudly by default: a silently skipped browser test hides a broken viewer."""
    if os.environ.get("QREPL_ALLOW_NO_BROWSER") == "1":
        pytest.skip(f"headless Chromium unavailable (QREPL_ALLOW_NO_BROWSER=1): {reason}")
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
        browser = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    except WebDriverException as exc:
        shutil.rmtree(profile, ignore_errors=True)
        _browser_unavailable(f"could not start {CHROMIUM} via {CHROMEDRIVER}: {exc.msg or exc}")
    browser.set_page_load_timeout(30)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def artifacts() -> pathlib.Path:
    """python/tests/artifacts/: screenshots a person (or CI) looks at after the run."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
