"""Subscriber side: change a replica and enqueue the change, as a trigger would (docs/spec.md §6).

A transaction's commands reach the queue in one Iceberg append, so a partial transaction is
never visible to the queue reader. The subscriber identity and generation come from the
subscription, never from the change data.
"""

from __future__ import annotations

import json
import os
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Iterable, Iterator

from ..core.identity_ranges import PUBLISHER_RANGE_OWNER
from ..core.modes import capture_refusal
from ..core.partitions import ColumnLists, Partition, write_refusal
from ..core.rows import canonical_key, normalize_row, value_refusal
from ..core.values import dumps, stamp_text
from ..core.vocabulary import ConfigError, check_identifier
from ..storage.identity_ranges import next_value
from ..storage.immediate_log import record_outcome
from ..storage.open import warehouse as open_warehouse
from ..storage.publisher_rows import publisher_rows
from ..storage.replica import Replica, ReplicaWarehouse, retry_on_commit_conflict
from ..storage.warehouse import new_version
from .immediate import PublisherUnreachable, apply_at_publisher


class Transaction:
    def __init__(self, subscriber: "Subscriber", mode: str = "queued") -> None:
        self.sub = subscriber
        self.mode = mode
        self.commands: list[dict] = []
        self.pending: dict[tuple[str, str], dict | None] = {}
        self.images: list[dict | None] = []  # each command's row image (its new_row), for stamp_rows
        # identity values this transaction's inserts were given, per article, in order
        self.identities: dict[str, list[int]] = {}
        self.partition: Partition = {}  # the subscription's row filters (docs/spec.md §11)
        self.columns: ColumnLists = {}  # the columns it takes of the articles it does not take whole

    def taken(self, article) -> tuple[str, ...]:
        """The article's columns this subscription holds and sends."""
        return self.columns.get(article.name) or tuple(article.columns)

    def _identity(self, article, op: str, new_row: dict | None, current: dict | None) -> dict | None:
        """An insert of an identity article gets the next value of a range: the publisher's
        under immediate updating (the publisher generates it), the subscriber's own under
        queued (docs/spec.md §3), claimed for this transaction alone (a concurrent one gets
        another). The value is qrepl's to give, and an update cannot change it."""
        col = article.identity
        if not col or new_row is None:
            return new_row
        if op == "U":
            if new_row.get(col) != current.get(col):
                raise ConfigError(f"{article.name}.{col} is an identity column: an update cannot change it")
            return new_row
        if new_row.get(col) is not None:
            raise ConfigError(
                f"{article.name}.{col} is an identity column: leave it out of the insert, "
                f"qrepl gives it from the {'publisher' if self.mode == 'immediate' else 'subscriber'}'s "
                f"identity range"
            )
        wh = self.sub.warehouse
        taken = self.identities.setdefault(article.name, [])
        if self.mode == "immediate":
            value = next_value(wh, PUBLISHER_RANGE_OWNER, article, wh.article_table(article), taken)
        else:
            value = next_value(wh, self.sub.name, article, f"{self.sub.replica.wh.schema}.{article.name}", taken)
        taken.append(value)
        return {**new_row, col: value}

    def _current(self, article: str, key: str, key_values: dict) -> dict | None:
        if (article, key) in self.pending:
            return self.pending[(article, key)]
        return self.sub.replica.row(article, key_values)

    def _command(
        self, article_name: str, op: str, key_values: dict, new_row: dict | None, given: Iterable[str] | None = None
    ) -> str | None:
        """One command; `given`: the columns the caller gave (None: all), whose values must fit
        their columns. A value an update carries from the row unchanged (a NaN a job wrote at
        the publisher, say) is the row's, not the caller's: it is written as it is."""
        article = self.sub.warehouse.article(article_name)
        if op == "I" and article.identity:
            new_row = key_values = self._identity(article, op, new_row, None)
        key = canonical_key(article, key_values)
        if key is None:
            raise ConfigError(f"{article_name}: the key {list(article.key)} is missing or mistyped in {key_values}")
        current = self._current(article.name, key, key_values)
        if op == "U" and current is not None:
            new_row = self._identity(article, op, new_row, current)
        if op in ("U", "D") and current is None:
            raise ConfigError(f"{article_name} {key}: no such row at subscriber {self.sub.name}")
        if op == "I" and current is not None:
            raise ConfigError(f"{article_name} {key}: row already exists at subscriber {self.sub.name}")
        taken = self.taken(article)
        if new_row is not None and (extra := [c for c in new_row if c not in taken and c != "msrepl_tran_version"]):
            raise ConfigError(
                f"{article_name}: subscriber {self.sub.name} does not take column {extra[0]} "
                f"(its columns: {', '.join(taken)})"
            )
        refusal = (
            None
            if new_row is None
            else value_refusal(article, new_row if given is None else {c: new_row[c] for c in given if c in new_row})
        )
        if refusal:
            raise ConfigError(refusal)
        refusal = write_refusal(self.sub.name, self.partition, article, op, normalize_row(article, new_row), current)
        if refusal:  # a write outside the partition, refused before anything is written
            raise ConfigError(refusal)
        version = new_version() if op != "D" else None
        image = None
        if new_row is not None:
            image = normalize_row(article, {**new_row, "msrepl_tran_version": version})
        self.commands.append(
            {
                "article": article.name,
                "op": op,
                "row_key": key,
                "old_version": current["msrepl_tran_version"] if current else None,
                "new_version": version,
                "new_row": dumps({c: image[c] for c in taken}) if image else None,
                # the before image in the canonical form of every row image (a replica row's binary
                # and timestamp values as text), so it compares with the publisher's row exactly
                "old_row": dumps({c: seen[c] for c in taken}) if (seen := normalize_row(article, current)) else None,
            }
        )
        self.pending[(article.name, key)] = image
        self.images.append(image)
        return version

    def insert(self, article: str, row: dict[str, Any]) -> str | None:
        return self._command(article, "I", row, row)

    def update(self, article: str, key: dict[str, Any], changes: dict[str, Any]) -> str | None:
        a = self.sub.warehouse.article(article)
        current = self._current(a.name, canonical_key(a, key) or "", key) or {}
        # the row as this subscription holds it: its columns (a row this transaction wrote has
        # every column of the article in its pending image)
        held = {c: current[c] for c in self.taken(a) if c in current}
        return self._command(article, "U", key, {**held, **changes, **key}, given=[*changes, *key])

    def delete(self, article: str, key: dict[str, Any]) -> None:
        self._command(article, "D", key, None)


