"""A publisher table that holds one key twice (written around qrepl) must not multiply the
commands on that key into false conflicts or a failing MERGE: those commands are quarantined
with a reason, the key's rows are left as they are, and other transactions proceed."""

from __future__ import annotations

from datetime import datetime

import pytest

from qrepl.core.model import publication_from_dict
from qrepl.services.service import run_reader
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_dupkey"
PUBLICATION = {
    "publication": "sales",
    "policy": "subscriber_wins",
    "articles": [{"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}],
}
V = "00000000-0000-4000-8000-00000000000{}".format


def _command(tran_id: str, key: int, old: str, new: str, city: str) -> dict:
    return {
        "subscriber": "s1",
        "generation": 0,
        "tran_id": tran_id,
        "tran_seq": int(tran_id[-1]),
        "command_seq": 1,
        "article": "customers",
        "op": "U",
        "row_key": f'{{"customer_id":{key}}}',
        "old_version": old,
        "new_version": new,
        "new_row": f'{{"customer_id":{key},"city":"{city}"}}',
        "old_row": None,
        "enqueued_at": datetime(2026, 1, 1, 0, 0, int(tran_id[-1])),
    }


def test_commands_on_a_duplicated_publisher_key_are_quarantined(spark):
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.add_subscription("s1")
    spark.createDataFrame(
        [(1, "a", V(1)), (1, "b", V(2)), (2, "c", V(3))], "customer_id INT, city STRING, msrepl_tran_version STRING"
    ).writeTo(wh.table("customers")).append()
    wh.append_queue([_command("t1", 1, V(1), V(5), "x"), _command("t2", 2, V(3), V(6), "y")])
    run_reader(SCHEMA, echo=lambda _: None)
    rejects = {r["tran_id"]: r["reason"] for r in wh.rows_of("queue_rejects")}
    assert rejects == {"t1": "publisher table holds this key more than once"}
    outcomes = {o["tran_id"]: o["outcome"] for o in wh.rows_of("transaction_outcomes")}
    assert outcomes == {"t2": "applied"}
    rows = sorted((r["customer_id"], r["city"]) for r in wh.publisher_rows("customers"))
    assert rows == [(1, "a"), (1, "b"), (2, "y")]
    assert wh.rows_of("conflicts") == []
