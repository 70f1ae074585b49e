"""Update modes of a subscription (docs/update-modes.md): their names, how a subscription of
each mode captures, when it may switch, and the rejection of an immediate transaction."""

from __future__ import annotations

from typing import Any

from .values import dumps
from .vocabulary import CONFLICT_CODES, CONFLICT_REASONS, ConfigError

# Update modes of a subscription (docs/update-modes.md). SQL Server's `sp_addsubscription
# @update_mode` spellings are accepted and normalized to these names.
# a subscription's status while `qrepl subscription reinit` runs (besides active and reinit_pending)
REINITIALIZING = "reinitializing"
UPDATE_MODES = ("queued", "immediate", "failover", "queued_failover", "read_only")
UPDATE_MODE_ALIASES = {
    "queued tran": "queued",
    "sync tran": "immediate",
    "queued failover": "queued_failover",
    "read only": "read_only",
}
# The modes a failover subscription switches between (`qrepl subscription set-mode`).
CURRENT_MODES = ("queued", "immediate")


def normalize_update_mode(mode: Any) -> str:
    if not isinstance(mode, str):
        raise ConfigError(f"invalid update mode {mode!r}")
    text = " ".join(mode.strip().lower().split())
    value = UPDATE_MODE_ALIASES.get(text, text.replace(" ", "_"))
    if value not in UPDATE_MODES:
        allowed = ", ".join(list(UPDATE_MODES) + [repr(a) for a in UPDATE_MODE_ALIASES])
        raise ConfigError(f"unknown update mode {mode!r}: use one of {allowed}")
    return value


def initial_current_mode(update_mode: str) -> str:
    """How a new subscription of this update mode captures: immediate for immediate and
    failover, read_only for read_only, otherwise queued."""
    if update_mode in ("immediate", "failover"):
        return "immediate"
    return "read_only" if update_mode == "read_only" else "queued"


def capture_refusal(subscriber: str, current_mode: str, status: str = "active") -> str | None:
    """Why a subscription may not capture changes (None when it may)."""
    if status == REINITIALIZING:
        return (
            f"subscriber {subscriber} is being reinitialized: capture again once "
            f"`qrepl subscription reinit {subscriber}` has finished"
        )
    if current_mode == "read_only":
        return (
            f"subscriber {subscriber} is read only: its replica cannot be changed "
            f"(subscribe it with --mode queued or immediate to capture changes)"
        )
    return None


def switch_refusal(
    subscriber: str, update_mode: str, target: str, pending_commands: int, reader_ran_since_init: bool
) -> str | None:
    """Why `set-mode subscriber target` is refused (None when allowed). Only failover
    subscriptions switch; to immediate only once the queue reader has applied every queued
    command of the subscriber and has run at least once since its initialization."""
    if target not in CURRENT_MODES:
        return f"unknown mode {target!r}: a failover subscription switches to queued or immediate"
    if update_mode not in ("failover", "queued_failover"):
        return (
            f"subscriber {subscriber} has update mode {update_mode}: only failover and "
            f"queued_failover subscriptions switch between queued and immediate"
        )
    if target == "immediate" and pending_commands:
        return (
            f"subscriber {subscriber} still has {pending_commands} queued command(s) the queue "
            f"reader has not applied: run the queue reader (qrepl run), then switch to immediate"
        )
    if target == "immediate" and not reader_ran_since_init:
        return (
            f"the queue reader has not run since subscriber {subscriber} was initialized: "
            f"run it once (qrepl run), then switch to immediate"
        )
    return None


class ConflictError(RuntimeError):
    """An immediate transaction rejected because rows differ between publisher and subscriber
    (SQL Server's error 20515). Nothing changed at either side. `rows` has one dict per
    conflicting row: article, row_key, conflict_type, reason_text, publisher_row,
    subscriber_row, old_version (what the subscriber saw)."""

    def __init__(self, subscriber: str, tran_id: str, rows: list[dict]) -> None:
        self.subscriber, self.tran_id, self.rows = subscriber, tran_id, rows
        super().__init__(conflict_message(subscriber, tran_id, rows))


def conflict_message(subscriber: str, tran_id: str, rows: list[dict]) -> str:
    """First line: the rejection; then one block per row, like `qrepl conflicts show`."""
    lines = [
        f"immediate transaction {tran_id} of subscriber {subscriber} rejected: {len(rows)} row(s) "
        f"do not match between publisher and subscriber; nothing was changed at either side"
    ]
    for r in rows:
        lines.append(
            f"  {r['conflict_type']} (code {CONFLICT_CODES[r['conflict_type']]}) on {r['article']} "
            f"{r['row_key']}: {CONFLICT_REASONS[r['conflict_type']]}"
        )
        publisher, subscriber_row = r.get("publisher_row"), r.get("subscriber_row")
        lines.append(f"    publisher:  {dumps(publisher) if publisher is not None else '(absent)'}")
        deleted = "(deleted)" if r["conflict_type"].startswith("delete") else "(absent)"
        lines.append(f"    subscriber: {dumps(subscriber_row) if subscriber_row is not None else deleted}")
    return "\n".join(lines)
