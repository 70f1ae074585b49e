"""Deprecated: the services this module held, re-exported from the modules that now hold them.

Kept for one release so code that imports `qrepl.services.service` still works; it goes in the
next one. Import from the module named after what the user does instead: `services.publication`,
`services.subscriptions`, `services.reader`, `services.conflicts`, `services.status`,
`services.identity_ranges`, `services.paths`; `warehouse()` and `default_schema()` are in
`storage.open`, and the callback type `Echo` is `core.vocabulary.Progress`."""

from __future__ import annotations

from ..core.vocabulary import Progress
from ..storage.open import default_schema, warehouse
from .conflicts import REMOVED, list_conflicts, remove_conflicts, resolve_conflict, write_conflict_viewer
from .identity_ranges import assign_identity_range, identity_ranges
from .paths import output_dir, project_file
from .publication import (
    create_publication,
    describe_table,
    drop_publication,
    load_publication_file,
    publication,
    set_policy,
)
from .reader import run_dbt, run_reader, transaction_outcomes, unlock
from .status import status
from .subscriptions import add_subscription, drop_subscription, list_subscriptions, set_mode

Echo = Progress

__all__ = [
    "Echo",
    "REMOVED",
    "default_schema",
    "warehouse",
    "project_file",
    "output_dir",
    "run_dbt",
    "load_publication_file",
    "create_publication",
    "describe_table",
    "add_subscription",
    "assign_identity_range",
    "identity_ranges",
    "drop_publication",
    "publication",
    "set_policy",
    "list_subscriptions",
    "drop_subscription",
    "unlock",
    "transaction_outcomes",
    "set_mode",
    "run_reader",
    "list_conflicts",
    "write_conflict_viewer",
    "resolve_conflict",
    "remove_conflicts",
    "status",
]
