import os
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
os.environ.setdefault("QREPL_STATE_DIR", str(PROJECT / ".qrepl_state" / "test"))


@pytest.fixture(scope="session")
def spark():
    """One embedded Spark (and Derby metastore) for the whole test run."""
    from qrepl.spark import get_spark

    return get_spark()
