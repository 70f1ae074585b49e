"""Bulk enqueue of change records from JSONL, CSV or Parquet files (`qrepl enqueue`).

Each record: tran_id, article, op (I/U/D), row (object, for I/U) or key (object, for D),
old_version (U/D), new_version (I/U; when missing, derived from the subscriber, tran_id,
command and row, so enqueueing the same file again yields the same version). Records of one
tran_id form one transaction, in file order. The subscriber and its generation come from the
subscription, never from the file. Bad records are reported with their line (or row) number and
written to enqueue_rejects with the reason; their transaction goes with them; good transactions
proceed.

Idempotent: a transaction whose tran_id the subscriber already queued with the same commands is
skipped and reported ("N transaction(s) already queued, skipped"); the same tran_id with
different commands is rejected with a reason; a rejection already recorded is not written twice.
"""

from __future__ import annotations

import csv
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator

from ..core.publication import Publication
from ..core.rows import canonical_key, normalize_row
from ..core.values import UUID_TEXT, coerce_json_value, dumps, fit_hint, queued_value_ok
from ..core.vocabulary import ConfigError, Progress
from ..storage.identity_ranges import owned_ranges
from ..storage.tables import ENQUEUE_REJECTS_SCHEMA
from ..storage.open import warehouse
from ..storage.warehouse import TIMESTAMP_FORMAT, Warehouse

# The fields of a queued command that identify its content (enqueued_at, tran_seq and the
# generation are stamped at enqueue time).
CONTENT_FIELDS = ("command_seq", "article", "op", "row_key", "old_version", "new_version", "new_row")
_DERIVED_VERSIONS = uuid.UUID("5b7d3f0e-4c1a-4e8b-9a52-2d6f0c1e7a90")

REJECTS_SCHEMA = ENQUEUE_REJECTS_SCHEMA  # enqueue_rejects (qrepl.storage.tables)


@dataclass
class EnqueueReport:
    transactions: int = 0
    commands: int = 0
    rejected_records: int = 0
    already_queued: int = 0
    problems: list[str] | None = None


def read_records(path: Path, spark=None) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """Yield (where, record, parse_error) for every record of the file."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        with path.open() as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line, parse_float=Decimal)
                except ValueError as exc:
                    yield f"line {n}", None, f"malformed JSON ({exc.msg})"
                    continue
                yield (f"line {n}", rec, None) if isinstance(rec, dict) else (f"line {n}", None, "not an object")
    elif suffix == ".csv":
        with path.open(newline="") as f:
            for n, rec in enumerate(csv.DictReader(f), 2):
                parsed, error = dict(rec), None
                for field in ("row", "key"):
                    if parsed.get(field):
                        try:
                            parsed[field] = json.loads(parsed[field], parse_float=Decimal)
                        except ValueError:
                            error = f"{field} is not JSON"
                for field in ("old_version", "new_version"):
                    parsed[field] = parsed.get(field) or None
                yield f"line {n}", (None if error else parsed), error
    elif suffix == ".parquet":
        if spark is None:
            raise ConfigError("reading Parquet needs the Spark session")
        for n, r in enumerate(_timestamps_as_text(spark.read.parquet(str(path))).collect(), 1):
            rec = r.asDict(recursive=True)
            for field in ("row", "key"):
                if isinstance(rec.get(field), str):
                    try:
                        rec[field] = json.loads(rec[field], parse_float=Decimal)
                    except ValueError:
                        pass
            yield f"row {n}", rec, None
    else:
        raise ConfigError(f"{path}: unsupported file type {suffix!r} (use .jsonl, .csv or .parquet)")


def _timestamps_as_text(df):
    """A Parquet file's row and key structs with each TIMESTAMP field as its canonical text
    (an instant in UTC): pyspark cannot hand over a timestamp of the first day of year 0001
    (warehouse.readable). A TIMESTAMP_NTZ field stays a naive datetime."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType, TimestampType

    for field in df.schema.fields:
        if field.name in ("row", "key") and isinstance(field.dataType, StructType):
            for inner in field.dataType.fields:
                if isinstance(inner.dataType, TimestampType):
                    df = df.withColumn(
                        field.name,
                        F.col(field.name).withField(
                            inner.name, F.date_format(F.col(field.name).getField(inner.name), TIMESTAMP_FORMAT)
                        ),
                    )
    return df


