"""`qrepl subscription add|show|filter|list|drop|set-mode|reinit|range`."""

from __future__ import annotations

import click

from ..core.modes import normalize_update_mode
from ..core.vocabulary import check_identifier
from ..services.distribution import reinitialize
from ..services.identity_ranges import assign_identity_range
from ..core.partitions import describe
from ..services.subscriptions import (
    add_subscription,
    change_partition,
    drop_subscription,
    list_subscriptions,
    set_mode,
    show_subscription,
)
from .context import current_schema, echo
from .format import mode_text


@click.group()
def subscription() -> None:
    """Manage subscriptions.

    \b
    Example:
      qrepl subscription add north
      qrepl subscription list
    """


@subscription.command("add")
@click.argument("subscriber")
@click.option(
    "--mode",
    "update_mode",
    default="queued",
    show_default=True,
    metavar="MODE",
    help="Update mode: queued, immediate, failover, queued_failover or read_only "
    "(SQL Server's 'queued tran', 'sync tran', 'queued failover', 'read only' too).",
)
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar='"ARTICLE: CONDITION"',
    help="A row filter: the subscriber holds and writes only the article's rows that meet "
    "CONDITION, a SQL condition on the article's own columns. Once per article.",
)
@click.option(
    "--columns",
    "columns",
    multiple=True,
    metavar='"ARTICLE: COLUMN, ..."',
    help="A column filter: the subscriber holds and writes only these columns of the article; "
    "the list holds its key, its identity and stamped columns, and every column its row filter "
    "reads. Once per article.",
)
def subscription_add(subscriber, update_mode, filters, columns) -> None:
    """Subscribe SUBSCRIBER and deliver its initial snapshot. Rerunning it after a crash
    finishes a subscription whose snapshot was never completed. See docs/update-modes.md
    for the update modes, and docs/publishing.md for partitions (--filter).

    \b
    Example:
      qrepl subscription add north
      qrepl subscription add south --mode immediate
      qrepl subscription add north --filter "orders: region = 'north'"
      qrepl subscription add east --columns "orders: order_id, status"
    """
    sub = add_subscription(
        current_schema(),
        subscriber,
        echo=echo,
        update_mode=normalize_update_mode(update_mode),
        filters=filters,
        columns=columns,
    )
    echo(f"subscribed {subscriber} ({sub['update_mode']})")
    for article, text in sub["filters"].items():
        echo(f"  {article}: {text}")
    for article, names in sub["columns"].items():
        echo(f"  {article} columns: {', '.join(names)}")


@subscription.command("show")
@click.argument("subscriber")
def subscription_show(subscriber) -> None:
    """Show SUBSCRIBER's subscription: status, generation, update mode and its row filters
    (in qrepl's normalized text; an article without one is whole).

    \b
    Example:
      qrepl subscription show north
    """
    s = show_subscription(current_schema(), subscriber)
    echo(f"subscriber   {s['subscriber']}")
    echo(f"status       {s['status']}, generation {s['generation']}")
    echo(f"{'update':<12} {mode_text(s)}")
    for article in s["articles"]:
        echo(f"{article:<12} {s['filters'].get(article, 'every row')}")
        if article in s["columns"]:
            echo(f"{'':<12} columns: {', '.join(s['columns'][article])}")


@subscription.command("filter")
@click.argument("subscriber")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar='"ARTICLE: CONDITION"',
    help="The new row filter of an article (once per article); an article not given takes every row.",
)
@click.option("--force", is_flag=True, help="Reject the subscriber's queued commands the reader has not taken.")
def subscription_filter(subscriber, filters, force) -> None:
    """Change SUBSCRIBER's row filters: a reinitialization (generation + 1, a fresh snapshot of
    the new partition's rows), as SQL Server's filter change. Refused while SUBSCRIBER has
    queued commands the queue reader has not taken, unless --force, which rejects them
    (rejected_reinit). Without --filter the subscriber takes every row again.

    \b
    Example:
      qrepl subscription filter north --filter "orders: region in ('north', 'east')"
      qrepl subscription filter north --filter "orders: region = 'north'" --force
    """
    sub = change_partition(current_schema(), subscriber, filters, force, echo=echo)
    echo(f"{subscriber} reinitialized with its new filters, generation {sub['generation']}")
    for article, text in describe(sub["partition"]).items():
        echo(f"  {article}: {text}")


@subscription.command("set-mode")
@click.argument("subscriber")
@click.argument("mode", type=click.Choice(["queued", "immediate"]))
def subscription_set_mode(subscriber, mode) -> None:
    """Switch a failover or queued_failover subscription between queued and immediate
    updating. To immediate only once the queue reader has applied all of the subscriber's
    queued commands and has run once since its initialization.

    \b
    Example:
      qrepl subscription set-mode south queued      # the publisher is unreachable
      qrepl run && qrepl subscription set-mode south immediate
    """
    sub = set_mode(current_schema(), subscriber, mode)
    echo(f"{subscriber} ({sub['update_mode']}) now captures {sub['current_mode']}")


@subscription.command("reinit")
@click.argument("subscriber")
def subscription_reinit(subscriber) -> None:
    """Reinitialize SUBSCRIBER: fresh snapshot of the publisher, status active, generation + 1.

    \b
    Example:
      qrepl subscription reinit east
    """
    generation = reinitialize(current_schema(), subscriber, progress=echo)
    echo(f"{subscriber} reinitialized, generation {generation}")


@subscription.command("list")
def subscription_list() -> None:
    """List subscriptions with status, generation and update mode.

    \b
    Example:
      qrepl subscription list --schema qrepl_demo
    """
    for s in list_subscriptions(current_schema()):
        echo(
            f"{s['subscriber']:<12} {s['status']:<15} generation {s['generation']}  {mode_text(s)}"
            + ("  filtered" if s.get("partition_spec") else "")
            + (f"  ({s['reinit_reason']})" if s["reinit_reason"] else "")
        )


@subscription.command("drop")
@click.argument("subscriber")
def subscription_drop(subscriber) -> None:
    """Drop SUBSCRIBER's subscription. Its queued rows the queue reader has not taken are
    never applied: quarantined as of an unknown subscriber, or, if SUBSCRIBER is added again,
    rejected as of an older generation (the new subscription starts at a generation above the
    dropped one's, kept in subscription_tombstones).

    \b
    Example:
      qrepl subscription drop east
    """
    drop_subscription(current_schema(), subscriber)
    echo(f"dropped {subscriber}")


@subscription.command("range")
@click.argument("subscriber")
@click.option("--article", "article", default=None, help="One identity article (default: every one).")
def subscription_range(subscriber, article) -> None:
    """Give SUBSCRIBER the next identity range of an article with an identity column: what a
    queued capture asks for when the subscriber's range is used up. Values already captured
    from the old range stay the subscriber's. See docs/spec.md §3 and `qrepl status`.

    \b
    Example:
      qrepl subscription range north --article orders
    """
    for name, start, end in assign_identity_range(
        current_schema(), check_identifier(subscriber, "subscriber"), article
    ):
        echo(f"{subscriber}: identity range {start}..{end} of {name}")
