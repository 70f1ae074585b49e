"""Exact values end to end on the embedded stack: `qrepl enqueue` (JSONL, CSV and Parquet) and
the capture API queue decimals of up to 38 digits, floats, tinyint/smallint and date keys; the
queue reader applies them to the publisher to the last digit, and distribution delivers them
to the replica unchanged. Values that do not fit are refused with one line, never rounded."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from click.testing import CliRunner

from qrepl.capture import Subscriber
from qrepl.cli import main
from qrepl.distribution import distribute
from qrepl.model import ConfigError, publication_from_dict
from qrepl.replica import replica_schema
from qrepl.service import run_reader
from qrepl.warehouse import Warehouse

pytestmark = pytest.mark.e2e

SCHEMA = "qrepl_exact_e2e"
NEAR_FLOAT = "99999999999999.99"
LONG38 = "123456789012345678901234567890123456.78"
PUBLICATION = {"publication": "ledger", "articles": [{
    "name": "entries", "key": ["day", "seq"],
    "columns": {"day": "date", "seq": "smallint", "amount": "decimal(18,2)", "big": "decimal(38,2)",
                "ratio": "float", "flag": "tinyint"}}]}
PARQUET_ROW = ("row STRUCT<day: DATE, seq: SMALLINT, amount: DECIMAL(18,2), big: DECIMAL(38,2), "
               "ratio: FLOAT, flag: TINYINT>")


def test_decimal_38_digits_exact_through_enqueue_and_reader(spark, tmp_path):
    wh = Warehouse(spark, SCHEMA)
    Warehouse(spark, replica_schema(wh, "north")).drop_schema()
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.add_subscription("north")

    jsonl = tmp_path / "changes.jsonl"
    jsonl.write_text(
        f'{{"tran_id":"j1","article":"entries","op":"I","row":{{"day":"2026-01-01","seq":1,"amount":{NEAR_FLOAT},'
        f'"big":{LONG38},"ratio":1.1,"flag":-128}}}}\n'
        '{"tran_id":"j2","article":"entries","op":"I","row":{"day":"2026-01-01","seq":2,"amount":1.005,'
        '"big":0,"ratio":0,"flag":0}}\n'
        '{"tran_id":"j3","article":"entries","op":"I","row":{"day":"2026-01-01","seq":3,"amount":0,'
        '"big":0,"ratio":0,"flag":200}}\n')
    csv_file = tmp_path / "changes.csv"
    csv_file.write_text('tran_id,article,op,row\n'
                        f'c1,entries,I,"{{""day"": ""2026-01-02"", ""seq"": 1, ""amount"": ""{NEAR_FLOAT}"", '
                        f'""big"": -{LONG38}, ""ratio"": 0.5, ""flag"": 127}}"\n')
    spark.createDataFrame([("p1", "entries", "I", (date(2026, 1, 3), -32768, Decimal(NEAR_FLOAT), Decimal(LONG38),
                                                    1.1, 7))],
                          f"tran_id STRING, article STRING, op STRING, {PARQUET_ROW}") \
        .coalesce(1).write.parquet(str(tmp_path / "parquet_dir"))
    parquet = tmp_path / "changes.parquet"  # one file, as a user hands it over
    next((tmp_path / "parquet_dir").glob("part-*.parquet")).rename(parquet)

    result = CliRunner().invoke(main, ["enqueue", str(jsonl), "--subscriber", "north", "--schema", SCHEMA])
    assert result.exit_code == 0, result.output
    assert "changes.jsonl:line 2: wrong value type for amount (decimal(18,2): 1.005)" in result.output
    assert "changes.jsonl:line 3: wrong value type for flag (tinyint: 200)" in result.output
    for path in (csv_file, parquet):
        result = CliRunner().invoke(main, ["enqueue", str(path), "--subscriber", "north", "--schema", SCHEMA])
        assert result.exit_code == 0 and "rejected" not in result.output.replace("0 record(s) rejected", ""), result.output

    sub = Subscriber(wh, "north")
    sub.replica.snapshot_from_publisher()
    with pytest.raises(ConfigError, match="does not fit decimal\\(18,2\\) exactly"):
        with sub.transaction("cap_bad") as t:
            t.insert("entries", {"day": date(2026, 1, 4), "seq": 9, "amount": Decimal("0.001"), "big": 0,
                                 "ratio": 0.0, "flag": 0})
    with sub.transaction("cap1") as t:
        t.insert("entries", {"day": date(2026, 1, 4), "seq": 1, "amount": Decimal("-" + NEAR_FLOAT),
                             "big": Decimal("999999999999999999999999999999999999.99"), "ratio": 0.1, "flag": 1})

    run_reader(SCHEMA, echo=lambda *_: None)
    rows = {(str(r["day"]), r["seq"]): r for r in wh.publisher_rows("entries")}
    assert [r["reason"] for r in wh.rows_of("queue_rejects") if r["batch_id"] is not None] == []
    assert set(rows) == {("2026-01-01", 1), ("2026-01-02", 1), ("2026-01-03", -32768), ("2026-01-04", 1)}
    assert (rows[("2026-01-01", 1)]["amount"], rows[("2026-01-01", 1)]["big"]) == (Decimal(NEAR_FLOAT), Decimal(LONG38))
    assert rows[("2026-01-02", 1)]["amount"] == Decimal(NEAR_FLOAT) and rows[("2026-01-02", 1)]["big"] == Decimal("-" + LONG38)
    assert rows[("2026-01-03", -32768)]["big"] == Decimal(LONG38) and rows[("2026-01-03", -32768)]["ratio"] == 1.100000023841858
    assert rows[("2026-01-04", 1)]["big"] == Decimal("999999999999999999999999999999999999.99")
    assert rows[("2026-01-04", 1)]["amount"] == Decimal("-" + NEAR_FLOAT)
    assert (rows[("2026-01-01", 1)]["ratio"], rows[("2026-01-01", 1)]["flag"]) == (1.100000023841858, -128)

    distribute(wh, progress=lambda *_: None)
    replica_table = Warehouse(spark, replica_schema(wh, "north")).table("entries")
    replica = {(str(r["day"]), r["seq"]): r.asDict() for r in spark.table(replica_table).collect()}
    assert replica == rows
