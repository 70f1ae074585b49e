"""A dbt call from the Python layer leaves the process's environment as it found it
(issue: `dbt_invoke` once left QREPL_SCHEMA behind, so a later call, or
`service.warehouse(None)`, silently worked on the last run's schema)."""

from __future__ import annotations

import os

import pytest

from qrepl.storage.dbt_runner import dbt_invoke
from qrepl.services.service import warehouse

pytestmark = pytest.mark.spark


def test_a_dbt_call_leaves_no_schema_behind(spark, monkeypatch):
    monkeypatch.delenv("QREPL_SCHEMA", raising=False)
    before = dict(os.environ)
    dbt_invoke(["parse"], "qrepl_env_probe")
    assert dict(os.environ) == before
    assert warehouse(None).schema == "qrepl"  # the default, not the schema of the call before


def test_a_schema_set_by_the_user_is_kept(spark, monkeypatch):
    monkeypatch.setenv("QREPL_SCHEMA", "users_own")
    dbt_invoke(["parse"], "qrepl_env_probe")
    assert os.environ["QREPL_SCHEMA"] == "users_own"
