"""qrepl command line: parses, calls a service, prints. Errors are one line and exit 1
(`--debug` shows the whole error)."""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from ..core.model import CONFLICT_CODES, PUBLISHER_RANGE_OWNER, ConfigError, check_identifier

TIME_FORMATS = ["%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"]
DEMO_SCHEMA = "qrepl_demo"


class QreplGroup(click.Group):
    """`--schema` belongs to the group but may stand anywhere on the command line (`qrepl run
    --schema s` is `qrepl --schema s run`); errors are one line unless `qrepl --debug ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:
            args = _group_options_first(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # click's own: --help, usage errors (click.exceptions.Exit is a RuntimeError)
        except (ConfigError, RuntimeError) as exc:
            if ctx.params.get("debug"):
                traceback.print_exc()
            else:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                click.echo(f"qrepl: error: {first} (--debug shows the whole error)", err=True)
            sys.exit(1)


def _group_options_first(args: list[str]) -> list[str]:
    """Move `--schema X` / `--schema=X` in front of the command (up to a `--`). `--debug` stays
    where it is: after `qrepl dbt` it is dbt's own flag."""
    front, rest, i = [], [], 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg.startswith("--schema="):
            front.append(arg)
        elif arg == "--schema" and i + 1 < len(args):
            front += args[i:i + 2]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return front + rest


def _schema(default: str | None = None) -> str:
    """The publisher schema of this invocation: --schema, else $QREPL_SCHEMA, else 'qrepl'.
    With `default`, only an explicit --schema overrides it (the demo never takes
    $QREPL_SCHEMA, so it cannot reset a schema the environment happens to name)."""
    ctx = click.get_current_context().find_root()
    if default is not None and ctx.get_parameter_source("schema") is not click.core.ParameterSource.COMMANDLINE:
        return default
    return check_identifier(ctx.params["schema"], "schema")


def _echo(msg: str) -> None:
    click.echo(msg)
    sys.stdout.flush()


@click.group(cls=QreplGroup)
@click.option("--schema", envvar="QREPL_SCHEMA", default="qrepl", show_default=True, metavar="SCHEMA",
              help="Publisher schema every command works on (env QREPL_SCHEMA); may follow the command.")
@click.option("--debug", is_flag=True, help="On error, show the whole error with its traceback.")
def main(schema: str, debug: bool) -> None:
    """qrepl: queued updating subscriptions (SQL Server) on dbt + Spark + Iceberg.

    Commands work on one publisher schema: --schema, else $QREPL_SCHEMA, else 'qrepl'
    (`qrepl demo` uses qrepl_demo unless --schema is given). Spark state lives in
    $QREPL_STATE_DIR (default .qrepl_state).

    \b
    Example:
      qrepl demo                                  # the whole loop, in schema qrepl_demo
      export QREPL_SCHEMA=qrepl_demo
      qrepl conflicts                             # what the demo's queue reader logged
      qrepl conflicts --show CONFLICT_ID          # winner and loser side by side
      qrepl replay scenarios/*.json --out out/ --reference
    """


@main.command()
def demo() -> None:
    """Run the full loop: publication, three subscribers, captured changes, queue reader,
    compensations, and a summary of outcomes and conflicts.

    \b
    Example:
      qrepl demo
    """
    from ..tools.demo import run_demo

    run_demo(_schema(default=DEMO_SCHEMA), echo=_echo)


@main.command()
@click.option("--wait", "wait_seconds", type=click.FloatRange(min=0), default=0, metavar="SECONDS",
              help="If another queue reader holds the run lock, wait up to SECONDS for it (default: fail at once).")
def run(wait_seconds: float) -> None:
    """Run the queue reader once (dbt run on the embedded Spark).

    One queue reader runs at a time per publication: a second one fails at once naming the
    holder (or waits with --wait). A lock left by a `qrepl run` that died is recovered
    automatically once its lease expires (QREPL_RUN_LOCK_LEASE_SECONDS, default 120); a lock
    left by a plain `dbt run` is removed with `qrepl unlock`.

    \b
    Example:
      qrepl run --schema qrepl_demo
      qrepl run --wait 600          # from a scheduler that may overlap a long run
    """
    from ..services.service import run_reader

    h = run_reader(_schema(), echo=_echo, wait_seconds=wait_seconds)
    _echo(f"batch {h['batch_id']}: {h['transactions_processed']} transactions, {h['commands_processed']} commands, "
          f"{h['conflicts']} conflicts, {h['rejected']} rejected, {h['quarantined']} quarantined")
    if h["stamped_rows"]:
        _echo(f"publisher's trigger: {h['stamped_rows']} row(s) written without a new version were stamped first")


