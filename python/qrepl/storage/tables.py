"""Every table of the publisher's schema that the Python layer creates and writes, with its
columns, in one place (docs/spec.md §4, "Who owns what"). Each is written only by the Python
module the spec names; dbt reads some of them and writes none.

models/staging/_sources.yml documents each one as a source of the dbt project, with the same
columns in the same order: python/tests/unit/test_python_tables.py checks it, so the lineage
`dbt docs` shows and the tables Python makes cannot drift apart. A table is made by
`Warehouse.create_own(name)` with the DDL below and nowhere else.
"""

from __future__ import annotations

# one row per queued command (capture.py, enqueue.py)
QUEUE_SCHEMA = (
    "subscriber STRING, generation INT, tran_id STRING, tran_seq BIGINT, command_seq INT, "
    "article STRING, op STRING, row_key STRING, old_version STRING, new_version STRING, "
    "new_row STRING, old_row STRING, enqueued_at TIMESTAMP"
)
SUBSCRIPTIONS_SCHEMA = (
    "subscriber STRING, publication STRING, status STRING, generation INT, "
    "reinit_requested_at TIMESTAMP, reinit_reason STRING, update_mode STRING, current_mode STRING, "
    "partition_spec STRING"
)
# A dropped subscription's last generation (its tombstone): adding the subscriber again starts
# one above it, so the dropped incarnation's queued transactions are stale and never applied.
SUBSCRIPTION_TOMBSTONES_SCHEMA = "subscriber STRING, generation INT, dropped_at TIMESTAMP"
PUBLICATION_SCHEMA = "publication STRING, policy STRING, conflict_retention_days INT, centralized_conflicts BOOLEAN"
ARTICLES_SCHEMA = (
    "article STRING, ordinal INT, key_columns ARRAY<STRING>, column_names ARRAY<STRING>, column_types ARRAY<STRING>, "
    "table_name STRING, identity_column STRING, identity_range BIGINT, stamped_column STRING"
)
# immediate updating (docs/update-modes.md): one row per immediate transaction decided at the
# publisher, and one row per conflicting row of a rejected one
IMMEDIATE_TRANSACTIONS_SCHEMA = "subscriber STRING, tran_id STRING, outcome STRING, rows INT, decided_at TIMESTAMP"
IMMEDIATE_REJECTIONS_SCHEMA = (
    "subscriber STRING, tran_id STRING, article STRING, row_key STRING, command_seq INT, conflict_type STRING, "
    "reason_text STRING, publisher_row STRING, subscriber_row STRING, publisher_version STRING, "
    "old_version STRING, new_version STRING, rejected_at TIMESTAMP"
)
# identity ranges (identity_ranges.py): a per-article mark row (owner `*`) and one row per owner's
# range; token: the last compare-and-swap's own id, claimed: the highest value given from the range
IDENTITY_RANGES_SCHEMA = (
    "article STRING, owner STRING, range_start BIGINT, range_end BIGINT, assigned_at TIMESTAMP, "
    "token STRING, claimed BIGINT"
)
# added after the first release: a table created before gets them on first use (identity_ranges.py)
IDENTITY_RANGES_LATE_COLUMNS = {"token": "STRING", "claimed": "BIGINT"}
# which publisher snapshot each replica table reflects (replica.py), and the snapshots a
# delivery under way still needs (maintenance keeps both)
DELIVERIES_SCHEMA = "subscriber STRING, article STRING, snapshot_id BIGINT"
# a compensating command delivered to its subscriber (compensating_commands: batch_id, seq)
COMPENSATION_DELIVERIES_SCHEMA = "subscriber STRING, batch_id BIGINT, seq INT, delivered_at TIMESTAMP"
# the newest batch whose conflicts reached the subscriber's replica (conflicts not centralized)
CONFLICT_DELIVERIES_SCHEMA = "subscriber STRING, batch_id BIGINT"
# the records `qrepl enqueue` refused, in the queue's columns with the reason (the reader's own
# quarantine is the dbt mart queue_rejects; a store from before this table holds earlier
# refusals there, with a null batch_id)
ENQUEUE_REJECTS_SCHEMA = QUEUE_SCHEMA + ", reason STRING, rejected_at TIMESTAMP"

PYTHON_TABLES: dict[str, str] = {
    "replication_queue": QUEUE_SCHEMA,
    "subscriptions": SUBSCRIPTIONS_SCHEMA,
    "subscription_tombstones": SUBSCRIPTION_TOMBSTONES_SCHEMA,
    "qrepl_publication": PUBLICATION_SCHEMA,
    "qrepl_articles": ARTICLES_SCHEMA,
    "immediate_transactions": IMMEDIATE_TRANSACTIONS_SCHEMA,
    "immediate_rejections": IMMEDIATE_REJECTIONS_SCHEMA,
    "identity_ranges": IDENTITY_RANGES_SCHEMA,
    "subscription_deliveries": DELIVERIES_SCHEMA,
    "snapshot_pins": DELIVERIES_SCHEMA,
    "compensation_deliveries": COMPENSATION_DELIVERIES_SCHEMA,
    "conflict_deliveries": CONFLICT_DELIVERIES_SCHEMA,
    "enqueue_rejects": ENQUEUE_REJECTS_SCHEMA,
}


def columns(ddl: str) -> list[str]:
    """The column names of a DDL string above, in order."""
    return [c.split()[0] for c in ddl.split(", ")]
