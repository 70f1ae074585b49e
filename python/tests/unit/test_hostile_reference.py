"""The hostile-input catalogue on the reference (the spec): each class of bad queue row is
quarantined into queue_rejects with its reason, its whole transaction with it, while the good
transactions written beside them are applied. One named test per class."""

from __future__ import annotations

import pytest

from hostile_catalogue import BATCH_TIME, GOOD, HOSTILE, PUBLICATION, PUBLISHER_ROWS, queue_rows
from qrepl.core.model import REJECT_REASONS, REJECT_WHOLE_TRANSACTION, publication_from_dict
from qrepl.core.reference import ReferenceReader


def hostile_batch() -> ReferenceReader:
    reader = ReferenceReader(publication_from_dict(PUBLICATION))
    for s in ("s1", "s2"):  # `gone` was dropped: not subscribed any more
        reader.add_subscription(s)
    for article, rows in PUBLISHER_ROWS.items():
        for row in rows:
            reader.put_row(article, row)
    reader.queue.extend(queue_rows())
    reader.run(BATCH_TIME)
    return reader


@pytest.fixture(scope="module")
def reader() -> ReferenceReader:
    return hostile_batch()


def test_catalogue_has_at_least_twenty_classes_and_reasons():
    assert len(HOSTILE) >= 20
    assert len({reason for _, reason, _ in HOSTILE}) >= 20
    assert {reason for _, reason, _ in HOSTILE} <= set(REJECT_REASONS)


@pytest.mark.parametrize("name, reason, rows", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_class_is_quarantined_with_its_reason(reader, name, reason, rows):
    """Every row of the class's transaction lands in queue_rejects: the bad command(s) with the
    class's reason, the rest with 'transaction has a quarantined command'; nothing of it is judged."""
    trans = {(r["subscriber"], r["tran_id"]) for r in rows}
    rejected = [r for r in reader.queue_rejects if (r["subscriber"], r["tran_id"]) in trans]
    assert len(rejected) == len(rows)
    reasons = {r["reason"] for r in rejected}
    assert reason in reasons and reasons <= {reason, REJECT_WHOLE_TRANSACTION}
    assert not [o for o in reader.transaction_outcomes if (o["subscriber"], o["tran_id"]) in trans]


def test_good_transactions_beside_hostile_ones_are_applied(reader):
    outcomes = {o["tran_id"]: o["outcome"] for o in reader.transaction_outcomes}
    assert outcomes == {name: "applied" for name, _ in GOOD}
    customers = reader.publisher["customers"]
    assert customers['{"customer_id":1}']["city"] == "moved"
    assert customers['{"customer_id":3}']["city"] == "upper"
    assert '{"customer_id":4}' not in customers
    assert {'{"customer_id":10}', '{"customer_id":11}'} <= set(customers)
    assert all(r["customer_id"] is not None for r in customers.values())
    assert customers['{"customer_id":2}']["city"] == "x"  # every hostile change to it was quarantined


def test_exact_copies_of_a_command_collapse_to_one(reader):
    """An outside writer's retry wrote g_copy twice, byte for byte: applied once, nothing rejected."""
    assert not [r for r in reader.queue_rejects if r["tran_id"] == "g_copy"]
    assert [o["tran_id"] for o in reader.transaction_outcomes].count("g_copy") == 1
    assert reader.history[-1]["commands_processed"] == sum(len(rows) for _, rows in GOOD)


def test_versions_and_op_are_read_case_insensitively(reader):
    """Staging upper-cases op and lower-cases versions; the reference reads them the same way."""
    row = reader.publisher["customers"]['{"customer_id":3}']
    assert row["msrepl_tran_version"] == row["msrepl_tran_version"].lower()


def test_new_version_used_in_an_earlier_batch_is_reused():
    reader = hostile_batch()
    used = reader.publisher["customers"]['{"customer_id":10}']["msrepl_tran_version"]
    reader.queue.append(
        {
            **[r for r in queue_rows() if r["tran_id"] == "g_insert"][0],
            "tran_id": "again",
            "row_key": '{"customer_id":12}',
            "new_row": '{"customer_id":12,"name":"a","city":null,"credit_limit":null,'
            '"since":null,"active":null,"score":null}',
            "new_version": used,
        }
    )
    reader.run(BATCH_TIME)
    assert [(r["tran_id"], r["reason"]) for r in reader.queue_rejects if r["batch_id"] == 2] == [
        ("again", "reused new_version")
    ]


@pytest.mark.parametrize("column", ["row", "change_op", "msrepl_tran_version", "batch_id", "Row_Key"])
def test_publication_refuses_a_column_named_like_the_readers_own(column):
    """A column such as `row` or `change_op` would collide with the reader's own columns in the
    publisher MERGE; `qrepl publication create` refuses it with one line."""
    from qrepl.core.model import ConfigError

    with pytest.raises(ConfigError) as err:
        publication_from_dict(
            {"publication": "p", "articles": [{"name": "a", "key": ["id"], "columns": {"id": "int", column: "string"}}]}
        )
    assert len(str(err.value).splitlines()) == 1
    assert column in str(err.value)


def test_a_publisher_row_holding_nan_does_not_block_changes_to_it(reader):
    """Issue 57 case 8: a job wrote NaN into customer 5's score; a change to its city carries
    the NaN unchanged (as "NaN", Spark's spelling) and is applied; the NaN stays, and the
    non-finite values the reader reads are exactly the three spellings to_json writes."""
    import math

    outcomes = {o["tran_id"]: o["outcome"] for o in reader.transaction_outcomes}
    assert outcomes["g_publisher_nan_carried"] == outcomes["g_non_finite"] == "applied"
    customers = reader.publisher["customers"]
    assert customers['{"customer_id":5}']["city"] == "moved" and math.isnan(customers['{"customer_id":5}']["score"])
    assert (
        customers['{"customer_id":17}']["score"] == math.inf and customers['{"customer_id":18}']["score"] == -math.inf
    )
