"""The hostile-input catalogue through the real pipeline: every hostile row and the good
transactions are appended straight to `replication_queue` (a DataFrame append, as an outside
writer would), the queue reader runs once through dbt, and queue_rejects (row + reason), the
outcomes and the publisher equal what the reference produces."""

from __future__ import annotations

import pytest

from hostile_catalogue import BATCH_TIME, GOOD, HOSTILE, PUBLICATION, PUBLISHER_ROWS, SUBSCRIBERS, queue_rows
from qrepl.core.model import REJECT_WHOLE_TRANSACTION
from qrepl.tools.replay import ReferenceBackend, SparkBackend, normalized_outputs, scenario_from_dict

pytestmark = pytest.mark.spark
SCHEMA = "qrepl_hostile"


def _load(backend, scenario) -> dict:
    for article, rows in PUBLISHER_ROWS.items():
        backend.put_publisher_rows(article, rows)
    backend.enqueue(queue_rows())
    backend.run(BATCH_TIME)
    return backend.outputs()


def _rejects(outputs: dict) -> list[tuple]:
    return sorted(
        (
            r["subscriber"] or "",
            r["tran_id"] or "",
            r["command_seq"] or 0,
            r["op"] or "",
            r["row_key"] or "",
            r["new_row"] or "",
            r["old_version"] or "",
            r["new_version"] or "",
            r["reason"],
        )
        for r in outputs["queue_rejects"]
    )


@pytest.fixture(scope="module")
def both(spark):
    scenario = scenario_from_dict({**PUBLICATION, "subscribers": SUBSCRIBERS, "steps": []}, "hostile")
    reference = ReferenceBackend(scenario)
    del reference.reader.subscriptions["gone"]
    spark_backend = SparkBackend(scenario, SCHEMA)
    spark_backend.wh.drop_subscription("gone")  # a dropped subscription's rows still arrive
    expected, actual = _load(reference, scenario), _load(spark_backend, scenario)
    return scenario, expected, actual


def test_spark_quarantines_the_same_rows_for_the_same_reasons_as_the_reference(both):
    _, expected, actual = both
    assert _rejects(actual) == _rejects(expected)


def test_spark_publisher_and_outcomes_equal_the_reference(both):
    scenario, expected, actual = both
    assert normalized_outputs(scenario, actual) == normalized_outputs(scenario, expected)


@pytest.mark.parametrize("name, reason, rows", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_class_is_quarantined_on_spark(both, name, reason, rows):
    _, _, actual = both
    trans = {(r["subscriber"], r["tran_id"]) for r in rows}
    reasons = [r["reason"] for r in actual["queue_rejects"] if (r["subscriber"], r["tran_id"]) in trans]
    assert len(reasons) == len(rows) and reason in reasons and set(reasons) <= {reason, REJECT_WHOLE_TRANSACTION}


def test_good_transactions_are_applied_on_spark(both):
    _, _, actual = both
    assert {o["tran_id"]: o["outcome"] for o in actual["transaction_outcomes"]} == {n: "applied" for n, _ in GOOD}
    customers = {r["customer_id"]: r for r in actual["publisher"]["customers"]}
    assert customers[1]["city"] == "moved" and customers[3]["city"] == "upper" and 4 not in customers
    assert None not in customers and {10, 11} <= set(customers)
    assert customers[2]["city"] == "x"


def test_a_publisher_row_holding_nan_does_not_block_changes_to_it_on_spark(both):
    # issue 57 case 8: the change carries the publisher's NaN as "NaN" and is applied, as on the reference
    import math

    _, _, actual = both
    customers = {r["customer_id"]: r for r in actual["publisher"]["customers"]}
    assert customers[5]["city"] == "moved" and math.isnan(float(customers[5]["score"]))
    assert float(customers[17]["score"]) == math.inf and float(customers[18]["score"]) == -math.inf
