"""Exact values end to end on the embedded stack: `qrepl enqueue` (JSONL, CSV and Parquet) and
the capture API queue decimals of up to 38 digits, floats, tinyint/smallint and date keys; the
queue reader applies them to the publisher to the last digit, and distribution delivers them
to the replica unchanged. Values that do not fit are refused with one line, never rounded."""

from __future__ import annotations

import base64
import json
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from click.testing import CliRunner

from qrepl.services.capture import Subscriber
from qrepl.cli import main
from qrepl.services.distribution import distribute
from qrepl.core.model import ConfigError, publication_from_dict
from qrepl.storage.replica import replica_schema
from qrepl.storage.replica import Replica
from qrepl.services.service import add_subscription, list_conflicts, run_reader
from qrepl.tools.whatif import whatif
from qrepl.storage.warehouse import Warehouse

pytestmark = pytest.mark.e2e

SCHEMA = "qrepl_exact_e2e"
NEAR_FLOAT = "99999999999999.99"
LONG38 = "123456789012345678901234567890123456.78"
PUBLICATION = {
    "publication": "ledger",
    "articles": [
        {
            "name": "entries",
            "key": ["day", "seq"],
            "columns": {
                "day": "date",
                "seq": "smallint",
                "amount": "decimal(18,2)",
                "big": "decimal(38,2)",
                "ratio": "float",
                "flag": "tinyint",
            },
        },
        {
            "name": "events",
            "key": ["at", "local"],
            "columns": {"at": "timestamp", "local": "timestamp_ntz", "ts": "timestamp", "payload": "binary"},
        },
    ],
}
ALL_BYTES = base64.b64encode(bytes(range(256))).decode()
UTC = timezone.utc
PARQUET_ROW = (
    "row STRUCT<day: DATE, seq: SMALLINT, amount: DECIMAL(18,2), big: DECIMAL(38,2), ratio: FLOAT, flag: TINYINT>"
)


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
        '"big":0,"ratio":0,"flag":200}}\n'
        '{"tran_id":"j4","article":"events","op":"I","row":{"at":"2026-03-29T02:30:00.000001+02:00",'
        f'"local":"2026-03-29 02:30:00","ts":"0001-01-01T00:00:00Z","payload":"{ALL_BYTES}"}}}}\n'
        '{"tran_id":"j5","article":"events","op":"I","row":{"at":"2026-01-01T00:00:00Z",'
        '"local":"2026-01-01T00:00:00","ts":"2026-01-01T00:00:00.1234567Z","payload":""}}\n'
        '{"tran_id":"j6","article":"events","op":"I","row":{"at":"2026-01-01T00:00:00Z",'
        '"local":"2026-01-01T00:00:00+01:00","ts":null,"payload":"AP8"}}\n'
    )
    csv_file = tmp_path / "changes.csv"
    csv_file.write_text(
        "tran_id,article,op,row\n"
        f'c1,entries,I,"{{""day"": ""2026-01-02"", ""seq"": 1, ""amount"": ""{NEAR_FLOAT}"", '
        f'""big"": -{LONG38}, ""ratio"": 0.5, ""flag"": 127}}"\n'
        'c2,events,I,"{""at"": ""9999-12-31T23:59:59.999999Z"", ""local"": ""1969-12-31T23:59:59.999999"", '
        '""ts"": ""2024-02-29T23:30:00.5-05:30"", ""payload"": """"}"\n'
    )
    spark.createDataFrame(
        [("p1", "entries", "I", (date(2026, 1, 3), -32768, Decimal(NEAR_FLOAT), Decimal(LONG38), 1.1, 7))],
        f"tran_id STRING, article STRING, op STRING, {PARQUET_ROW}",
    ).coalesce(1).write.parquet(str(tmp_path / "parquet_dir"))
    parquet = tmp_path / "changes.parquet"  # one file, as a user hands it over
    next((tmp_path / "parquet_dir").glob("part-*.parquet")).rename(parquet)
    spark.createDataFrame(
        [
            (
                "p2",
                "events",
                "I",
                (
                    datetime(1, 1, 1, tzinfo=UTC),
                    datetime(1, 1, 1, 0, 0, 0, 1),
                    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                    b"\x00",
                ),
            )
        ],
        "tran_id STRING, article STRING, op STRING, "
        "row STRUCT<at: TIMESTAMP, local: TIMESTAMP_NTZ, ts: TIMESTAMP, payload: BINARY>",
    ).coalesce(1).write.parquet(str(tmp_path / "parquet_events"))
    events_parquet = tmp_path / "events.parquet"
    next((tmp_path / "parquet_events").glob("part-*.parquet")).rename(events_parquet)

    result = CliRunner().invoke(main, ["enqueue", str(jsonl), "--subscriber", "north", "--schema", SCHEMA])
    assert result.exit_code == 0, result.output
    assert "changes.jsonl:line 2: wrong value type for amount (decimal(18,2): 1.005)" in result.output
    assert "changes.jsonl:line 3: wrong value type for flag (tinyint: 200)" in result.output
    assert "changes.jsonl:line 5: wrong value type for ts (timestamp: 2026-01-01T00:00:00.1234567Z)" in result.output
    assert (
        "changes.jsonl:line 6: key column local (timestamp_ntz) does not fit: '2026-01-01T00:00:00+01:00'"
        in result.output
    )
    for path in (csv_file, parquet, events_parquet):
        result = CliRunner().invoke(main, ["enqueue", str(path), "--subscriber", "north", "--schema", SCHEMA])
        assert result.exit_code == 0 and "rejected" not in result.output.replace("0 record(s) rejected", ""), (
            result.output
        )

    sub = Subscriber(wh.schema, "north")
    sub.replica.snapshot_from_publisher()
    with pytest.raises(ConfigError, match="does not fit decimal\\(18,2\\) exactly"):
        with sub.transaction("cap_bad") as t:
            t.insert(
                "entries",
                {"day": date(2026, 1, 4), "seq": 9, "amount": Decimal("0.001"), "big": 0, "ratio": 0.0, "flag": 0},
            )
    with pytest.raises(ConfigError, match="events.ts: .* does not fit timestamp"):
        with sub.transaction("cap_bad_ts") as t:
            t.insert(
                "events",
                {
                    "at": datetime(2026, 1, 9, tzinfo=UTC),
                    "local": datetime(2026, 1, 9),
                    "ts": "2026-01-09T00:00:00",
                    "payload": b"",
                },
            )
    with sub.transaction("cap1") as t:
        t.insert(
            "entries",
            {
                "day": date(2026, 1, 4),
                "seq": 1,
                "amount": Decimal("-" + NEAR_FLOAT),
                "big": Decimal("999999999999999999999999999999999999.99"),
                "ratio": 0.1,
                "flag": 1,
            },
        )
        t.insert(
            "events",
            {
                "at": datetime(2026, 1, 1, 12, 0, 0, 7, tzinfo=timezone(timedelta(hours=-8))),
                "local": datetime(2026, 1, 1, 12, 0, 0, 7),
                "ts": datetime(2026, 1, 1, 1, 2, 3, 999999),
                "payload": bytes(range(255, -1, -1)),
            },
        )

    run_reader(SCHEMA, echo=lambda *_: None)
    rows = {(str(r["day"]), r["seq"]): r for r in wh.publisher_rows("entries")}
    assert [r["reason"] for r in wh.rows_of("queue_rejects") if r["batch_id"] is not None] == []
    assert set(rows) == {("2026-01-01", 1), ("2026-01-02", 1), ("2026-01-03", -32768), ("2026-01-04", 1)}
    assert (rows[("2026-01-01", 1)]["amount"], rows[("2026-01-01", 1)]["big"]) == (Decimal(NEAR_FLOAT), Decimal(LONG38))
    assert rows[("2026-01-02", 1)]["amount"] == Decimal(NEAR_FLOAT) and rows[("2026-01-02", 1)]["big"] == Decimal(
        "-" + LONG38
    )
    assert (
        rows[("2026-01-03", -32768)]["big"] == Decimal(LONG38)
        and rows[("2026-01-03", -32768)]["ratio"] == 1.100000023841858
    )
    assert rows[("2026-01-04", 1)]["big"] == Decimal("999999999999999999999999999999999999.99")
    assert rows[("2026-01-04", 1)]["amount"] == Decimal("-" + NEAR_FLOAT)
    assert (rows[("2026-01-01", 1)]["ratio"], rows[("2026-01-01", 1)]["flag"]) == (1.100000023841858, -128)

    distribute(wh.schema, progress=lambda *_: None)
    replica_table = Warehouse(spark, replica_schema(wh, "north")).table("entries")
    replica = {(str(r["day"]), r["seq"]): r.asDict() for r in spark.table(replica_table).collect()}
    assert replica == rows

    events = {(r["at"], str(r["local"])): r for r in wh.publisher_rows("events")}
    assert {k: (v["ts"], bytes(v["payload"])) for k, v in events.items()} == {
        ("2026-03-29T00:30:00.000001Z", "2026-03-29 02:30:00"): ("0001-01-01T00:00:00.000000Z", bytes(range(256))),
        ("9999-12-31T23:59:59.999999Z", "1969-12-31 23:59:59.999999"): ("2024-03-01T05:00:00.500000Z", b""),
        ("0001-01-01T00:00:00.000000Z", "0001-01-01 00:00:00.000001"): ("1969-12-31T23:59:59.999999Z", b"\x00"),
        ("2026-01-01T20:00:00.000007Z", "2026-01-01 12:00:00.000007"): (
            "2026-01-01T01:02:03.999999Z",
            bytes(range(255, -1, -1)),
        ),
    }
    replica_events = sorted(Replica(wh, "north").rows("events"), key=lambda r: r["at"])
    assert replica_events == sorted(events.values(), key=lambda r: r["at"])

    # immediate updating: the publisher and the immediate replica take the microsecond; a queued
    # update of the same row then meets its conflict, whose images keep every digit and byte
    add_subscription(SCHEMA, "west", update_mode="immediate", echo=lambda *_: None)
    key = {"at": "0001-01-01T00:00:00.000000Z", "local": datetime(1, 1, 1, 0, 0, 0, 1)}
    with Subscriber(wh.schema, "west").transaction("imm1") as t:
        t.update("events", key, {"ts": "1969-12-31T23:59:59.999998Z", "payload": b"\xff"})
    with sub.transaction("cap2") as t:
        t.update("events", key, {"payload": b""})
    run_reader(SCHEMA, echo=lambda *_: None)
    held = {(r["at"], str(r["local"])): r for r in wh.publisher_rows("events")}
    row = held[("0001-01-01T00:00:00.000000Z", "0001-01-01 00:00:00.000001")]
    assert (row["ts"], bytes(row["payload"])) == ("1969-12-31T23:59:59.999998Z", b"\xff")
    assert {(r["at"], str(r["local"]), r["ts"]) for r in Replica(wh, "west").rows("events")} == {
        (r["at"], str(r["local"]), r["ts"]) for r in held.values()
    }
    (conflict,) = list_conflicts(SCHEMA, article="events")
    assert conflict["row_key"] == '{"at":"0001-01-01T00:00:00.000000Z","local":"0001-01-01T00:00:00.000001"}'
    assert conflict["publisher_row"]["ts"] == "1969-12-31T23:59:59.999998Z"
    assert (conflict["publisher_row"]["payload"], conflict["subscriber_row"]["payload"]) == ("/w==", "")
    assert conflict["subscriber_row"]["ts"] == "1969-12-31T23:59:59.999999Z"

    # what-if replays the batches from the publisher as it was before them, timestamps of year
    # 0001 included (the immediate commit is no batch's: north's update applies there)
    rows = whatif(wh.schema, [], 1, reference=True)["publisher_wins"]["rows"]
    replayed = rows[("events", tuple(json.loads(conflict["row_key"]).values()))]
    assert (replayed["ts"], replayed["payload"]) == ("1969-12-31T23:59:59.999999Z", "")
    assert rows[("events", ("2026-03-29T00:30:00.000001Z", "2026-03-29T02:30:00.000000"))]["payload"] == ALL_BYTES
