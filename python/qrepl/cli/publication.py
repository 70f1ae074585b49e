"""`qrepl publication create|show|describe|set-policy|range|check`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..core.identity_ranges import PUBLISHER_RANGE_OWNER
from ..services.identity_ranges import assign_identity_range
from ..services.partitions import partition_overlaps
from ..services.publication import create_publication, describe_table, publication as publication_of, set_policy
from .context import current_schema, echo


@click.group()
def publication() -> None:
    """Create the publication from its YAML, show it, change its policy.

    \b
    Example:
      qrepl publication create --config publications/sales.yml
      qrepl publication show
    """


@publication.command("create")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--seed", is_flag=True, help="Load initial publisher rows from seeds/demo_<article>.csv.")
def publication_create(config_path, seed) -> None:
    """Create or update the publication's tables.

    \b
    Example:
      qrepl publication create --config publications/sales.yml --seed
    """
    pub = create_publication(config_path, current_schema(), seed, echo=echo)
    echo(f"publication {pub.name} ({pub.policy}): {', '.join(a.name for a in pub.articles)}")


@publication.command("range")
@click.option("--article", "article", default=None, help="One identity article (default: every one).")
def publication_range(article) -> None:
    """Give the publisher the next identity range of an article with an identity column: what
    an immediate insert asks for when the publisher's range is used up (the publisher makes
    the identity values of immediate subscribers' inserts). See docs/spec.md §3.

    \b
    Example:
      qrepl publication range --article orders
    """
    for name, start, end in assign_identity_range(current_schema(), PUBLISHER_RANGE_OWNER, article):
        echo(f"publisher: identity range {start}..{end} of {name}")


@publication.command("describe")
@click.option(
    "--table",
    "table",
    required=True,
    metavar="SCHEMA.TABLE",
    help="An existing Iceberg table to publish in place (outside the publication's schema "
    "--schema, the declaration names it with table:).",
)
@click.option("--key", "key", required=True, metavar="COL[,COL...]", help="Its key column(s).")
def publication_describe(table, key) -> None:
    """Write the article declaration of an existing table from its own schema (YAML, to paste
    under `articles:`), so no column or type has to be transcribed. The table is then published
    in place by `qrepl publication create`: it gains msrepl_tran_version and every row gets a
    version; no other value changes. A table outside the publication's schema (--schema) is
    named by the declaration's `table: SCHEMA.TABLE`.

    \b
    Example:
      qrepl publication describe --table shop.stock --key warehouse_id,sku >> my.yml
    """
    click.echo(describe_table(table, [k.strip() for k in key.split(",") if k.strip()], current_schema()), nl=False)


@publication.command("set-policy")
@click.argument("policy")
def publication_set_policy(policy) -> None:
    """Change the conflict policy (only while the publication has no subscriptions).

    \b
    Example:
      qrepl publication set-policy "sub wins"
    """
    pub = set_policy(current_schema(), policy)
    echo(f"publication {pub.name}: policy {pub.policy}")


@publication.command("show")
def publication_show() -> None:
    """Show the publication's settings and articles.

    \b
    Example:
      qrepl publication show --schema qrepl_demo
    """
    pub = publication_of(current_schema())
    echo(json.dumps(pub.to_dict(), indent=2))


@publication.command("check")
def publication_check() -> None:
    """Measure how the subscriptions' partitions overlap: per article, the publisher rows each
    subscription holds, and the rows each pair of subscriptions both hold, where their changes
    can meet in a conflict (docs/spec.md §11). Disjoint partitions never meet in an update or
    delete conflict (inserts of one key still can: identity ranges prevent that). Reads each
    article once, as it is now.

    \b
    Example:
      qrepl publication check
    """
    found = partition_overlaps(current_schema())
    for a in found["articles"]:
        echo(f"{a['article']}: {a['rows']} row(s)")
        for name, rows in a["holds"].items():
            echo(f"  {name:<12} holds {rows}")
        for pair in a["pairs"]:
            both = " and ".join(pair["subscribers"])
            echo(f"  {both:<25} both hold {pair['rows']}" + ("" if pair["rows"] else " (disjoint)"))
    echo(
        f"rows two partitions share, summed over the pairs: {found['total']}"
        + ("" if found["partitioned"] else " (no subscription has a filter)")
    )
