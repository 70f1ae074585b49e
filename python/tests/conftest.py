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


def pytest_collection_modifyitems(items):
    for item in items:
        layer = Path(item.path).resolve().relative_to(TESTS).parts[0]
        if layer == "unit" and "spark" in getattr(item, "fixturenames", ()):
            raise pytest.UsageError(f"{item.nodeid}: unit tests run without a JVM; put it in python/tests/spark/")
        if layer in LAYER_MARKERS and not item.get_closest_marker(layer):
            item.add_marker(getattr(pytest.mark, layer))


@pytest.fixture(scope="session")
def spark():
    """One embedded Spark (and Derby metastore) for the whole test run."""
    from qrepl.storage.spark import get_spark

    return get_spark()