class Subscriber:
    """Capture API of one subscription: `with sub.transaction() as t: t.update(...)`."""

    def __init__(self, schema: str | None, name: str, fallback_to_queue: bool | None = None) -> None:
        """The subscription `name` of the publication in `schema` (None: $QREPL_SCHEMA, else
        'qrepl'). `fallback_to_queue` (default: env QREPL_IMMEDIATE_FALLBACK=1, else off): a
        failover subscription whose publisher cannot be reached switches to queued by itself
        and queues the transaction instead of failing (reported by `qrepl status`)."""
        self.warehouse = warehouse = open_warehouse(schema)
        if fallback_to_queue is None:
            fallback_to_queue = os.environ.get("QREPL_IMMEDIATE_FALLBACK", "") == "1"
        self.fallback_to_queue = fallback_to_queue
        self.name = check_identifier(name, "subscriber")
        if warehouse.subscription(name) is None:
            raise ConfigError(f"no subscription for subscriber {name}: run `qrepl subscription add {name}` first")
        self.replica = Replica(warehouse, name)

    @contextmanager
    def transaction(self, tran_id: str | None = None) -> Iterator[Transaction]:
        """Capture one transaction. A queued subscription commits it to the queue; an
        immediate one applies it at the publisher first (all rows or ConflictError, nothing
        changed), then to the replica. A read-only subscription refuses to capture."""
        sub = self.warehouse.subscription(self.name)
        refusal = capture_refusal(self.name, sub["current_mode"], sub["status"])
        if refusal:
            raise ConfigError(refusal)
        tran = Transaction(self, sub["current_mode"])
        tran.partition, tran.columns = self.warehouse.partition(sub), self.warehouse.columns(sub)
        yield tran
        if not tran.commands:
            return
        seq = self.warehouse.next_tran_seq(self.name)
        # unique without asking the queue: two processes capturing for one subscriber never
        # produce the same id (which would quarantine both as duplicates)
        tran_id = tran_id or f"{self.name}-{seq}-{uuid.uuid4().hex[:8]}"
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        stamp_rows(self.warehouse, tran, now)
        queued = sub["current_mode"] != "immediate"
        if not queued:
            # the publisher commit is the commit point; the replica follows it
            try:
                apply_at_publisher(self.warehouse, self.name, tran_id, tran.commands, tran.pending, now, tran.columns)
                point = "immediate.replica"
            except PublisherUnreachable:
                if not (self.fallback_to_queue and sub["update_mode"] in ("failover", "queued_failover")):
                    raise
                self.warehouse.set_current_mode(self.name, "queued")
                record_outcome(self.warehouse, self.name, tran_id, "fallback", len(tran.pending), now)
                queued = True
        if queued:
            rows = [
                {
                    **c,
                    "subscriber": self.name,
                    "generation": sub["generation"],
                    "tran_id": tran_id,
                    "tran_seq": seq,
                    "command_seq": i,
                    "enqueued_at": now,
                }
                for i, c in enumerate(tran.commands, 1)
            ]
            # the queue append is the commit point; the replica follows it
            self.warehouse.append_queue(rows)
            point = "capture.replica"
        replica = ReplicaWarehouse(self.warehouse, self.replica.wh.schema)
        write_replica(replica, tran.pending, point)
        if queued:
            self._undo_if_reinitialized(replica, tran, tran_id, sub["generation"])

    def _undo_if_reinitialized(
        self, replica: ReplicaWarehouse, tran: Transaction, tran_id: str, generation: int
    ) -> None:
        """A reinitialization that moved the generation after this transaction read it (it
        moves it before replacing the replica) makes the queued transaction rejected_reinit,
        and its replica write may have landed in the new replica: put the publisher's rows
        back there and say so. Either the generation is still the transaction's here, and the
        replica replacement comes after this write, or this check sees the new one."""
        now = self.warehouse.subscription(self.name)
        if now is None or now["generation"] == generation:
            return
        rows: dict[tuple[str, str], dict | None] = {}
        for article in self.warehouse.require_publication().articles:
            keys = [key for name, key in tran.pending if name == article.name]
            if keys:
                current = publisher_rows(self.warehouse, article, [json.loads(k, parse_float=Decimal) for k in keys])
                rows.update({(article.name, k): current.get(k) for k in keys})
        write_replica(replica, rows, "capture.undo")
        raise ConfigError(
            f"subscriber {self.name} was reinitialized during transaction {tran_id}: it will be "
            f"rejected_reinit (generation {generation} < {now['generation']}) and the replica "
            f"holds the publisher's rows again; capture it again"
        )


