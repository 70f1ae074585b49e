"""`python -m qrepl.cli`."""

from .app import main

main()
