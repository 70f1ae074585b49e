"""A replica write that loses to a concurrent commit is run again; any other failure is raised."""

from __future__ import annotations

import pytest

from qrepl.storage.replica import retry_on_commit_conflict

# The texts Iceberg gives (wrapped by py4j) when a concurrent writer committed first.
LOST_TO_A_CONCURRENT_COMMIT = [
    "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can contain records matching true",
    "org.apache.iceberg.exceptions.CommitFailedException: Cannot commit: stale table metadata",
    "java.lang.IllegalStateException: Runtime file filtering is not possible: the table has been concurrently "
    "modified. Row-level operation scan snapshot ID: 1, current table snapshot ID: 2.",
]


def flaky(first_error: str, failures: int = 1):
    calls = []

    def write():
        calls.append(1)
        if len(calls) <= failures:
            raise RuntimeError(first_error)
        return "written"

    return write, calls


@pytest.mark.parametrize("text", LOST_TO_A_CONCURRENT_COMMIT)
def test_a_write_that_lost_to_a_concurrent_commit_is_run_again(text, monkeypatch):
    monkeypatch.setattr("qrepl.storage.replica.time.sleep", lambda _: None)
    write, calls = flaky(text)
    assert retry_on_commit_conflict(write) == "written"
    assert len(calls) == 2


def test_any_other_failure_is_raised_at_once(monkeypatch):
    monkeypatch.setattr("qrepl.storage.replica.time.sleep", lambda _: None)
    write, calls = flaky("java.lang.IllegalStateException: something else")
    with pytest.raises(RuntimeError, match="something else"):
        retry_on_commit_conflict(write)
    assert len(calls) == 1


def test_a_conflict_that_persists_is_raised_after_the_last_attempt(monkeypatch):
    monkeypatch.setattr("qrepl.storage.replica.time.sleep", lambda _: None)
    write, calls = flaky(LOST_TO_A_CONCURRENT_COMMIT[2], failures=10)
    with pytest.raises(RuntimeError, match="Runtime file filtering"):
        retry_on_commit_conflict(write, attempts=3)
    assert len(calls) == 3
