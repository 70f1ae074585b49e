"""The `qrepl` command line (qrepl.cli.commands)."""

from .commands import main

__all__ = ["main"]
