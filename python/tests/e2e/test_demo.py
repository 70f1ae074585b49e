"""`make demo`, the README's first command, as a newcomer runs it: the whole loop on the
embedded stack, through the services only, with the outcomes its comments promise."""

from __future__ import annotations

import pytest

from qrepl.tools.demo import run_demo

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def test_the_demo_runs_the_loop_it_describes(spark, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines: list[str] = []
    result = run_demo("qrepl_demo_test", echo=lines.append)
    outcome = {o["tran_id"]: o["outcome"] for o in result["outcomes"]}
    assert outcome["north-move-ada"] == "applied"
    assert outcome["north-raise-grace"] == "applied"
    assert outcome["south-raise-grace"] == "rejected"  # same row, stale version
    assert outcome["east-order-100"] == "rejected"  # one stale row rolls back the transaction
    types = sorted({c["conflict_type"] for c in result["conflicts"]})
    assert "update_update" in types and "insert_exists" in types
    assert result["immediate_rejection"]  # west's immediate change met the run's
    assert any(counts["compensations"] > 0 for counts in result["delivered"].values())
    assert any(line.startswith("Conflict viewer: ") for line in lines)
