"""Deprecated: the `qrepl` command group, re-exported from the modules that now hold the commands.

Kept for one release so code that imports `qrepl.cli.commands` still works; it goes in the next
one. The group and its one-line errors are in `cli.app`, each command group in a module named
after it (`cli.publication`, `cli.subscription`, `cli.conflicts`, `cli.reader`, ...), the text
they print in `cli.format`."""

from __future__ import annotations

from .app import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
