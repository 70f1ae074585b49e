"""The product's names: identifiers, conflict policies and types, quarantine reasons, the
column and table names qrepl keeps for itself, and the one error a user sees as one line.

Pure Python, like all of core/: the sequential reference, the capture API and the replay
writer agree on one definition (and the SQL models mirror it; tests hold them equal)."""

from __future__ import annotations

import re
from typing import Any, Callable

# Patterns end in \Z, not $: `$` also matches before a final newline, so "north\n" would pass.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")

POLICIES = ("publisher_wins", "publisher_wins_reinit", "subscriber_wins")
POLICY_ALIASES = {
    "pub wins": "publisher_wins",
    "sub reinit": "publisher_wins_reinit",
    "sub wins": "subscriber_wins",
}

CONFLICT_CODES = {
    "update_update": 1,
    "update_missing": 2,
    "delete_update": 3,
    "delete_missing": 4,
    "insert_exists": 5,
}

# One sentence per conflict type; the dbt macro `conflict_reason_text` spells the same text.
CONFLICT_REASONS = {
    "update_update": "The row was changed at the publisher or by another subscriber since the subscriber read it.",
    "update_missing": "The subscriber updated a row that no longer exists at the publisher.",
    "delete_update": "The subscriber deleted a row that was changed elsewhere.",
    "delete_missing": "The subscriber deleted a row that was already deleted elsewhere.",
    "insert_exists": "The subscriber inserted a row whose primary key already exists at the publisher.",
}


# Quarantine reasons (the hostile-input catalogue), checked in this order; the first that
# applies is recorded. The reference (`reference.ReferenceReader._reject_reason`) and the dbt
# model `int_batch_commands` both follow this order.
REJECT_REASONS = (
    "null tran_id",
    "unknown subscriber",
    "null generation",
    "generation newer than the subscription",
    "null or negative tran_seq",
    "null enqueued_at",
    "unknown article",
    "bad op",
    "command_seq not 1..n",
    "oversize row",
    "oversize key",
    "I with old_version",
    "I without new_version",
    "U without old_version",
    "U without new_version",
    "D without old_version",
    "D with new_version",
    "version not a UUID",
    "missing key",
    "malformed key JSON",
    "empty key",
    "missing key column",
    "null key value",
    "non-canonical key",
    "malformed JSON",
    "unknown extra columns",
    "missing column",
    "wrong value type",
    "key mismatch",
    "duplicate command with other content",
    "duplicate command",
    "reused new_version",
    "outside the partition",
)
REJECT_WHOLE_TRANSACTION = "transaction has a quarantined command"


# Column names the queue reader's own models use next to the article columns: an article column
# of one of these names (or starting with qrepl_) would collide in the MERGE and the row images.
RESERVED_COLUMNS = frozenset(
    {
        "msrepl_tran_version",
        "row",
        "row_key",
        "row_json",
        "typed_row",
        "typed_key",
        "change_op",
        "op",
        "batch_id",
        "subscriber",
        "generation",
        "tran_id",
        "tran_seq",
        "tran_pos",
        "command_seq",
        "article",
        "old_version",
        "new_version",
        "new_row",
        "old_row",
        "enqueued_at",
        "reject_reason",
        "batched_at",
    }
)


# The tables qrepl itself keeps in the publisher's schema: the Python layer's
# (qrepl.storage.tables), the dbt project's models, and those its macros make. An article may
# not be one of them (by its name, or a `table:` in that schema): publishing `subscriptions`
# would hand the queue reader's own state to subscribers. unit/test_article_table.py holds
# this list equal to the tables qrepl really makes.
QREPL_TABLES = frozenset(
    {
        # Python layer (storage/tables.py)
        "replication_queue",
        "subscriptions",
        "subscription_tombstones",
        "qrepl_publication",
        "qrepl_articles",
        "immediate_transactions",
        "immediate_rejections",
        "identity_ranges",
        "subscription_deliveries",
        "snapshot_pins",
        "compensation_deliveries",
        "conflict_deliveries",
        "enqueue_rejects",
        # made by macros
        "publisher_stamps",
        "conflict_reviews",
        "qrepl_run_lock",
        # dbt models
        "stg_publication",
        "stg_replication_queue",
        "stg_subscriptions",
        "int_batch_subscriptions",
        "int_batch_commands",
        "int_batch_transactions",
        "int_queued_commands_sequenced",
        "int_transaction_rows",
        "int_resolution_passes",
        "int_resolution_folded",
        "int_transactions_resolved",
        "int_queued_commands_judged",
        "transaction_outcomes",
        "publisher_changes",
        "conflicts",
        "compensating_commands",
        "reinit_requests",
        "queue_rejects",
        "batch_applied",
        "queue_reader_history",
        # a mart table from before its view, kept (macros/materializations/qrepl_view.sql)
        "transaction_outcomes_before_view",
        "compensating_commands_before_view",
        "reinit_requests_before_view",
        "queue_rejects_before_view",
    }
)


class ConfigError(ValueError):
    """Bad publication configuration or bad user input: shown to the user as one line."""


def check_identifier(name: Any, what: str) -> str:
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise ConfigError(f"invalid {what} name {name!r}: must match ^[A-Za-z_][A-Za-z0-9_]*$")
    return name


def normalize_policy(policy: Any) -> str:
    if not isinstance(policy, str):
        raise ConfigError(f"invalid policy {policy!r}")
    value = POLICY_ALIASES.get(policy.strip().lower(), policy.strip().lower())
    if value not in POLICIES:
        allowed = ", ".join(list(POLICIES) + [repr(a) for a in POLICY_ALIASES])
        raise ConfigError(f"unknown policy {policy!r}: use one of {allowed}")
    return value


# A callback that shows the user one line of progress (the CLI's echo, print, or nothing).
Progress = Callable[[str], None]
