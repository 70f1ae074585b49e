"""Writes by a job that knows nothing of qrepl, at every point of a queue-reader run
(qrepl.tools.replay.RUN_POINTS), through Spark + dbt and through the reference: the same
publisher rows, conflicts, compensating commands and outcomes (docs/spec.md §10: no write by
anyone is overwritten unless a policy decided it, and then a conflict says so).

At each point the job writes five rows the run's batch also writes: an UPDATE of a row the
batch updates, of one it deletes and of one it inserts (which the job's UPDATE finds only
after the batch's MERGE), an INSERT of a row the batch inserts, and a DELETE of a row the batch
updates. A second subscriber then changes the same rows as it saw them before the job, so each
job write that stands is met as a conflict, under every policy. And one row the job changes
and changes back before the MERGE, and one absent row the job inserts and deletes again
before the MERGE: the batch's write of each stands."""

from __future__ import annotations

import pytest

from qrepl.tools.replay import RUN_POINTS, ReferenceBackend, SparkBackend, normalized_outputs, play, scenario_from_dict

pytestmark = pytest.mark.spark

ARTICLE = {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}
AWAY = 901
IN_AND_OUT = 902


def _version(n: int, who: int) -> str:
    return f"{who:08d}-0000-4000-8000-{n:012d}"


def scenario(policy: str) -> dict:
    rows, first, second, during = [], [], [], []
    for i, point in enumerate(RUN_POINTS):
        a, b, c, d, e = (i * 10 + j for j in range(1, 6))
        rows += [{"customer_id": k, "city": f"p{k}", "msrepl_tran_version": _version(k, 1)} for k in (a, b, d)]
        first.append(
            {
                "subscriber": "s1",
                "tran_id": f"s1-{point}",
                "commands": [
                    {
                        "article": "customers",
                        "op": "U",
                        "row": {"customer_id": a, "city": "s1"},
                        "old_version": _version(a, 1),
                        "new_version": _version(a, 2),
                    },
                    {"article": "customers", "op": "D", "key": {"customer_id": b}, "old_version": _version(b, 1)},
                    {
                        "article": "customers",
                        "op": "I",
                        "row": {"customer_id": c, "city": "s1"},
                        "new_version": _version(c, 2),
                    },
                    {
                        "article": "customers",
                        "op": "U",
                        "row": {"customer_id": d, "city": "s1"},
                        "old_version": _version(d, 1),
                        "new_version": _version(d, 2),
                    },
                    {
                        "article": "customers",
                        "op": "I",
                        "row": {"customer_id": e, "city": "s1"},
                        "new_version": _version(e, 2),
                    },
                ],
            }
        )
        during += [
            {
                "article": "customers",
                "op": op,
                "during": point,
                **({"key": {"customer_id": k}} if op == "D" else {"row": {"customer_id": k, "city": f"job-{point}"}}),
            }
            for op, k in (("U", a), ("U", b), ("I", c), ("D", d), ("U", e))
        ]
        # s2 saw s1's changes (distributed before the job's writes reached it)
        second.append(
            {
                "subscriber": "s2",
                "tran_id": f"s2-{point}",
                "commands": [
                    {
                        "article": "customers",
                        "op": "U",
                        "row": {"customer_id": k, "city": "s2"},
                        "old_version": _version(k, 2),
                        "new_version": _version(k, 3),
                    }
                    for k in (a, c, e)
                ],
            }
        )
    # away and back: the job moves row AWAY elsewhere and back before the MERGE, which then finds
    # the row as the batch read it (docs/spec.md §10): s1's update of it stands
    rows.append({"customer_id": AWAY, "city": "p-away", "msrepl_tran_version": _version(AWAY, 1)})
    first.append(
        {
            "subscriber": "s1",
            "tran_id": "s1-away-and-back",
            "commands": [
                {
                    "article": "customers",
                    "op": "U",
                    "row": {"customer_id": AWAY, "city": "s1"},
                    "old_version": _version(AWAY, 1),
                    "new_version": _version(AWAY, 2),
                },
                {
                    "article": "customers",
                    "op": "I",
                    "row": {"customer_id": IN_AND_OUT, "city": "s1"},
                    "new_version": _version(IN_AND_OUT, 2),
                },
            ],
        }
    )
    during += [
        {"article": "customers", "op": "U", "during": at, "row": {"customer_id": AWAY, "city": city}}
        for at, city in (("int_batch_subscriptions", "job-elsewhere"), ("int_queued_commands_judged", "p-away"))
    ]
    # in and out: the job inserts row IN_AND_OUT, absent when the run found it, and deletes it
    # again before the MERGE, which then finds it absent as the batch read it: s1's insert stands
    during += [
        {
            "article": "customers",
            "op": "I",
            "during": "int_batch_subscriptions",
            "row": {"customer_id": IN_AND_OUT, "city": "job"},
        },
        {"article": "customers", "op": "D", "during": "int_queued_commands_judged", "key": {"customer_id": IN_AND_OUT}},
    ]
    return {
        "publication": "sales",
        "policy": policy,
        "articles": [ARTICLE],
        "subscribers": ["s1", "s2"],
        "steps": [
            {"publisher_rows": {"customers": rows}},
            {"enqueue": first},
            *({"outside_write": w} for w in during),
            {"run": {}},
            {"enqueue": second},
            {"run": {}},
        ],
    }


@pytest.mark.parametrize("policy", ["publisher_wins", "publisher_wins_reinit", "subscriber_wins"])
def test_outside_writes_at_every_point_of_a_run_match_the_reference(spark, policy):
    data = scenario(policy)
    expected = normalized_outputs(
        scenario_from_dict(data, "outside"), play(s := scenario_from_dict(data, "outside"), ReferenceBackend(s))
    )
    s = scenario_from_dict(data, "outside")
    actual = normalized_outputs(s, play(s, SparkBackend(s, "qrepl_outside_writes")))
    for table in expected:
        assert actual[table] == expected[table], table
    away = next(r for r in actual["publisher/customers"] if r["customer_id"] == AWAY)
    in_and_out = [r for r in actual["publisher/customers"] if r["customer_id"] == IN_AND_OUT]
    if policy == "publisher_wins_reinit":  # s1's earlier conflict rejects its later transactions
        assert (away["city"], away["msrepl_tran_version"]) == ("p-away", "(stamped)")  # the job's, stamped
        assert in_and_out == []  # the job's insert and delete, nothing of the batch's
    else:  # the batch's writes stand over rows the job left as the batch read them
        assert (away["city"], away["msrepl_tran_version"]) == ("s1", _version(AWAY, 2))
        assert [(r["city"], r["msrepl_tran_version"]) for r in in_and_out] == [("s1", _version(IN_AND_OUT, 2))]
    job_rows = [r for r in expected["publisher/customers"] if str(r["city"]).startswith("job-")]
    conflicts = {c["row_key"] for c in expected["conflicts"] if c["subscriber"] == "s2"}
    assert job_rows, "the scenario keeps some job writes"
    assert conflicts, "s2's changes of rows the job wrote meet conflicts"