@main.command()
@click.option("--publication", default=None, help="Only this publication.")
@click.option("--article", default=None, help="Only this article.")
@click.option("--subscriber", default=None, help="Only this subscriber.")
@click.option("--type", "conflict_type", default=None,
              type=click.Choice(sorted(CONFLICT_CODES)), help="Only this conflict type.")
@click.option("--since", type=click.DateTime(TIME_FORMATS), default=None, metavar="TIME",
              help="Only conflicts detected at or after this UTC time (YYYY-MM-DD or 'YYYY-MM-DD HH:MM[:SS]').")
@click.option("--until", type=click.DateTime(TIME_FORMATS), default=None, metavar="TIME",
              help="Only conflicts detected before this UTC time.")
@click.option("--show", "show_id", default=None, metavar="CONFLICT_ID",
              help="Detail of one conflict: winning and losing rows side by side, differing columns marked '*'.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, for scripts.")
@click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the selected conflicts' full details (JSON lines) to this file.")
@click.option("--remove", "remove_ids", multiple=True, metavar="CONFLICT_ID",
              help="Remove a reviewed conflict from the lists by conflict_id (repeatable): recorded in "
                   "conflict_reviews (who, when) by the dbt macro qrepl_remove_conflicts; the conflict is "
                   "kept until retention purges it. Removing twice changes nothing.")
@click.option("--resolve", "resolve_id", default=None, metavar="CONFLICT_ID",
              help="Resolve a conflict by hand, with --keep: subscriber writes the losing subscriber row to the "
                   "publisher (a new version, only if the row is unchanged since the conflict); publisher closes "
                   "it. Resolving twice changes nothing. See docs/conflicts.md.")
@click.option("--keep", type=click.Choice(["subscriber", "publisher"]), default=None, help="With --resolve.")
def conflicts(publication, article, subscriber, conflict_type, since, until, show_id, as_json, log_file,
              remove_ids, resolve_id, keep) -> None:
    """List conflicts, show one side by side, resolve, log or remove reviewed ones.

    \b
    Example:
      qrepl conflicts --schema qrepl_demo --subscriber south --since 2026-11-01
      qrepl conflicts --schema qrepl_demo --show 4d7db36187336aca5b0cef2066ce8ec3
      qrepl conflicts --schema qrepl_demo --subscriber south --log south.jsonl
      qrepl conflicts --schema qrepl_demo --resolve 4d7db36187336aca5b0cef2066ce8ec3 --keep subscriber
      qrepl conflicts --schema qrepl_demo --remove 4d7db36187336aca5b0cef2066ce8ec3
    """
    from ..services.service import list_conflicts, remove_conflicts, resolve_conflict

    if (resolve_id is None) != (keep is None):
        raise click.UsageError("--resolve CONFLICT_ID and --keep subscriber|publisher go together")
    if resolve_id:
        review = resolve_conflict(_schema(), resolve_id, keep)
        _echo(f"conflict {resolve_id}: keep {review['keep']}: {review['outcome']} "
              f"(by {review['resolved_by']} at {review['resolved_at']})")
        return

    if remove_ids:
        removed = remove_conflicts(_schema(), list(remove_ids))
        _echo(f"removed {removed} conflict(s)")
        if removed < len(set(remove_ids)):
            _echo(f"{len(set(remove_ids)) - removed} id(s) not removed now: removed before, or no such conflict")
        return
    rows = list_conflicts(_schema(), article, subscriber, conflict_type, since, until, show_id, publication)
    if show_id and not rows:
        raise click.ClickException(f"no conflict {show_id} (list them with: qrepl conflicts)")
    if log_file:
        log_file.write_text("".join(json.dumps(c, default=str, sort_keys=True) + "\n" for c in rows))
    for c in rows:
        if as_json:
            _echo(json.dumps(c, default=str, sort_keys=True))
        elif show_id:
            _echo("\n".join(_conflict_detail(c)))
        else:
            review = c.get("review")
            resolved = f" resolved=keep-{review['keep']} by {review['resolved_by']}" if review else ""
            _echo(f"{c['detected_at']}  {c['conflict_id']}  {c['conflict_type']:<15} {c['article']} {c['row_key']} "
                  f"subscriber={c['subscriber']} tran={c['tran_id']} winner={c['winner']}{resolved}")
    if not as_json and not show_id:
        _echo(f"{len(rows)} conflict(s)" + ("; details: qrepl conflicts --show CONFLICT_ID" if rows else ""))


