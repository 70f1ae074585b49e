"""`qrepl status`."""

from __future__ import annotations

import click

from ..services.status import status as publication_status
from .context import current_schema, echo
from .format import status_lines


@click.command()
def status() -> None:
    """Queue depth per subscriber, update mode, pending reinitializations, last batch, conflicts
    per subscriber, and the rejected share of immediate transactions.

    \b
    Example:
      qrepl status --schema qrepl_demo
    """
    for line in status_lines(publication_status(current_schema())):
        echo(line)
