"""`python -m qrepl.cli`."""

from .commands import main

main()