@main.command()
@click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True,
              help="Folder for index.html (and, past 500 conflicts, its viewer-data-* folder).")
def viewer(out_dir) -> None:
    """Write the static HTML conflict viewer (filters, side-by-side rows, charts).
    A large log's rows are side files next to index.html: keep the folder together.

    \b
    Example:
      qrepl viewer --schema qrepl_demo --out out/viewer
    """
    from ..services.service import write_conflict_viewer

    _echo(str(write_conflict_viewer(_schema(), out_dir)))


@main.command()
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
    from ..tools.replay import replay as do_replay

    for path in do_replay(list(scenarios), out_dir, policy, reference, progress=_echo):
        _echo(f"wrote {path}")


@main.command()
@click.option("--policy", "policies", multiple=True, metavar="POLICY",
              help="A policy to compare with the publication's own (repeatable; also 'pub wins', ...). "
                   "Default: all three.")
@click.option("--batches", default=None, metavar="N..M",
              help="Batches to replay (default: all finished ones); 'N' alone is N..newest.")
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
    from ..core.model import POLICIES
    from ..services.service import publication as publication_of
    from ..tools.whatif import whatif as do_whatif
    from ..tools.whatif import whatif_table

    first, last = _batch_range(batches)
    results = do_whatif(_schema(), list(policies) or list(POLICIES), first, last, reference, progress=_echo)
    for line in whatif_table(results, publication_of(_schema()).policy):
        _echo(line)


def _batch_range(text: str | None) -> tuple[int, int | None]:
    if text is None:
        return 1, None
    first, sep, last = text.partition("..")
    if not first.isdigit() or (sep and not last.isdigit()):
        raise ConfigError(f"--batches must be N..M or N (whole numbers), got {text!r}")
    return int(first), (int(last) if sep else None)


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
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
    from ..services.service import run_dbt

    run_dbt(_schema(), list(dbt_args) or ["build"], quiet=False)


@main.command()
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
    from ..services.enqueue import enqueue_file

    report = enqueue_file(_schema(), subscriber, file, progress=_echo)
    for problem in report.problems or []:
        click.echo(f"rejected {problem}", err=True)
    _echo(f"enqueued {report.transactions} transactions ({report.commands} commands); "
          f"{report.rejected_records} record(s) rejected to enqueue_rejects")


@main.command()
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
    from ..services.service import unlock as remove_lock

    holder = remove_lock(_schema(), force=force, echo=_echo)
    _echo("no run lock held" if holder is None else
          f"removed the run lock held by {holder.holder} since {holder.acquired_at}")


@main.command()
def distribute() -> None:
    """Deliver compensating commands, publisher changes (and conflicts when not centralized)
    to every subscriber's replica. Safe to run twice.

    \b
    Example:
      qrepl distribute --schema qrepl_demo
    """
    from ..services.distribution import distribute as do_distribute

    report = do_distribute(_schema(), progress=_echo)  # one progress line per subscriber
    _echo(f"delivered to {sum(1 for c in report.values() if c['rows_delivered'] or c['conflicts'])} "
          f"of {len(report)} subscriber(s)")


@main.group()
def publication() -> None:
    """Create the publication from its YAML, show it, change its policy."""


@publication.command("create")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--seed", is_flag=True, help="Load initial publisher rows from seeds/demo_<article>.csv.")
def publication_create(config_path, seed) -> None:
    """Create or update the publication's tables.

    \b
    Example:
      qrepl publication create --config publications/sales.yml --seed
    """
    from ..services.service import create_publication

    pub = create_publication(config_path, _schema(), seed, echo=_echo)
    _echo(f"publication {pub.name} ({pub.policy}): {', '.join(a.name for a in pub.articles)}")


@main.group()
def subscription() -> None:
    """Manage subscriptions."""


@subscription.command("add")
@click.argument("subscriber")
@click.option("--mode", "update_mode", default="queued", show_default=True, metavar="MODE",
              help="Update mode: queued, immediate, failover, queued_failover or read_only "
                   "(SQL Server's 'queued tran', 'sync tran', 'queued failover', 'read only' too).")
