"""Immediate updating (docs/update-modes.md): a subscriber's transaction is applied at the
publisher when it commits, as one compare-and-swap over all its rows, or not at all.

For each row the transaction touches, the subscriber saw a version and a row (or saw no row,
for an insert). The publisher check reads those rows and judges them as the queue reader would,
with the row as the evidence (`reference.judge_seen`): a row whose content differs from the
subscriber's before image was written since, even by a writer that kept its version. A
mismatch rejects the transaction before anything is written. Then one Iceberg MERGE per
article, in the publication's article order, writes the rows; its source is a temp view of
the transaction's rows (values never reach SQL text) carrying the whole row the check read,
and a row that no longer holds it (version or any column) makes the MERGE fail
(`raise_error`), so the MERGE commits all its rows or none and never overwrites a write that
landed between the check and the MERGE. A concurrent writer that commits while the MERGE runs
makes Iceberg's commit validation refuse it. Either failure re-reads the publisher: a real
mismatch raises ConflictError (and is recorded in `immediate_rejections`), no mismatch means
only a file-level collision and the transaction is tried again.

Iceberg has no multi-table transaction: a transaction over two articles commits the first
article, then the second. If the second is refused, the first is rolled back by a second
compare-and-swap (its rows are put back where they still hold this transaction's versions);
a reader of the publisher may see the first article's rows in between. A crash between the
two commits leaves the first article's rows at the publisher, where the distribution agent
takes them to every replica, the subscriber's own included (docs/update-modes.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from ..storage.faults import point_comment
from ..core.modes import ConflictError
from ..core.partitions import ColumnLists, project
from ..core.publication import Article
from ..core.rows import typed_row
from ..core.vocabulary import CONFLICT_REASONS
from ..core.reference import judge_seen
from ..storage.replica import COMMIT_CONFLICTS
from ..storage.dbt_runner import stamp_publisher
from ..storage.immediate_log import record_outcome
from ..storage.publisher_rows import publisher_rows
from ..storage.warehouse import Warehouse

ATTEMPTS = 5
MISMATCH = "qrepl immediate: row no longer holds what the subscriber saw"
CAS_COLUMNS = "qrepl_op STRING, qrepl_expected_exists BOOLEAN, qrepl_expected_version STRING"
UNDO_COLUMNS = "qrepl_written_version STRING, qrepl_restore_exists BOOLEAN"


@dataclass
class RowChange:
    """What a transaction does to one row: what it expected (from its first command on the
    row) and what it leaves (its last)."""

    article: str
    row_key: str
    key_values: dict[str, Any]
    command_seq: int
    op: str
    expected_version: str | None
    image: dict | None  # the row it leaves, None for a delete
    new_version: str | None  # the first command's new version (for the rejection record)
    seen: dict | None = None  # the row the subscriber saw (its first command's before image)
    # the transaction inserted the row (after a delete of it, or anew): a subscription that
    # takes some of the columns leaves the others NULL, not the publisher's (docs/spec.md §11)
    inserted: bool = False


def row_changes(commands: list[dict], pending: dict[tuple[str, str], dict | None]) -> list[RowChange]:
    changes: dict[tuple[str, str], RowChange] = {}
    for seq, c in enumerate(commands, 1):
        where = (c["article"], c["row_key"])
        if where in changes and c["op"] == "I":
            changes[where].inserted = True
        if where not in changes:
            seen = json.loads(c["old_row"], parse_float=Decimal) if c.get("old_row") else None
            changes[where] = RowChange(
                c["article"],
                c["row_key"],
                json.loads(c["row_key"], parse_float=Decimal),
                seq,
                c["op"],
                c["old_version"],
                pending[where],
                c["new_version"],
                seen,
                c["op"] == "I",
            )
    return list(changes.values())


def _merged(article: Article, change: RowChange, before: dict | None, taken: tuple[str, ...] | None) -> RowChange:
    """The row change as the publisher gets it: a subscription that takes some of the columns
    (docs/spec.md §11) writes those, and the others keep the values of the row the check read
    (NULL where the transaction inserted the row), as `reference.image` builds it."""
    if taken is None or change.image is None:
        return change
    base = before if before is not None and not change.inserted else {}
    image = {c: base.get(c) for c in article.columns} | {c: change.image[c] for c in taken}
    return replace(change, image={**image, "msrepl_tran_version": change.image["msrepl_tran_version"]})


def _find_mismatches(
    wh: Warehouse, subscriber: str, tran_id: str, changes: list[RowChange], at: datetime, columns: ColumnLists
) -> tuple[list[dict], dict[tuple[str, str], dict | None]]:
    """The rows whose publisher state differs from what the subscriber saw (conflict rows in
    the terms of the conflict log, with the subscriber's columns), and every row's publisher
    state. A subscription that takes some of an article's columns saw only those."""
    found, before = [], {}
    for article in wh.require_publication().articles:
        mine = [c for c in changes if c.article == article.name]
        if not mine:
            continue
        current = publisher_rows(wh, article, [c.key_values for c in mine])
        for c in mine:
            row = current.get(c.row_key)
            before[(c.article, c.row_key)] = row
            kind = judge_seen(article, c.op, row, c.expected_version, c.seen, columns.get(article.name))
            if kind:
                found.append(
                    {
                        "subscriber": subscriber,
                        "tran_id": tran_id,
                        "article": c.article,
                        "row_key": c.row_key,
                        "command_seq": c.command_seq,
                        "conflict_type": kind,
                        "reason_text": CONFLICT_REASONS[kind],
                        "publisher_row": project(columns, article, row),
                        "subscriber_row": project(columns, article, c.image),
                        "publisher_version": row["msrepl_tran_version"] if row else None,
                        "old_version": c.expected_version,
                        "new_version": c.new_version,
                        "rejected_at": at,
                    }
                )
    return found, before


def _source(wh: Warehouse, article: Article, rows: list[tuple], extra_ddl: str) -> str:
    ddl = ", ".join(f"{c} {t.upper()}" for c, t in article.columns.items())
    return wh._temp_view(rows, f"{ddl}, msrepl_tran_version STRING, {extra_ddl}")


def _values(article: Article, row: dict) -> tuple:
    typed = typed_row(article, row)
    return tuple(typed[c] for c in article.columns) + (typed["msrepl_tran_version"],)


def _merge_article(
    wh: Warehouse, article: Article, changes: list[RowChange], before: dict[tuple[str, str], dict | None]
) -> None:
    """One compare-and-swap MERGE: every row changes, or the MERGE fails and nothing does. A row
    matches only while it holds the whole row the check read (`before`: version and content),
    so a writer that changed it since, keeping its version, fails the MERGE (docs/spec.md §10)."""
    rows = []
    for c in changes:
        op = "delete" if c.image is None else "upsert"
        values = _values(article, c.image if c.image is not None else {**c.key_values, "msrepl_tran_version": None})
        read = before[(c.article, c.row_key)]
        expected = _values(article, read)[:-1] if read is not None else (None,) * len(article.columns)
        rows.append(values + (op, c.op != "I", c.expected_version) + expected)
    held = ", ".join(f"qrepl_held_{i} {t.upper()}" for i, t in enumerate(article.columns.values()))
    view = _source(wh, article, rows, f"{CAS_COLUMNS}, {held}")
    columns = list(article.columns) + ["msrepl_tran_version"]
    on = " and ".join(f"target.{k} = source.{k}" for k in article.key)
    same = " and ".join(f"target.{c} <=> source.qrepl_held_{i}" for i, c in enumerate(article.columns))
    holds = f"source.qrepl_expected_exists and target.msrepl_tran_version <=> source.qrepl_expected_version and {same}"
    fail = f"cast(raise_error('{MISMATCH}') as string)"
    wh.spark.sql(
        f"{point_comment('immediate.publisher.' + article.name)}"
        f"merge into {wh.article_table(article)} as target using {view} as source on {on} "
        f"when matched and {holds} and source.qrepl_op = 'delete' then delete "
        f"when matched and {holds} then update set {', '.join(f'target.{c} = source.{c}' for c in columns)} "
        f"when matched then update set target.msrepl_tran_version = {fail} "
        f"when not matched and not source.qrepl_expected_exists and source.qrepl_op = 'upsert' then "
        f"insert ({', '.join(columns)}) values ({', '.join('source.' + c for c in columns)}) "
        f"when not matched and source.qrepl_expected_exists then "
        f"insert ({', '.join(columns)}) values ({', '.join('source.' + c for c in columns[:-1])}, {fail})"
    )
    wh.spark.catalog.dropTempView(view)


def _undo_article(
    wh: Warehouse, article: Article, changes: list[RowChange], before: dict[tuple[str, str], dict | None]
) -> None:
    """Put back the rows an article's MERGE wrote, where they still hold this transaction's
    versions (a later writer's row is left alone)."""
    rows = []
    for c in changes:
        old = before[(c.article, c.row_key)]
        written = c.image["msrepl_tran_version"] if c.image is not None else None
        values = _values(article, old if old is not None else {**c.key_values, "msrepl_tran_version": None})
        rows.append(values + (written, old is not None))
    view = _source(wh, article, rows, UNDO_COLUMNS)
    columns = list(article.columns) + ["msrepl_tran_version"]
    on = " and ".join(f"target.{k} = source.{k}" for k in article.key)
    mine = "source.qrepl_written_version is not null and target.msrepl_tran_version = source.qrepl_written_version"
    wh.spark.sql(
        f"{point_comment('immediate.undo.' + article.name)}"
        f"merge into {wh.article_table(article)} as target using {view} as source on {on} "
        f"when matched and {mine} and source.qrepl_restore_exists then update set "
        f"{', '.join(f'target.{c} = source.{c}' for c in columns)} "
        f"when matched and {mine} then delete "
        f"when not matched and source.qrepl_written_version is null and source.qrepl_restore_exists then "
        f"insert ({', '.join(columns)}) values ({', '.join('source.' + c for c in columns)})"
    )
    wh.spark.catalog.dropTempView(view)


class PublisherUnreachable(RuntimeError):
    """The publisher's tables could not be read, so nothing of the transaction was committed
    there (a failover subscription may then queue it, see capture.Subscriber). A failure of a
    publisher MERGE is raised as it is: whether it committed is not known from here."""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def is_refused_commit(exc: Exception) -> bool:
    """The compare-and-swap failed (a row moved) or Iceberg refused the commit (a concurrent writer)."""
    text = str(exc)
    return MISMATCH in text or any(name in text for name in COMMIT_CONFLICTS)


def apply_at_publisher(
    wh: Warehouse,
    subscriber: str,
    tran_id: str,
    commands: list[dict],
    pending: dict[tuple[str, str], dict | None],
    at: datetime,
    columns: ColumnLists | None = None,
) -> None:
    """Apply a captured transaction at the publisher, all rows or none; ConflictError (and a
    recorded rejection) when a row differs from what the subscriber saw. `columns`: the
    columns the subscription takes of the articles it does not take whole (docs/spec.md §11)."""
    columns = columns or {}
    changes = row_changes(commands, pending)
    articles = [a for a in wh.require_publication().articles if any(c.article == a.name for c in changes)]
    # the publisher's trigger first: a row an outside writer changed without a new version
    # gets one, so the transaction meets it as a conflict (docs/spec.md §4)
    try:
        stamp_publisher(wh)
    except Exception as exc:
        raise PublisherUnreachable(f"the publisher cannot be read: {_first_line(exc)}") from exc
    for attempt in range(1, ATTEMPTS + 1):
        try:
            mismatches, before = _find_mismatches(wh, subscriber, tran_id, changes, at, columns)
        except Exception as exc:
            raise PublisherUnreachable(f"the publisher cannot be read: {_first_line(exc)}") from exc
        if mismatches:
            record_outcome(wh, subscriber, tran_id, "rejected", len(changes), at, mismatches)
            raise ConflictError(subscriber, tran_id, mismatches)
        written = {
            a.name: [
                _merged(a, c, before[(c.article, c.row_key)], columns.get(a.name))
                for c in changes
                if c.article == a.name
            ]
            for a in articles
        }
        done: list[Article] = []
        try:
            for article in articles:
                _merge_article(wh, article, written[article.name], before)
                done.append(article)
        except Exception as exc:
            if not is_refused_commit(exc):
                raise  # not known to have left the publisher untouched: never a reason to queue it
            for article in reversed(done):
                _undo_article(wh, article, written[article.name], before)
            if attempt == ATTEMPTS:
                raise
            continue  # re-read: a real mismatch is rejected above, a file-level collision retried
        record_outcome(wh, subscriber, tran_id, "applied", len(changes), at)
        return
