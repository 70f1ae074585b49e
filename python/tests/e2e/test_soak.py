"""The soak's CI-sized part (python/tests/e2e/soak_check.py, `make soak` for the 10 minutes):
the same three processes on one PostgreSQL metastore for the qrepl process's first four
operations (run, maintain, resolve by hand, subscription add; then a run and a distribute once
the others stop), the job and the subscribers writing the same rows meanwhile; then every job write is checked
row by row against the table's history and the conflict log."""

import pytest

from soak_check import run_soak, soak_metastore  # noqa: F401 - the fixture

pytestmark = pytest.mark.e2e


def test_soak_one_round_no_job_write_is_lost(soak_metastore):  # noqa: F811
    env, deploy = soak_metastore
    report = run_soak(env, deploy, "publisher_wins", seconds=600, ops=4)
    assert report["job_writes"]["committed"] > 0
    assert report["losses"] == []