def subscription_add(subscriber, update_mode) -> None:
    """Subscribe SUBSCRIBER and deliver its initial snapshot. Rerunning it after a crash
    finishes a subscription whose snapshot was never completed. See docs/update-modes.md
    for the update modes.

    \b
    Example:
      qrepl subscription add north
      qrepl subscription add south --mode immediate
    """
    from ..core.model import normalize_update_mode
    from ..services.service import add_subscription

    sub = add_subscription(_schema(), subscriber, echo=_echo, update_mode=normalize_update_mode(update_mode))
    _echo(f"subscribed {subscriber} ({sub['update_mode']})")


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
    from ..services.service import set_mode

    sub = set_mode(_schema(), subscriber, mode)
    _echo(f"{subscriber} ({sub['update_mode']}) now captures {sub['current_mode']}")


@subscription.command("reinit")
@click.argument("subscriber")
def subscription_reinit(subscriber) -> None:
    """Reinitialize SUBSCRIBER: fresh snapshot of the publisher, status active, generation + 1.

    \b
    Example:
      qrepl subscription reinit east
    """
    from ..services.distribution import reinitialize

    generation = reinitialize(_schema(), subscriber, progress=_echo)
    _echo(f"{subscriber} reinitialized, generation {generation}")


@subscription.command("list")
def subscription_list() -> None:
    """List subscriptions with status, generation and update mode.

    \b
    Example:
      qrepl subscription list --schema qrepl_demo
    """
    from ..services.service import list_subscriptions

    for s in list_subscriptions(_schema()):
        _echo(f"{s['subscriber']:<12} {s['status']:<15} generation {s['generation']}  {_mode(s)}"
              + (f"  ({s['reinit_reason']})" if s["reinit_reason"] else ""))


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
    from ..services.service import drop_subscription

    drop_subscription(_schema(), subscriber)
    _echo(f"dropped {subscriber}")


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
    from ..services.service import assign_identity_range

    for name, start, end in assign_identity_range(_schema(), check_identifier(subscriber, "subscriber"), article):
        _echo(f"{subscriber}: identity range {start}..{end} of {name}")


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
    from ..services.service import assign_identity_range

    for name, start, end in assign_identity_range(_schema(), PUBLISHER_RANGE_OWNER, article):
        _echo(f"publisher: identity range {start}..{end} of {name}")


@publication.command("describe")
@click.option("--table", "table", required=True, metavar="SCHEMA.TABLE",
              help="An existing Iceberg table to publish in place (outside the publication's schema "
                   "--schema, the declaration names it with table:).")
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
    from ..services.service import describe_table

    click.echo(describe_table(table, [k.strip() for k in key.split(",") if k.strip()], _schema()), nl=False)


@publication.command("set-policy")
@click.argument("policy")
def publication_set_policy(policy) -> None:
    """Change the conflict policy (only while the publication has no subscriptions).

    \b
    Example:
      qrepl publication set-policy "sub wins"
    """
    from ..services.service import set_policy

    pub = set_policy(_schema(), policy)
    _echo(f"publication {pub.name}: policy {pub.policy}")


@publication.command("show")
def publication_show() -> None:
    """Show the publication's settings and articles.

    \b
    Example:
      qrepl publication show --schema qrepl_demo
    """
    from ..services.service import publication as publication_of

    pub = publication_of(_schema())
    _echo(json.dumps(pub.to_dict(), indent=2))


@main.command()
def maintain() -> None:
    """Compact the publisher tables and expire snapshots no replica still needs.

    Merge-on-read leaves delete files behind each run; this rewrites them into plain data
    files and drops the snapshots older than the oldest one a subscriber's next delivery
    reads (see `subscription_deliveries`). Safe to run at any time between runs.

    \b
    Example:
      qrepl maintain --schema qrepl_demo
    """
    from ..services.maintenance import maintain as do_maintain

    do_maintain(_schema(), progress=_echo)


@main.command()
def status() -> None:
    """Queue depth per subscriber, update mode, pending reinitializations, last run, conflicts
    per subscriber, and the rejected share of immediate transactions.

    \b
    Example:
      qrepl status --schema qrepl_demo
    """
    from ..services.service import status as publication_status

    for line in _status_lines(publication_status(_schema())):
        _echo(line)



# ---------------------------------------------------------------- text for people (services return data)


