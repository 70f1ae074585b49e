"""The `qrepl` command line (qrepl.cli.app)."""

from .app import main

__all__ = ["main"]
