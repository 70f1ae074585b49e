"""`qrepl demo`, `qrepl replay` and `qrepl whatif`: the tools built on the services."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.vocabulary import POLICIES, ConfigError
from ..services.publication import publication as publication_of
from ..tools.demo import run_demo
from ..tools.replay import replay as do_replay
from ..tools.whatif import whatif as do_whatif, whatif_table
from .context import current_schema, echo

DEMO_SCHEMA = "qrepl_demo"


@click.command()
def demo() -> None:
    """Run the full loop: publication, three subscribers, captured changes, queue reader,
    compensations, and a summary of outcomes and conflicts.

    \b
    Example:
      qrepl demo
    """
    run_demo(current_schema(default=DEMO_SCHEMA), echo=echo)


@click.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True, help="Output folder.")
@click.option("--policy", default=None, help="Override the scenarios' policy (also 'pub wins', ...).")
@click.option("--reference", is_flag=True, help="Use the sequential reference instead of Spark + dbt.")
def replay(scenarios, out_dir, policy, reference) -> None:
    """Replay scenario files; writes OUT/<scenario stem>/ (docs/spec.md §7).

    \b
    Example:
      qrepl replay scenarios/*.json --out out/spark
      qrepl replay scenarios/*.json --out out/ref --reference && diff -r out/ref out/spark
    """
    for path in do_replay(list(scenarios), out_dir, policy, reference, progress=echo):
        echo(f"wrote {path}")


@click.command()
@click.option(
    "--policy",
    "policies",
    multiple=True,
    metavar="POLICY",
    help="A policy to compare with the publication's own (repeatable; also 'pub wins', ...). Default: all three.",
)
@click.option(
    "--batches",
    default=None,
    metavar="N..M",
    help="Batches to replay (default: all finished ones); 'N' alone is N..newest.",
)
@click.option("--reference", is_flag=True, help="Replay on the sequential reference instead of Spark + dbt.")
def whatif(policies, batches, reference) -> None:
    """Replay the transactions of past batches under other policies, side by side.

    Starts from the publisher as it was when batch N started (Iceberg time travel), replays
    in a scratch schema (<schema>_whatif, dropped afterwards) and never writes the live
    publication. The publication's own policy is replayed too, as the baseline (marked *).

    \b
    Example:
      qrepl whatif --schema qrepl_demo
      qrepl whatif --schema qrepl_demo --policy "sub wins" --batches 3..5
    """
    first, last = _batch_range(batches)
    results = do_whatif(current_schema(), list(policies) or list(POLICIES), first, last, reference, progress=echo)
    for line in whatif_table(results, publication_of(current_schema()).policy):
        echo(line)


def _batch_range(text: str | None) -> tuple[int, int | None]:
    if text is None:
        return 1, None
    first, sep, last = text.partition("..")
    if not first.isdigit() or (sep and not last.isdigit()):
        raise ConfigError(f"--batches must be N..M or N (whole numbers), got {text!r}")
    return int(first), (int(last) if sep else None)
