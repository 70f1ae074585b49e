"""`qrepl conflicts list|show|log|resolve|remove` and `qrepl viewer`.

`qrepl conflicts` alone lists, as before the verbs; its flags `--show`, `--log`, `--remove`
and `--resolve` still work for this release and say on stderr which verb replaces them."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..core.vocabulary import CONFLICT_CODES
from ..services.conflicts import list_conflicts, remove_conflicts, resolve_conflict, write_conflict_viewer
from .context import current_schema, echo
from .format import conflict_detail

TIME_FORMATS = ["%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"]
# The flags that were verbs before `qrepl conflicts` had them, and the verb each is now.
OLD_FLAGS = {
    "show_id": ("--show", "show CONFLICT_ID"),
    "log_file": ("--log", "log FILE"),
    "remove_ids": ("--remove", "remove CONFLICT_ID..."),
    "resolve_id": ("--resolve", "resolve CONFLICT_ID --keep subscriber|publisher"),
}


def _filters(command):
    """The options that select conflicts (`qrepl conflicts`, `list` and `log`)."""
    for option in reversed(
        [
            click.option("--publication", default=None, help="Only this publication."),
            click.option("--article", default=None, help="Only this article."),
            click.option("--subscriber", default=None, help="Only this subscriber."),
            click.option(
                "--partition",
                default=None,
                metavar="'ARTICLE: CONDITION'",
                help="Only conflicts judged in this partition, as `list --json` and the viewer name it "
                "(the subscriber's row filter of the article then, e.g. \"orders: region = 'north'\", "
                'or "orders: every row").',
            ),
            click.option(
                "--type",
                "conflict_type",
                default=None,
                type=click.Choice(sorted(CONFLICT_CODES)),
                help="Only this conflict type.",
            ),
            click.option(
                "--since",
                type=click.DateTime(TIME_FORMATS),
                default=None,
                metavar="TIME",
                help="Only conflicts detected at or after this UTC time (YYYY-MM-DD or 'YYYY-MM-DD HH:MM[:SS]').",
            ),
            click.option(
                "--until",
                type=click.DateTime(TIME_FORMATS),
                default=None,
                metavar="TIME",
                help="Only conflicts detected before this UTC time.",
            ),
        ]
    ):
        command = option(command)
    return command


JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="One JSON object per line, for scripts.")


@click.group(invoke_without_command=True)
@_filters
@click.option(
    "--show", "show_id", default=None, metavar="CONFLICT_ID", help="Deprecated: `qrepl conflicts show CONFLICT_ID`."
)
@JSON_OPTION
@click.option(
    "--log",
    "log_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Deprecated: `qrepl conflicts log FILE`.",
)
@click.option(
    "--remove",
    "remove_ids",
    multiple=True,
    metavar="CONFLICT_ID",
    help="Deprecated: `qrepl conflicts remove CONFLICT_ID...`.",
)
@click.option(
    "--resolve",
    "resolve_id",
    default=None,
    metavar="CONFLICT_ID",
    help="Deprecated: `qrepl conflicts resolve CONFLICT_ID --keep subscriber|publisher`.",
)
@click.option("--keep", type=click.Choice(["subscriber", "publisher"]), default=None, help="With --resolve.")
@click.pass_context
def conflicts(
    ctx,
    publication,
    article,
    subscriber,
    partition,
    conflict_type,
    since,
    until,
    show_id,
    as_json,
    log_file,
    remove_ids,
    resolve_id,
    keep,
) -> None:
    """List conflicts, show one side by side, write them to a file, resolve one by hand, or
    remove reviewed ones from the lists. Without a verb, lists them (as `list` does).

    \b
    Example:
      qrepl conflicts list --schema qrepl_demo --subscriber south --since 2026-11-01
      qrepl conflicts show 4d7db36187336aca5b0cef2066ce8ec3 --schema qrepl_demo
      qrepl conflicts log south.jsonl --schema qrepl_demo --subscriber south
      qrepl conflicts resolve 4d7db36187336aca5b0cef2066ce8ec3 --keep subscriber --schema qrepl_demo
      qrepl conflicts remove 4d7db36187336aca5b0cef2066ce8ec3 --schema qrepl_demo
    """
    given = [
        p for p in ctx.command.params if ctx.get_parameter_source(p.name) is click.core.ParameterSource.COMMANDLINE
    ]
    if ctx.invoked_subcommand is not None:
        if given:
            raise click.UsageError(
                f"{', '.join(p.opts[0] for p in given)}: give the options after the verb "
                f"(qrepl conflicts {ctx.invoked_subcommand} ...)"
            )
        return
    old = [OLD_FLAGS[p.name] for p in given if p.name in OLD_FLAGS]
    if old:
        click.echo(
            "qrepl: "
            + "; ".join(f"`qrepl conflicts {flag}` is deprecated, use `qrepl conflicts {verb}`" for flag, verb in old)
            + " (the flags go in the next release)",
            err=True,
        )
    if (resolve_id is None) != (keep is None):
        raise click.UsageError("--resolve CONFLICT_ID and --keep subscriber|publisher go together")
    if resolve_id:
        _resolve(resolve_id, keep)
        return
    if remove_ids:
        _remove(remove_ids)
        return
    rows = _selected(publication, article, subscriber, conflict_type, since, until, show_id, partition)
    if log_file:
        _write_log(log_file, rows)
    _print(rows, as_json, detail=show_id is not None)


@conflicts.command("list")
@_filters
@JSON_OPTION
def conflicts_list(publication, article, subscriber, partition, conflict_type, since, until, as_json) -> None:
    """List conflicts, oldest first, one line each with its conflict_id.

    \b
    Example:
      qrepl conflicts list --schema qrepl_demo --subscriber south --since 2026-11-01
      qrepl conflicts list --type update_update --json
    """
    _print(
        _selected(publication, article, subscriber, conflict_type, since, until, partition=partition),
        as_json,
        detail=False,
    )


@conflicts.command("show")
@click.argument("conflict_id")
@JSON_OPTION
def conflicts_show(conflict_id, as_json) -> None:
    """Show one conflict: the winning and losing rows side by side, differing columns marked '*'.

    \b
    Example:
      qrepl conflicts show 4d7db36187336aca5b0cef2066ce8ec3 --schema qrepl_demo
    """
    _print(_selected(show_id=conflict_id), as_json, detail=True)


@conflicts.command("log")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_filters
def conflicts_log(file, publication, article, subscriber, partition, conflict_type, since, until) -> None:
    """Write the selected conflicts' full details to FILE, one JSON object per line.

    \b
    Example:
      qrepl conflicts log south.jsonl --schema qrepl_demo --subscriber south
    """
    rows = _selected(publication, article, subscriber, conflict_type, since, until, partition=partition)
    _write_log(file, rows)
    echo(f"wrote {len(rows)} conflict(s) to {file}")


@conflicts.command("resolve")
@click.argument("conflict_id")
@click.option(
    "--keep",
    type=click.Choice(["subscriber", "publisher"]),
    required=True,
    help="subscriber writes the losing subscriber row to the publisher (a new version, only if the row "
    "is unchanged since the conflict); publisher closes it.",
)
def conflicts_resolve(conflict_id, keep) -> None:
    """Resolve a conflict by hand. Resolving twice changes nothing. See docs/conflicts.md.

    \b
    Example:
      qrepl conflicts resolve 4d7db36187336aca5b0cef2066ce8ec3 --keep subscriber --schema qrepl_demo
    """
    _resolve(conflict_id, keep)


@conflicts.command("remove")
@click.argument("conflict_ids", nargs=-1, required=True, metavar="CONFLICT_ID...")
def conflicts_remove(conflict_ids) -> None:
    """Remove reviewed conflicts from the lists: recorded in conflict_reviews (who, when) by the
    dbt macro qrepl_remove_conflicts; a conflict is kept until retention purges it. Removing
    twice changes nothing.

    \b
    Example:
      qrepl conflicts remove 4d7db36187336aca5b0cef2066ce8ec3 --schema qrepl_demo
    """
    _remove(conflict_ids)


def _selected(
    publication=None,
    article=None,
    subscriber=None,
    conflict_type=None,
    since=None,
    until=None,
    show_id=None,
    partition=None,
) -> list[dict]:
    """The conflicts the options select; with show_id, that one (a ClickException if there is none)."""
    rows = list_conflicts(
        current_schema(), article, subscriber, conflict_type, since, until, show_id, publication, partition
    )
    if show_id and not rows:
        raise click.ClickException(f"no conflict {show_id} (list them with: qrepl conflicts list)")
    return rows


def _print(rows: list[dict], as_json: bool, detail: bool) -> None:
    for c in rows:
        if as_json:
            echo(json.dumps(c, default=str, sort_keys=True))
        elif detail:
            echo("\n".join(conflict_detail(c)))
        else:
            review = c.get("review")
            resolved = f" resolved=keep-{review['keep']} by {review['resolved_by']}" if review else ""
            echo(
                f"{c['detected_at']}  {c['conflict_id']}  {c['conflict_type']:<15} {c['article']} {c['row_key']} "
                f"subscriber={c['subscriber']} tran={c['tran_id']} winner={c['winner']}{resolved}"
            )
    if not as_json and not detail:
        echo(f"{len(rows)} conflict(s)" + ("; details: qrepl conflicts show CONFLICT_ID" if rows else ""))


def _write_log(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(c, default=str, sort_keys=True) + "\n" for c in rows))


def _resolve(conflict_id: str, keep: str) -> None:
    review = resolve_conflict(current_schema(), conflict_id, keep)
    echo(
        f"conflict {conflict_id}: keep {review['keep']}: {review['outcome']} "
        f"(by {review['resolved_by']} at {review['resolved_at']})"
    )


def _remove(conflict_ids: tuple[str, ...]) -> None:
    removed = remove_conflicts(current_schema(), list(conflict_ids))
    echo(f"removed {removed} conflict(s)")
    if removed < len(set(conflict_ids)):
        echo(f"{len(set(conflict_ids)) - removed} id(s) not removed now: removed before, or no such conflict")


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="Folder for index.html (and, past 500 conflicts, its viewer-data-* folder).",
)
def viewer(out_dir) -> None:
    """Write the static HTML conflict viewer (filters, side-by-side rows, charts).
    A large log's rows are side files next to index.html: keep the folder together.

    \b
    Example:
      qrepl viewer --schema qrepl_demo --out out/viewer
    """
    echo(str(write_conflict_viewer(current_schema(), out_dir)))
