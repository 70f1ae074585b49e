"""The queue reader: `qrepl run`, `qrepl dbt`, `qrepl unlock`, and `qrepl enqueue` that feeds
its queue in bulk."""

from __future__ import annotations

from pathlib import Path

import click

from ..services.enqueue import enqueue_file
from ..services.reader import run_dbt, run_reader, unlock as remove_lock
from .context import current_schema, echo


@click.command()
@click.option(
    "--wait",
    "wait_seconds",
    type=click.FloatRange(min=0),
    default=0,
    metavar="SECONDS",
    help="If another queue reader holds the run lock, wait up to SECONDS for it (default: fail at once).",
)
def run(wait_seconds: float) -> None:
    """Run the queue reader once (dbt run on the embedded Spark).

    One queue reader runs at a time per publication: a second one fails at once naming the
    holder (or waits with --wait). A lock left by a `qrepl run` that died is recovered
    automatically once its lease expires (QREPL_RUN_LOCK_LEASE_SECONDS, default 120); a lock
    left by a plain `dbt run` is removed with `qrepl unlock`.

    A run with nothing to do (nothing queued since the last batch) takes no lock and writes
    nothing, so a frequent schedule costs little.

    \b
    Example:
      qrepl run --schema qrepl_demo
      qrepl run --wait 600          # from a scheduler that may overlap a long run
    """
    h = run_reader(current_schema(), echo=echo, wait_seconds=wait_seconds)
    if h["idle"]:
        echo(f"nothing to do since batch {h['last_batch_id']}: nothing queued since; nothing was written")
        return
    echo(
        f"batch {h['batch_id']}: {h['transactions_processed']} transactions, {h['commands_processed']} commands, "
        f"{h['conflicts']} conflicts, {h['rejected']} rejected, {h['quarantined']} quarantined"
    )
    if h["stamped_rows"]:
        echo(f"publisher's trigger: {h['stamped_rows']} row(s) written without a new version were stamped first")


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
def dbt(dbt_args) -> None:
    """Run any dbt command on the embedded Spark, in this process's session (the profile's
    `in_process` output). Plain `dbt` from the checkout works too (the `local` target), but
    not beside another qrepl process on the same state directory: Derby allows one JVM.

    \b
    Example:
      qrepl dbt build --schema qrepl_demo
      qrepl dbt docs generate --schema qrepl_demo
    """
    run_dbt(current_schema(), list(dbt_args) or ["build"], quiet=False)


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--subscriber", required=True, help="Subscription the changes come from (stamps every row).")
def enqueue(file, subscriber) -> None:
    """Enqueue change records from a JSONL, CSV or Parquet FILE.

    Each record: tran_id, article, op (I/U/D), row (I/U) or key (D), old_version (U/D),
    new_version (optional, generated). Bad records are listed with their line number and go
    to enqueue_rejects with the reason (with the rest of their transaction); the others are
    enqueued in one atomic commit.

    \b
    Example:
      qrepl enqueue changes.jsonl --subscriber north --schema qrepl_demo
    """
    report = enqueue_file(current_schema(), subscriber, file, progress=echo)
    for problem in report.problems or []:
        click.echo(f"rejected {problem}", err=True)
    echo(
        f"enqueued {report.transactions} transactions ({report.commands} commands); "
        f"{report.rejected_records} record(s) rejected to enqueue_rejects"
    )


@click.command()
@click.option("--force", is_flag=True, help="Also remove a lock whose holder's lease is still being renewed.")
def unlock(force: bool) -> None:
    """Remove the queue reader's run lock left by a process that died (SIGKILL, power cut).

    The lock carries a lease its holder renews while it runs (`qrepl run` from a thread, a
    plain `dbt run` as its models start): unlock refuses it while the lease reads live (the
    next `qrepl run` recovers it by itself once it stays unrenewed). A lease that reads
    expired is watched for its length on this machine's clock first, since the holder's clock
    may differ: unlock removes it only if it was not renewed meanwhile. A lock without a
    lease (taken before plain runs had one) is removed: only use unlock when the holder it
    names is really gone, as two queue readers at once would cut the same batch twice.
    Either way only the holder it read is removed, never a lock another run took meanwhile.

    \b
    Example:
      qrepl unlock --schema qrepl_demo
    """
    holder = remove_lock(current_schema(), force=force, echo=echo)
    echo(
        "no run lock held"
        if holder is None
        else f"removed the run lock held by {holder.holder} since {holder.acquired_at}"
    )
