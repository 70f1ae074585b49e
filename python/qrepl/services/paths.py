"""Where qrepl's files are: the dbt project it runs and the folder it writes outputs to."""

from __future__ import annotations

from pathlib import Path

from ..storage.spark import PROJECT_DIR, WORK_DIR


def project_file(*parts: str) -> Path:
    """A file of the dbt project qrepl runs (the checkout, or the copy an installed package holds)."""
    return PROJECT_DIR.joinpath(*parts)


def output_dir(*parts: str) -> Path:
    """Where qrepl writes its outputs: beside the checkout, or in the working directory of an
    installed package."""
    return WORK_DIR.joinpath(*parts)
