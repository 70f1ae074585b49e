"""Fixtures shared by every test folder, and the layer markers.

Layers (docs/architecture.md): unit/ pure Python, no JVM (`make test-fast`); spark/ the
embedded Spark + dbt; e2e/ the CLI and whole loops on Spark; browser/ headless Chromium.
A test gets its folder's marker (`-m spark`, `-m "not browser"`, ...) even if its file forgets it.
"""

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parents[1]
LAYER_MARKERS = ("spark", "e2e", "browser")
os.environ.setdefault("QREPL_STATE_DIR", str(PROJECT / ".qrepl_state" / "test"))
# `make test` runs two pytest-xdist workers (-n 2 --dist loadfile), each with a Spark of its own:
# a Derby metastore admits one JVM, and two dbt runs must not share target/ or logs/, so each
# worker gets its own state directory, dbt target and log paths
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:
    _STATE = Path(os.environ["QREPL_STATE_DIR"]) / _WORKER
    os.environ["QREPL_STATE_DIR"] = str(_STATE)
    os.environ.setdefault("DBT_TARGET_PATH", str(_STATE / "target"))
    os.environ.setdefault("DBT_LOG_PATH", str(_STATE / "logs"))


def long_tests(path: Path = TESTS / "long_tests.txt") -> list[str]:
    """The entries of long_tests.txt: `make test-all` runs them, `make test` (CI) does not."""
    entries = []
    for line in path.read_text().splitlines():
        entry = line.split("  #")[0].split("#")[0].strip() if not line.lstrip().startswith("#") else ""
        if entry:
            entries.append(entry)
    return entries


def _names(entry: str, test_id: str) -> bool:
    """Does the long_tests.txt entry name this test (a path under python/tests/)?"""
    return test_id == entry or test_id.startswith(entry + "::") or test_id.startswith(entry + "[")


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(items):
    entries = long_tests()
    matched = set()
    modules = {}  # file -> its module, to check that every entry names a test there
    collected = {}  # file::test -> how many of its parameters were collected
    for item in items:
        relative = Path(item.path).resolve().relative_to(TESTS)
        layer = relative.parts[0]
        if layer == "unit" and "spark" in getattr(item, "fixturenames", ()):
            raise pytest.UsageError(f"{item.nodeid}: unit tests run without a JVM; put it in python/tests/spark/")
        if layer in LAYER_MARKERS and not item.get_closest_marker(layer):
            item.add_marker(getattr(pytest.mark, layer))
        test_id = relative.as_posix() + item.nodeid[len(item.nodeid.split("::")[0]) :]
        modules[relative.as_posix()] = item.module
        function = test_id.split("[")[0]
        collected[function] = collected.get(function, 0) + 1
        for entry in entries:
            if _names(entry, test_id):
                item.add_marker(pytest.mark.long)
                matched.add(entry)
    stale = []
    for entry in entries:
        file, _, test = entry.partition("::")
        if file not in modules or entry in matched:
            continue
        name = test.split("[")[0]
        if name and not callable(getattr(modules[file], name, None)):
            stale.append(entry)  # the test was renamed or removed
        elif "[" in test and collected.get(entry.split("[")[0], 0) > 1:
            stale.append(entry)  # every parameter of the test was collected, none is this one
    if stale:
        raise pytest.UsageError(f"python/tests/long_tests.txt names no test: {', '.join(stale)}")


@pytest.fixture(scope="session")
def spark():
    """One embedded Spark (and Derby metastore) for the whole test run."""
    from qrepl.storage.spark import get_spark

    return get_spark()