def check_record(
    pub: Publication, rec: dict[str, Any], ranges: dict[str, list[tuple[int, int]]] | None = None
) -> str | None:
    """The reason a file record cannot be queued, or None. `ranges`: the subscriber's identity
    ranges per identity article: an insert's identity value must lie in one (docs/spec.md §3)."""
    article = pub.article(rec.get("article")) if isinstance(rec.get("article"), str) else None
    op = rec.get("op")
    if not rec.get("tran_id"):
        return "missing tran_id"
    if article is None:
        return f"unknown article {rec.get('article')!r}"
    if op not in ("I", "U", "D"):
        return f"bad op {op!r} (use I, U or D)"
    image = rec.get("key") if op == "D" else rec.get("row")
    if not isinstance(image, dict):
        return "missing key" if op == "D" else "missing row"
    if canonical_key(article, image) is None:
        unfit = [
            k
            for k in article.key
            if image.get(k) is not None and coerce_json_value(image[k], article.columns[k]) is None
        ]
        if unfit and all(image.get(k) is not None for k in article.key):
            column = unfit[0]
            return (
                f"key column {column} ({article.columns[column]}) does not fit: {image[column]!r}"
                f"{fit_hint(article.columns[column])}"
            )
        return f"missing key: {', '.join(article.key)} required"
    if op in ("U", "D") and not rec.get("old_version"):
        return f"op {op} needs old_version"
    if op == "I" and rec.get("old_version"):
        return "op I must not carry old_version"
    if op == "D" and rec.get("new_version"):
        return "op D must not carry new_version"
    for field in ("old_version", "new_version"):
        value = rec.get(field)
        if value and not (isinstance(value, str) and UUID_TEXT.match(value.lower())):
            return f"{field} {value!r} is not a UUID"
    if op != "D":
        extra = [c for c in image if c not in article.columns]
        missing = [c for c in article.columns if c not in image]
        # a record is the caller's input: a float or double must be finite, also as the text
        # "NaN" / "Infinity" the reader reads (a value the publisher can hold; docs/spec.md §3)
        wrong = [
            c
            for c, t in article.columns.items()
            if c in image
            and (not queued_value_ok(image[c], t) or (t in ("double", "float") and isinstance(image[c], str)))
        ]
        if extra:
            return f"unknown column(s) {', '.join(extra)}"
        if missing:
            return f"missing column(s) {', '.join(missing)} (I and U rows carry every column)"
        if wrong:
            return (
                f"wrong value type for {', '.join(f'{c} ({article.columns[c]}: {image[c]!s:.60})' for c in wrong)}"
                + (
                    " (a decimal must fit its precision and scale exactly: never rounded)"
                    if any(article.columns[c].startswith("decimal") for c in wrong)
                    else ""
                )
                + (
                    " (a float or double must be a finite number: no NaN or Infinity)"
                    if any(article.columns[c] in ("double", "float") for c in wrong)
                    else ""
                )
                + "".join(dict.fromkeys(fit_hint(article.columns[c]) for c in wrong))
            )
    if op == "I" and article.identity and ranges is not None:
        value = coerce_json_value(image[article.identity], "bigint")
        mine = ranges.get(article.name, [])
        if value is None or not any(start <= value <= end for start, end in mine):
            held = ", ".join(f"{start}..{end}" for start, end in mine) or "none"
            return (
                f"identity {article.identity} {image[article.identity]!r} is outside the subscriber's identity "
                f"range(s) of {article.name} ({held})"
            )
    return None


def enqueue_file(
    schema: str | None, subscriber: str, path: Path, progress: Progress = print, chunk: int = 5000
) -> EnqueueReport:
    wh = warehouse(schema)
    pub = wh.require_publication()
    sub = wh.subscription(subscriber)
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    if not Path(path).exists():
        raise ConfigError(f"{path}: no such file")
    transactions: dict[str, list[tuple[str, dict]]] = {}
    bad: dict[str, list[tuple[str, dict | None, str]]] = {}
    report = EnqueueReport(problems=[])
    ranges = {a.name: owned_ranges(wh, subscriber, a.name) for a in pub.articles if a.identity}
    for n, (where, rec, error) in enumerate(read_records(Path(path), wh.spark), 1):
        if n % chunk == 0:
            progress(f"read {n} records")
        reason = error or check_record(pub, rec, ranges)
        tran = str(rec.get("tran_id")) if rec and rec.get("tran_id") else f"<{where}>"
        if reason:
            report.problems.append(f"{path}:{where}: {reason}")
            bad.setdefault(tran, []).append((where, rec, reason))
        else:
            transactions.setdefault(tran, []).append((where, rec))
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    name = Path(path).name
    commands = {
        tran_id: [
            _queue_row(pub, subscriber, sub["generation"], tran_id, None, seq, rec, now)
            for seq, (where, rec) in enumerate(records, 1)
        ]
        for tran_id, records in transactions.items()
    }
    queued = _queued_content(wh, subscriber, list(transactions))
    tran_seq = wh.next_tran_seq(subscriber, count=max(len(transactions), 1)) - 1
    rows, rejects = [], []
    for tran_id, records in transactions.items():
        mine = [tuple(r[f] for f in CONTENT_FIELDS) for r in commands[tran_id]]
        if tran_id in queued:
            if sorted(queued[tran_id], key=lambda c: c[0] or 0) == mine and tran_id not in bad:
                report.already_queued += 1
                continue
            reason = f"{name}:{records[0][0]}: tran_id {tran_id} is already queued with different commands"
            report.problems.append(
                f"{path}:{records[0][0]}: tran_id {tran_id} is already queued with different commands"
            )
            bad.setdefault(tran_id, [])
            rejects += [{**r, "reason": reason} for r in commands[tran_id]]
            continue
        tran_seq += 1
        for (where, _), row in zip(records, commands[tran_id]):
            row["tran_seq"] = tran_seq
            if tran_id in bad:
                rejects.append({**row, "reason": f"{name}:{where}: transaction has a quarantined command"})
            else:
                rows.append(row)
    for tran_id, records in bad.items():
        for where, rec, reason in records:
            rejects.append(
                {
                    "subscriber": subscriber,
                    "generation": sub["generation"],
                    "tran_id": tran_id,
                    "tran_seq": None,
                    "command_seq": None,
                    "article": (rec or {}).get("article"),
                    "op": (rec or {}).get("op"),
                    "row_key": None,
                    "old_version": (rec or {}).get("old_version"),
                    "new_version": (rec or {}).get("new_version"),
                    "new_row": dumps(rec) if rec else None,
                    "old_row": None,
                    "enqueued_at": now,
                    "reason": f"{name}:{where}: {reason}",
                }
            )
    for start in range(0, len(rows), chunk):
        progress(f"enqueueing commands {start + 1}..{min(start + chunk, len(rows))} of {len(rows)}")
    if report.already_queued:
        progress(f"{report.already_queued} transaction(s) already queued, skipped")
    wh.append_queue(rows)  # one atomic commit for the whole file's good transactions
    rejects = _not_yet_rejected(wh, subscriber, rejects)
    if rejects:
        _append_rejects(wh, rejects, now)
    report.transactions = len({r["tran_id"] for r in rows})
    report.commands = len(rows)
    report.rejected_records = sum(len(v) for v in bad.values())
    return report


