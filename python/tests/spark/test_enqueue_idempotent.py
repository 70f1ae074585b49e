"""`qrepl enqueue` is idempotent: the same file twice is a no-op reported as such, a reused
tran_id with other commands is rejected with a reason, and values the queue reader would
quarantine are refused at the file already (never silently NULLed)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.core.model import publication_from_dict
from qrepl.services.service import run_reader
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.spark
SCHEMA = "qrepl_enqueue_again"
V1 = "00000000-0000-4000-8000-000000000001"


@pytest.fixture()
def wh(spark):
    wh = Warehouse(spark, SCHEMA)
    wh.drop_schema()
    wh.write_publication(
        publication_from_dict(
            {
                "publication": "p",
                "articles": [{"name": "items", "key": ["item_id"], "columns": {"item_id": "int", "qty": "int"}}],
            }
        )
    )
    wh.upsert_rows("items", [{"item_id": 1, "qty": 1, "msrepl_tran_version": V1}])
    wh.add_subscription("north")
    return wh


def _enqueue(path):
    return CliRunner().invoke(main, ["enqueue", str(path), "--subscriber", "north", "--schema", SCHEMA])


def _write(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_same_file_twice_is_a_no_op_reported_as_such(wh, tmp_path):
    f = _write(
        tmp_path / "c.jsonl",
        {"tran_id": "t1", "article": "items", "op": "U", "row": {"item_id": 1, "qty": 5}, "old_version": V1},
        {"tran_id": "t2", "article": "items", "op": "I", "row": {"item_id": 2, "qty": 7}},
        {"tran_id": "t3", "article": "nope", "op": "I", "row": {"item_id": 3}},
    )
    first = _enqueue(f)
    assert first.exit_code == 0, first.output
    queued, rejects = wh.rows_of("replication_queue"), wh.rows_of("enqueue_rejects")
    second = _enqueue(f)
    assert second.exit_code == 0, second.output
    assert "2 transaction(s) already queued, skipped" in second.stdout
    assert "enqueued 0 transactions (0 commands)" in second.stdout
    assert len(wh.rows_of("replication_queue")) == len(queued) == 2
    assert len(wh.rows_of("enqueue_rejects")) == len(rejects) == 1
    history = run_reader(SCHEMA, echo=lambda _: None)
    assert (history["transactions_processed"], history["conflicts"]) == (2, 0)
    assert wh.rows_of("enqueue_rejects") == rejects
    assert wh.rows_of("queue_rejects") == []  # the reader quarantined nothing: no doubled commands
    assert sorted((r["item_id"], r["qty"]) for r in wh.publisher_rows("items")) == [(1, 5), (2, 7)]


def test_reused_tran_id_with_other_commands_is_rejected_with_a_reason(wh, tmp_path):
    assert (
        _enqueue(
            _write(
                tmp_path / "a.jsonl", {"tran_id": "t1", "article": "items", "op": "I", "row": {"item_id": 2, "qty": 7}}
            )
        ).exit_code
        == 0
    )
    result = _enqueue(
        _write(tmp_path / "b.jsonl", {"tran_id": "t1", "article": "items", "op": "I", "row": {"item_id": 2, "qty": 8}})
    )
    assert result.exit_code == 0, result.output
    assert "b.jsonl:line 1: tran_id t1 is already queued with different commands" in result.stderr
    assert [r["reason"] for r in wh.rows_of("enqueue_rejects")] == [
        "b.jsonl:line 1: tran_id t1 is already queued with different commands"
    ]
    assert [json.loads(r["new_row"])["qty"] for r in wh.rows_of("replication_queue")] == [7]


@pytest.mark.parametrize(
    "record, reason",
    [
        ({"row": {"item_id": 2, "qty": "abc"}}, "wrong value type for qty (int: abc)"),
        ({"row": {"item_id": 2}}, "missing column(s) qty (I and U rows carry every column)"),
        ({"row": {"item_id": 2, "qty": 1, "color": "red"}}, "unknown column(s) color"),
        ({"row": {"item_id": 2, "qty": 1}, "new_version": "not-a-uuid"}, "new_version 'not-a-uuid' is not a UUID"),
    ],
    ids=["wrong_type", "missing_column", "extra_column", "version_not_uuid"],
)
def test_enqueue_refuses_what_the_reader_would_quarantine(wh, tmp_path, record, reason):
    result = _enqueue(_write(tmp_path / "c.jsonl", {"tran_id": "t1", "article": "items", "op": "I", **record}))
    assert f"c.jsonl:line 1: {reason}" in result.stderr
    assert wh.rows_of("replication_queue") == []
