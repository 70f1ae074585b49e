"""`qrepl distribute` (replicas brought up to the publisher) and `qrepl maintain` (the
publisher tables compacted, the snapshots no replica needs expired)."""

from __future__ import annotations

import click

from ..services.distribution import distribute as do_distribute
from ..services.maintenance import maintain as do_maintain
from .context import current_schema, echo


@click.command()
def distribute() -> None:
    """Deliver compensating commands, publisher changes (and conflicts when not centralized)
    to every subscriber's replica. Safe to run twice.

    \b
    Example:
      qrepl distribute --schema qrepl_demo
    """
    report = do_distribute(current_schema(), progress=echo)  # one progress line per subscriber
    echo(
        f"delivered to {sum(1 for c in report.values() if c['rows_delivered'] or c['conflicts'])} "
        f"of {len(report)} subscriber(s)"
    )


@click.command()
def maintain() -> None:
    """Compact the publisher tables and expire snapshots no replica still needs.

    Merge-on-read leaves delete files behind each run; this rewrites them into plain data
    files and drops the snapshots older than the oldest one a subscriber's next delivery
    reads (see `subscription_deliveries`). Safe to run at any time between runs.

    \b
    Example:
      qrepl maintain --schema qrepl_demo
    """
    do_maintain(current_schema(), progress=echo)
