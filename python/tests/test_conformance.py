"""Property test: random workloads through Spark + dbt and through the reference agree.

CI runs QREPL_CONFORMANCE_EXAMPLES (default 5) workloads per policy in one Spark session;
`make conformance N=300` runs more on demand.
"""

from __future__ import annotations

import os
import uuid

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from qrepl.replay import ReferenceBackend, SparkBackend, normalized_outputs, play, scenario_from_dict

EXAMPLES = int(os.environ.get("QREPL_CONFORMANCE_EXAMPLES", "5"))


@st.composite
def workloads(draw, policy: str) -> dict:
    articles = [
        {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}},
        {"name": "lines", "key": ["order_id", "line_no"],
         "columns": {"order_id": "int", "line_no": "int", "qty": "int"}},
    ][: draw(st.integers(1, 2))]
    subscribers = [f"s{i}" for i in range(1, draw(st.integers(1, 4)) + 1)]
    rng_versions = []

    def fresh() -> str:
        value = str(uuid.UUID(int=draw(st.integers(0, 2**64)) | (1 << 100) | (len(rng_versions) << 80)))
        rng_versions.append(value)
        return value

    def key_row(article, k: int) -> dict:
        if article["name"] == "customers":
            return {"customer_id": k}
        return {"order_id": k, "line_no": 1 + k % 2}

    def full_row(article, k: int) -> dict:
        r = key_row(article, k)
        if article["name"] == "customers":
            r["city"] = draw(st.sampled_from(["a", "b", "c"]))
        else:
            r["qty"] = draw(st.integers(0, 9))
        return r

    known: dict[tuple[str, int], str] = {}
    publisher = {}
    for article in articles:
        rows = []
        for k in range(draw(st.integers(0, 3))):
            version = fresh()
            known[(article["name"], k)] = version
            rows.append({**full_row(article, k), "msrepl_tran_version": version})
        publisher[article["name"]] = rows
    steps = [{"publisher_rows": publisher}]
    for _ in range(draw(st.integers(1, 2))):
        transactions = []
        for t in range(draw(st.integers(1, 6))):
            commands = []
            for _ in range(draw(st.integers(1, 3))):
                article = draw(st.sampled_from(articles))
                k = draw(st.integers(0, 3))
                op = draw(st.sampled_from(["I", "U", "U", "D"]))
                seen = known.get((article["name"], k))
                old = draw(st.sampled_from([seen, fresh(), rng_versions[0] if rng_versions else None])) \
                    if op != "I" else None
                new = fresh() if op != "D" else None
                cmd = {"article": article["name"], "op": op, "old_version": old or fresh(), "new_version": new}
                if op == "I":
                    cmd.pop("old_version")
                    cmd["old_version"] = None
                if op == "D":
                    cmd["key"] = key_row(article, k)
                else:
                    cmd["row"] = full_row(article, k)
                if op != "D" and draw(st.booleans()):
                    known[(article["name"], k)] = new
                commands.append(cmd)
            transactions.append({"subscriber": draw(st.sampled_from(subscribers)),
                                 "tran_id": f"t{len(steps)}_{t}", "commands": commands})
        steps.append({"enqueue": transactions})
        steps.append({"run": {}})
        if policy == "publisher_wins_reinit" and draw(st.booleans()):
            steps.append({"reinitialize": {"subscriber": draw(st.sampled_from(subscribers))}})
    return {"publication": "sales", "policy": policy, "articles": articles,
            "subscribers": subscribers, "steps": steps}


def _check(spark, data: dict) -> None:
    scenario = scenario_from_dict(data, "generated")
    expected = normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))
    actual = normalized_outputs(scenario, play(scenario, SparkBackend(scenario)))
    assert actual == expected


@pytest.mark.parametrize("policy", ["publisher_wins", "publisher_wins_reinit", "subscriber_wins"])
def test_generated_workloads_match_reference(spark, policy):
    """Random publications, subscribers, hot rows, multi-command transactions, stale / current /
    garbage old versions and reinitializations: Spark + dbt == reference."""

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CI") == "true", database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(workloads(policy))
    def check(data):
        _check(spark, data)

    check()
