"""`qrepl enqueue FILE --subscriber S`: good records proceed, bad ones are reported with their
line number and land in enqueue_rejects with a reason, the subscriber comes from the subscription."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.core.model import publication_from_dict
from qrepl.services.service import run_reader
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.e2e

SCHEMA = "qrepl_enqueue"
V1 = "00000000-0000-4000-8000-000000000001"


def test_enqueue_jsonl_and_csv(spark, tmp_path, monkeypatch):
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

    jsonl = tmp_path / "changes.jsonl"
    jsonl.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "tran_id": "t1",
                        "article": "items",
                        "op": "U",
                        "row": {"item_id": 1, "qty": 5},
                        "old_version": V1,
                        "subscriber": "someone_else",
                    }
                ),
                json.dumps({"tran_id": "t1", "article": "items", "op": "I", "row": {"item_id": 2, "qty": 7}}),
                json.dumps({"tran_id": "t2", "article": "nope", "op": "I", "row": {"item_id": 3}}),
                "{broken",
            ]
        )
        + "\n"
    )
    csv_file = tmp_path / "changes.csv"
    csv_file.write_text(
        "tran_id,article,op,row,key,old_version,new_version\n"
        't3,items,I,"{""item_id"": 9, ""qty"": 1}",,,\n'
        f"t4,items,D,,,{V1},\n"
    )

    result = CliRunner().invoke(main, ["enqueue", str(jsonl), "--subscriber", "north", "--schema", SCHEMA])
    assert result.exit_code == 0, result.output
    assert "enqueued 1 transactions (2 commands); 2 record(s) rejected" in result.output
    assert "changes.jsonl:line 3: unknown article 'nope'" in result.output
    assert "changes.jsonl:line 4: malformed JSON" in result.output

    result = CliRunner().invoke(main, ["enqueue", str(csv_file), "--subscriber", "north", "--schema", SCHEMA])
    assert result.exit_code == 0, result.output
    assert "changes.csv:line 3: missing key" in result.output

    queued = wh.rows_of("replication_queue")
    assert {(q["tran_id"], q["subscriber"], q["op"]) for q in queued} == {
        ("t1", "north", "U"),
        ("t1", "north", "I"),
        ("t3", "north", "I"),
    }
    reasons = sorted(r["reason"] for r in wh.rows_of("enqueue_rejects"))
    assert reasons == [
        "changes.csv:line 3: missing key",
        "changes.jsonl:line 3: unknown article 'nope'",
        "changes.jsonl:line 4: malformed JSON (Expecting property name enclosed in double quotes)",
    ]

    history = run_reader(SCHEMA, echo=lambda _: None)
    assert (history["transactions_processed"], history["conflicts"]) == (2, 0)
    assert sorted((r["item_id"], r["qty"]) for r in wh.publisher_rows("items")) == [(1, 5), (2, 7), (9, 1)]
    assert len(wh.rows_of("enqueue_rejects")) == 3
    assert wh.rows_of("queue_rejects") == []  # the run quarantined nothing of its own


def test_enqueue_unknown_subscriber_is_one_line_error(spark, tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text("{}\n")
    result = CliRunner().invoke(main, ["enqueue", str(f), "--subscriber", "ghost", "--schema", SCHEMA])
    assert result.exit_code == 1
    assert result.output.strip() == "qrepl: error: no subscription for subscriber ghost (--debug shows the whole error)"