def _conflict_detail(c: dict) -> list[str]:
    """A conflict's detail: the winning and losing rows side by side, differing columns marked '*'."""
    publisher, subscriber = c.get("publisher_row"), c.get("subscriber_row")
    winner_is_publisher = c.get("winner") == "publisher"
    left = f"publisher ({'winner' if winner_is_publisher else 'loser'})"
    right = f"subscriber ({'loser' if winner_is_publisher else 'winner'})"
    columns = list(dict.fromkeys([*(publisher or {}), *(subscriber or {})]))
    cells = [("", "column", left, right)]
    for col in columns:
        pv = "(absent)" if publisher is None else _cell(publisher.get(col))
        sv = ("(deleted)" if c["conflict_type"].startswith("delete") else "(absent)") if subscriber is None \
            else _cell(subscriber.get(col))
        cells.append(("*" if pv != sv else "", col, pv, sv))
    if not columns:
        cells.append(("*", "(row)", "(absent)", "(absent)"))
    widths = [max(len(row[i]) for row in cells) for i in range(4)]
    lines = [
        f"conflict {c['conflict_id']}: {c['conflict_type']} (code {c['conflict_type_code']}), winner {c['winner']}",
        f"  {c['reason_text']}",
        f"  article {c['article']} row {c['row_key']}; subscriber {c['subscriber']} transaction {c['tran_id']} "
        f"command {c['command_seq']}; batch {c['batch_id']} at {c['detected_at']}; policy {c['policy']}",
        f"  versions: publisher {c['publisher_version']}, subscriber saw {c['old_version']}, "
        f"subscriber wrote {c['new_version'] or '(a delete)'}",
    ]
    review = c.get("review")
    lines.append(f"  resolved: keep {review['keep']}: {review['outcome']} (by {review['resolved_by']} at "
                 f"{review['resolved_at']})" if review else
                 f"  not resolved: qrepl conflicts --resolve {c['conflict_id']} --keep subscriber|publisher")
    lines.append("")
    for row in cells:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    return lines


def _mode(s: dict) -> str:
    """`mode queued`, or for a failover subscription `mode failover (now queued)`."""
    now = f" (now {s['current_mode']})" if s["update_mode"] in ("failover", "queued_failover") else ""
    return f"mode {s['update_mode']}{now}"


def _cell(value: Any) -> str:
    return "null" if value is None else str(value)


def _status_lines(report: dict) -> list[str]:
    pub = report["publication"]
    lines = [f"publication {pub.name}: policy {pub.policy}, articles {', '.join(a.name for a in pub.articles)}"]
    for s in report["subscriptions"]:
        per_article = ", ".join(f"{a}: {n}" for a, n in s["conflicts"].items())
        lines.append(f"  {s['subscriber']:<12} {s['status']:<15} generation {s['generation']}  {_mode(s)}  "
                     f"queued commands {s['queued_commands']}  conflicts {per_article or 0}")
        imm = s.get("immediate")
        if imm and imm["last_fallback_at"] and s["current_mode"] == "queued":
            lines.append(f"  {'':<12} fell back to queued automatically at {imm['last_fallback_at']} (publisher "
                         f"unreachable); after a run: qrepl subscription set-mode {s['subscriber']} immediate")
        if imm and imm["transactions"]:
            lines.append(f"  {'':<12} immediate transactions {imm['transactions']}, rejected {imm['rejected']} "
                         f"({imm['rejected_rate']:.0%})"
                         + (f", last at {imm['last_rejected_at']}" if imm["last_rejected_at"] else ""))
    h = report["last_run"]
    if h is not None:
        kept = h.get("publisher_rows_kept") or 0
        lines.append(f"last run: batch {h['batch_id']} at {h['started_at']}: {h['transactions_processed']} transactions, "
                     f"{h['conflicts']} conflicts, {h['rejected']} rejected, {h['quarantined']} quarantined"
                     + (f", {kept} publisher row(s) kept (changed at the publisher during the run)" if kept else ""))
    for r in report.get("identity_ranges", []):
        lines.append(f"identity {r['article']}: {r['owner']} range {r['range_start']}..{r['range_end']}, "
                     f"{r['left']} value(s) left" + ("" if r["left"] else "; used up: run `" + (
                         f"qrepl publication range --article {r['article']}" if r["owner"] == "publisher"
                         else f"qrepl subscription range {r['owner']} --article {r['article']}") + "`"))
    holder = report["run_lock"]
    if holder is not None:
        lines.append(f"run lock: held by {holder.holder} since {holder.acquired_at} ({holder.lease_text()})")
    return lines


if __name__ == "__main__":
    main()