def stamp_rows(wh, tran: Transaction, now: datetime) -> None:
    """Every row the transaction inserts or updates gets its commit time in its article's
    stamped column (docs/spec.md §3): the publisher's commit under immediate updating, the
    capture under queued updating."""
    stamped = {a.name: a.stamped for a in wh.require_publication().articles if a.stamped}
    if not stamped:
        return
    text = stamp_text(now)
    for command, image in zip(tran.commands, tran.images):
        if command["article"] in stamped and image is not None:
            image[stamped[command["article"]]] = text  # the pending image of its row is one of these
            article = wh.article(command["article"])
            command["new_row"] = dumps({c: image[c] for c in tran.taken(article)})


def write_replica(replica: ReplicaWarehouse, pending: dict[tuple[str, str], dict | None], point: str) -> None:
    """A transaction's final rows into the replica: one upsert and one delete MERGE per article."""
    for article in replica.require_publication().articles:
        mine = [
            (json.loads(key, parse_float=Decimal), image)
            for (name, key), image in pending.items()
            if name == article.name
        ]
        upserts = [image for _, image in mine if image is not None]
        deletes = [key for key, image in mine if image is None]
        if upserts:
            retry_on_commit_conflict(lambda: replica.upsert_rows(article.name, upserts, f"{point}.{article.name}"))
        if deletes:
            retry_on_commit_conflict(lambda: replica.delete_rows(article.name, deletes, f"{point}.{article.name}"))
