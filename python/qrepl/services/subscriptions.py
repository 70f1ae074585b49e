"""Subscriptions: add one (with its initial snapshot and its partition), list, drop, change its
row filters (docs/spec.md §11), and switch a failover subscription between queued and
immediate updating (docs/update-modes.md)."""

from __future__ import annotations

from ..core.modes import REINITIALIZING, normalize_update_mode, switch_refusal
from ..core.partitions import columns_of, describe, parse_columns, parse_filters, partition_json
from ..core.vocabulary import ConfigError, Progress
from ..storage.identity_ranges import ensure_ranges
from ..storage.open import warehouse
from ..storage.replica import has_snapshot, snapshot_pins, snapshot_replica, unpin_snapshots
from .reader import queued_commands_of, reader_ran_since_init


def add_subscription(
    schema: str | None,
    subscriber: str,
    echo: Progress = print,
    update_mode: str = "queued",
    filters: list[str] | tuple[str, ...] = (),
    columns: list[str] | tuple[str, ...] = (),
) -> dict:
    """Subscribe (with an update mode, docs/update-modes.md, row filters, "ARTICLE:
    CONDITION", and column filters, "ARTICLE: COLUMN, ...", docs/spec.md §11) and deliver the
    initial snapshot; returns the subscription. The subscription row is written first and the
    snapshot records itself last, so a rerun after a crash at any point finishes the
    subscription instead of failing on it; a rerun with other filters is refused."""
    mode = normalize_update_mode(update_mode)
    wh = warehouse(schema)
    partition = parse_filters(wh.require_publication(), filters)  # one line if the schema has none
    lists = parse_columns(wh.require_publication(), columns, partition)
    existing = wh.subscription(subscriber)
    held = (wh.partition(existing), wh.columns(existing)) if existing is not None else None
    if held is not None and held != (partition, lists):
        given = describe(held[0]) or "none"
        taken = {a: ", ".join(c) for a, c in held[1].items()}
        raise ConfigError(
            f"subscriber {subscriber} is subscribed with filters {given}"
            + (f" and columns {taken}" if taken else "")
            + f": change them with `qrepl subscription filter {subscriber} ...`"
        )
    if existing is None:
        wh.add_subscriptions([subscriber], mode, {subscriber: partition}, {subscriber: lists})
    elif has_snapshot(wh, subscriber):
        if any(s == subscriber for s, _ in snapshot_pins(wh)):  # crashed after recording, before unpinning
            unpin_snapshots(wh, subscriber)
            echo(f"{subscriber}: subscribed earlier, its initial snapshot was recorded: finished")
            return _with_partition(wh, wh.subscription(subscriber))
        raise ConfigError(f"subscriber {subscriber} is already subscribed to {wh.require_publication().name}")
    else:
        echo(f"{subscriber}: subscribed earlier, its initial snapshot was not finished: delivering it now")
    ensure_ranges(wh, subscriber, wh.require_publication().articles)
    snapshot_replica(wh, subscriber, echo)
    return _with_partition(wh, wh.subscription(subscriber))


def _with_partition(wh, sub: dict) -> dict:
    """A subscription with its partition, its filters' normalized text by article, and the
    columns it takes of the articles it does not take whole (`columns`)."""
    partition = wh.partition(sub)
    return {**sub, "partition": partition, "filters": describe(partition), "columns": wh.columns(sub)}


def show_subscription(schema: str | None, subscriber: str) -> dict:
    """One subscription with its partition (`filters`: per article its filter's normalized
    text) and the publication's articles (`articles`)."""
    wh = warehouse(schema)
    sub = wh.subscription(subscriber)
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    return {**_with_partition(wh, sub), "articles": [a.name for a in wh.require_publication().articles]}


def list_subscriptions(schema: str | None) -> list[dict]:
    """Every subscription with its status, generation and update mode."""
    return warehouse(schema).subscriptions()


def drop_subscription(schema: str | None, subscriber: str) -> None:
    """Drop a subscription; its queued rows the queue reader has not taken are never applied."""
    warehouse(schema).drop_subscription(subscriber)


def change_partition(
    schema: str | None, subscriber: str, filters: list[str] | tuple[str, ...], force: bool, echo: Progress = print
) -> dict:
    """Change a subscription's row filters (docs/spec.md §11): a reinitialization, as SQL
    Server's filter change. Refused while the subscriber has queued commands the reader has not
    taken, unless `force` (they are then rejected_reinit, as of an older generation).

    The generation moves first (status reinitializing: captures are refused), then the filter
    is recorded, then the replica is replaced by the new partition's rows and the status set
    active: a rerun after a crash at any point goes on with the same generation and filter."""
    from .distribution import reinitialize

    wh = warehouse(schema)
    sub = wh.subscription(subscriber)
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    partition = parse_filters(wh.require_publication(), filters)
    # its column lists stay, and must still hold every column the new filters read
    lists = columns_of(wh.require_publication(), partition_json(partition, wh.columns(sub)))
    if sub["status"] != REINITIALIZING:
        pending = queued_commands_of(wh, subscriber)
        if pending and not force:
            raise ConfigError(
                f"subscriber {subscriber} has {pending} queued command(s) the queue reader has not taken: "
                f"run `qrepl run` first, or --force to reject them (rejected_reinit)"
            )
        wh.update_subscription(
            subscriber, REINITIALIZING, sub["generation"] + 1, sub["reinit_requested_at"], sub["reinit_reason"]
        )
    wh.set_partition(subscriber, partition, lists)
    reinitialize(schema, subscriber, progress=echo)
    return _with_partition(wh, wh.subscription(subscriber))


def set_mode(schema: str | None, subscriber: str, mode: str) -> dict:
    """Switch a failover subscription between queued and immediate (SQL Server's
    sp_setreplfailovermode); refused with one line when the rules of docs/update-modes.md say no."""
    wh = warehouse(schema)
    sub = wh.subscription(subscriber)
    if sub is None:
        raise ConfigError(f"no subscription for subscriber {subscriber}")
    target = mode.strip().lower()
    pending = queued_commands_of(wh, subscriber) if target == "immediate" else 0
    ran = target != "immediate" or reader_ran_since_init(wh, sub)
    why = switch_refusal(subscriber, sub["update_mode"], target, pending, ran)
    if why:
        raise ConfigError(why)
    wh.set_current_mode(subscriber, target)
    return {**sub, "current_mode": target}
