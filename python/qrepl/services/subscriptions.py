"""Subscriptions: add one (with its initial snapshot), list, drop, and switch a failover
subscription between queued and immediate updating (docs/update-modes.md)."""

from __future__ import annotations

from ..core.modes import normalize_update_mode, switch_refusal
from ..core.vocabulary import ConfigError, Progress
from ..storage.identity_ranges import ensure_ranges
from ..storage.open import warehouse
from ..storage.replica import has_snapshot, snapshot_pins, snapshot_replica, unpin_snapshots
from .reader import reader_ran_since_init, unapplied_queue


def add_subscription(schema: str | None, subscriber: str, echo: Progress = print, update_mode: str = "queued") -> dict:
    """Subscribe (with an update mode, docs/update-modes.md) and deliver the initial
    snapshot; returns the subscription. The subscription row is written first and the snapshot records itself last, so
    a rerun after a crash at any point finishes the subscription instead of failing on it."""
    mode = normalize_update_mode(update_mode)
    wh = warehouse(schema)
    wh.require_publication()  # one line if the schema has none
    existing = wh.subscription(subscriber)
    if existing is None:
        wh.add_subscription(subscriber, mode)
    elif has_snapshot(wh, subscriber):
        if any(s == subscriber for s, _ in snapshot_pins(wh)):  # crashed after recording, before unpinning
            unpin_snapshots(wh, subscriber)
            echo(f"{subscriber}: subscribed earlier, its initial snapshot was recorded: finished")
            return wh.subscription(subscriber)
        raise ConfigError(f"subscriber {subscriber} is already subscribed to {wh.require_publication().name}")
    else:
        echo(f"{subscriber}: subscribed earlier, its initial snapshot was not finished: delivering it now")
    ensure_ranges(wh, subscriber, wh.require_publication().articles)
    snapshot_replica(wh, subscriber, echo)
    return wh.subscription(subscriber)


def list_subscriptions(schema: str | None) -> list[dict]:
    """Every subscription with its status, generation and update mode."""
    return warehouse(schema).subscriptions()


def drop_subscription(schema: str | None, subscriber: str) -> None:
    """Drop a subscription; its queued rows the queue reader has not taken are never applied."""
    warehouse(schema).drop_subscription(subscriber)


def set_mode(schema: str | None, subscriber: str, mode: str) -> dict:
    """Switch a failover subscription between queued and immediate (SQL Server's
    sp_setreplfailovermode); refused with one line when the rules of docs/update-modes.md say no."""
    wh = warehouse(schema)
    sub = wh.subscription(subscriber)
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    target = mode.strip().lower()
    pending = unapplied_queue(wh)
    pending = pending.where(pending.subscriber == subscriber).count() if target == "immediate" else 0
    ran = target != "immediate" or reader_ran_since_init(wh, sub)
    why = switch_refusal(subscriber, sub["update_mode"], target, pending, ran)
    if why:
        raise ConfigError(why)
    wh.set_current_mode(subscriber, target)
    return {**sub, "current_mode": target}
