"""What every command needs of its invocation: the publisher schema it works on, and a line
of output shown at once."""

from __future__ import annotations

import sys

import click

from ..core.vocabulary import check_identifier


def current_schema(default: str | None = None) -> str:
    """The publisher schema of this invocation: --schema, else $QREPL_SCHEMA, else 'qrepl'.
    With `default`, only an explicit --schema overrides it (the demo never takes
    $QREPL_SCHEMA, so it cannot reset a schema the environment happens to name)."""
    ctx = click.get_current_context().find_root()
    if default is not None and ctx.get_parameter_source("schema") is not click.core.ParameterSource.COMMANDLINE:
        return default
    return check_identifier(ctx.params["schema"], "schema")


def echo(msg: str) -> None:
    click.echo(msg)
    sys.stdout.flush()
