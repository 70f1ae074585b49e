"""A run reads the publication's configuration and its batch id once, and every node of the
run uses that one answer (macros qrepl_config, qrepl_batch_id, qrepl_run_cache). The answer
belongs to one dbt invocation: the next run in the same process (the CLI's loop, a replay, a
long-lived service) reads them again, so a publication edited between runs takes effect at the
next run and each run gets its own batch."""

from __future__ import annotations

from datetime import datetime

import pytest

from qrepl.storage.dbt_runner import run_queue_reader
from qrepl.core.model import publication_from_dict
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark

SCHEMA = "qrepl_run_cache"
CUSTOMERS = {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}}
ORDERS = {"name": "orders", "key": ["order_id"], "columns": {"order_id": "int", "note": "string"}}
V = "00000000-0000-4000-8000-{:012d}".format


def _insert(seq: int, article: str, key_column: str, value_column: str) -> dict:
    return {
        "subscriber": "s1",
        "generation": 0,
        "tran_id": f"t{seq}",
        "tran_seq": seq,
        "command_seq": 1,
        "article": article,
        "op": "I",
        "row_key": f'{{"{key_column}":{seq}}}',
        "old_version": None,
        "new_version": V(100 + seq),
        "new_row": f'{{"{key_column}":{seq},"{value_column}":"v{seq}"}}',
        "old_row": None,
        "enqueued_at": datetime(2026, 1, 1, 0, 0, seq),
    }


def test_an_article_added_between_two_runs_of_one_process_is_read_by_the_second(spark):
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict({"publication": "sales", "policy": "publisher_wins", "articles": [CUSTOMERS]})
    )
    wh.add_subscription("s1")
    wh.append_queue([_insert(1, "customers", "customer_id", "city")])
    run_queue_reader(SCHEMA)

    wh.write_publication(
        publication_from_dict({"publication": "sales", "policy": "publisher_wins", "articles": [CUSTOMERS, ORDERS]})
    )
    wh.append_queue([_insert(2, "orders", "order_id", "note")])
    run_queue_reader(SCHEMA)  # same process, next dbt invocation

    outcomes = sorted((o["tran_id"], o["batch_id"], o["outcome"]) for o in wh.rows_of("transaction_outcomes"))
    assert outcomes == [("t1", 1, "applied"), ("t2", 2, "applied")]
    assert wh.rows_of("queue_rejects") == []
    assert [(r["order_id"], r["note"]) for r in wh.publisher_rows("orders")] == [(2, "v2")]
    assert sorted(r["batch_id"] for r in wh.rows_of("queue_reader_history")) == [1, 2]