def _queued_content(wh: Warehouse, subscriber: str, tran_ids: list[str]) -> dict[str, list[tuple]]:
    """The commands the subscriber already queued under any of `tran_ids` (values travel in a
    DataFrame, never in SQL text)."""
    if not tran_ids:
        return {}
    queue = wh.spark.table(wh.table("replication_queue"))
    wanted = wh.spark.createDataFrame([(t,) for t in tran_ids], "tran_id STRING")
    found: dict[str, list[tuple]] = {}
    for r in queue.where(queue.subscriber == subscriber).join(wanted, "tran_id").collect():
        found.setdefault(r["tran_id"], []).append(tuple(r[f] for f in CONTENT_FIELDS))
    return found


def _not_yet_rejected(wh: Warehouse, subscriber: str, rejects: list[dict]) -> list[dict]:
    """Drop the rejections an earlier enqueue of the same file already recorded."""
    if not rejects:
        return rejects
    recorded: set[tuple[str, str]] = set()
    for name, own in (("enqueue_rejects", True), ("queue_rejects", False)):
        if wh.exists(name):
            table = wh.spark.table(wh.table(name))
            mine = table.subscriber == subscriber
            if not own:  # an older store's enqueue refusals: no batch
                mine = mine & table.batch_id.isNull()
            recorded |= {(r["tran_id"], r["reason"]) for r in table.where(mine).select("tran_id", "reason").collect()}
    return [r for r in rejects if (r["tran_id"], r["reason"]) not in recorded]


def _queue_row(pub, subscriber, generation, tran_id, tran_seq, seq, rec, now) -> dict:
    article = pub.article(rec["article"])
    op = rec["op"]
    image = rec.get("key") if op == "D" else rec.get("row")
    new_row = None
    if op != "D":
        norm = normalize_row(article, image)
        new_row = dumps({c: norm[c] for c in article.columns})
    version = None
    if op != "D":
        version = rec.get("new_version") or str(
            uuid.uuid5(
                _DERIVED_VERSIONS,
                "|".join([subscriber, tran_id, str(seq), canonical_key(article, image) or "", new_row]),
            )
        )
    return {
        "subscriber": subscriber,
        "generation": generation,
        "tran_id": tran_id,
        "tran_seq": tran_seq,
        "command_seq": seq,
        "article": article.name,
        "op": op,
        "row_key": canonical_key(article, image),
        "old_version": rec.get("old_version") if op != "I" else None,
        "new_version": version,
        "new_row": new_row,
        "old_row": None,
        "enqueued_at": now,
    }


def _append_rejects(wh: Warehouse, rejects: list[dict], now: datetime) -> None:
    cols = [c.split()[0] for c in REJECTS_SCHEMA.split(", ")]
    df = wh.spark.createDataFrame(
        [tuple({**r, "rejected_at": now}.get(c) for c in cols) for r in rejects], REJECTS_SCHEMA
    )
    wh.create_own("enqueue_rejects")
    df.writeTo(wh.table("enqueue_rejects")).append()
