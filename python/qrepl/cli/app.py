"""qrepl command line: parses, calls a service, prints. Errors are one line and exit 1
(`--debug` shows the whole error)."""

from __future__ import annotations

import sys
import traceback

import click

from ..core.vocabulary import ConfigError
from .conflicts import conflicts, viewer
from .distribution import distribute, maintain
from .publication import publication
from .reader import dbt, enqueue, run, unlock
from .status import status
from .subscription import subscription
from .tools import demo, replay, whatif


class QreplGroup(click.Group):
    """`--schema` belongs to the group but may stand anywhere on the command line (`qrepl run
    --schema s` is `qrepl --schema s run`); errors are one line unless `qrepl --debug ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:
            args = group_options_first(args)
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


def group_options_first(args: list[str]) -> list[str]:
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
            front += args[i : i + 2]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return front + rest


@click.group(cls=QreplGroup)
@click.option(
    "--schema",
    envvar="QREPL_SCHEMA",
    default="qrepl",
    show_default=True,
    metavar="SCHEMA",
    help="Publisher schema every command works on (env QREPL_SCHEMA); may follow the command.",
)
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
      qrepl conflicts show CONFLICT_ID            # winner and loser side by side
      qrepl replay scenarios/*.json --out out/ --reference
    """


for command in (
    demo,
    run,
    conflicts,
    viewer,
    replay,
    whatif,
    dbt,
    enqueue,
    unlock,
    distribute,
    publication,
    subscription,
    maintain,
    status,
):
    main.add_command(command)


if __name__ == "__main__":
    main()
