"""Shared vocabulary of the product: policies, conflict types, identifiers, keys, typed values.

Everything here is pure Python so the sequential reference, the capture API and the
replay writer agree on one definition (and the SQL models mirror it; tests hold them equal).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import Context, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Iterable

from . import non_finite

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
    "update_update": "The row was changed at the publisher or by another subscriber "
    "since the subscriber read it.",
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
)
REJECT_WHOLE_TRANSACTION = "transaction has a quarantined command"

# Key columns: any supported type but float, double and binary; a decimal key is written in the
# canonical key as a JSON number, as Spark's to_json writes it.
KEY_TYPES = ("tinyint", "smallint", "int", "bigint", "string", "boolean", "date", "timestamp", "timestamp_ntz")
SCALAR_TYPES = ("tinyint", "smallint", "int", "bigint", "string", "float", "double", "boolean", "date",
                "timestamp", "timestamp_ntz", "binary")
TIMESTAMP_TYPES = ("timestamp", "timestamp_ntz")
INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
DECIMAL_TYPE = re.compile(r"^decimal\((\d+),\s*(\d+)\)\Z")

# What the queue reader accepts (the dbt macro `queued_rows_typed_sql` spells the same rules).
MAX_ROW_BYTES = 65536  # a queued new_row larger than this (UTF-8 bytes) is quarantined
# A queued row_key larger than this is quarantined. An I or U command's key is part of its
# new_row, so MAX_ROW_BYTES bounds it already; a D command carries only its key, bounded here alike.
MAX_KEY_BYTES = MAX_ROW_BYTES
UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
DATE_TEXT = re.compile(r"^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
# A timestamp's text in a queued row (docs/spec.md §3): ISO-8601 date and time ('T' or a space
# between), seconds required, 0 to 6 fractional digits (a 7th is refused, never truncated), and
# for a `timestamp` (an instant) a zone: `Z` or an offset of at most 18:00 (Java's ZoneOffset
# range); a `timestamp_ntz` (a wall-clock reading) takes no zone at all. Digits are ASCII only.
# The dbt macro `_timestamp_pattern` spells the same patterns.
_WALL_CLOCK = (r"(?!0000)([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])"
               r"(?:\.([0-9]{1,6}))?")
TIMESTAMP_TEXT = re.compile(_WALL_CLOCK + r"(Z|[+-](?:(?:0[0-9]|1[0-7]):[0-5][0-9]|18:00))\Z")
TIMESTAMP_NTZ_TEXT = re.compile(_WALL_CLOCK + r"\Z")
# A binary value's text: standard base64 (RFC 4648 alphabet A-Z a-z 0-9 + /), padded with '=' to
# a multiple of 4, no line breaks or spaces, and canonical (the unused bits of the last character
# zero), so each text stands for one byte string and reads back as itself. The dbt macro
# `_base64_pattern` spells the same pattern.
BASE64_TEXT = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?\Z")
# A decimal's text (a JSON string's content, or a JSON number as written): digits, an optional
# fraction and an optional exponent of at most 9 digits. The dbt macro `_decimal_fits` spells
# the same rule.
DECIMAL_TEXT = re.compile(r"-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([-+]?[0-9]{1,9}))?")
# Decimal arithmetic (quantize) with room for 38 digits on either side of the point: Python's
# default context keeps 28 digits and would round or fail on a decimal(38,s) value.
DECIMAL_CONTEXT = Context(prec=100, Emax=999_999_999, Emin=-999_999_999)
# Column names the queue reader's own models use next to the article columns: an article column
# of one of these names (or starting with qrepl_) would collide in the MERGE and the row images.
RESERVED_COLUMNS = frozenset({
    "msrepl_tran_version", "row", "row_key", "row_json", "typed_row", "typed_key", "change_op", "op",
    "batch_id", "subscriber", "generation", "tran_id", "tran_seq", "tran_pos", "command_seq", "article",
    "old_version", "new_version", "new_row", "old_row", "enqueued_at", "reject_reason", "batched_at",
})


# The tables qrepl itself keeps in the publisher's schema: the Python layer's
# (qrepl.storage.tables), the dbt project's models, and those its macros make. An article may
# not be one of them (by its name, or a `table:` in that schema): publishing `subscriptions`
# would hand the queue reader's own state to subscribers. unit/test_article_table.py holds
# this list equal to the tables qrepl really makes.
QREPL_TABLES = frozenset({
    # Python layer (storage/tables.py)
    "replication_queue", "subscriptions", "subscription_tombstones", "qrepl_publication", "qrepl_articles",
    "immediate_transactions", "immediate_rejections", "identity_ranges", "subscription_deliveries",
    "snapshot_pins", "compensation_deliveries", "conflict_deliveries", "enqueue_rejects",
    # made by macros
    "publisher_stamps", "conflict_reviews", "qrepl_run_lock",
    # dbt models
    "stg_publication", "stg_replication_queue", "stg_subscriptions", "int_batch_subscriptions",
    "int_batch_commands", "int_batch_transactions", "int_queued_commands_sequenced", "int_transaction_rows",
    "int_resolution_passes", "int_resolution_folded", "int_transactions_resolved", "int_queued_commands_judged",
    "transaction_outcomes", "publisher_changes",
    "conflicts", "compensating_commands", "reinit_requests", "queue_rejects", "batch_applied",
    "queue_reader_history",
})


class ConfigError(ValueError):
    """Bad publication configuration or bad user input: shown to the user as one line."""


# Update modes of a subscription (docs/update-modes.md). SQL Server's `sp_addsubscription
# @update_mode` spellings are accepted and normalized to these names.
# a subscription's status while `qrepl subscription reinit` runs (besides active and reinit_pending)
REINITIALIZING = "reinitializing"
UPDATE_MODES = ("queued", "immediate", "failover", "queued_failover", "read_only")
UPDATE_MODE_ALIASES = {
    "queued tran": "queued",
    "sync tran": "immediate",
    "queued failover": "queued_failover",
    "read only": "read_only",
}
# The modes a failover subscription switches between (`qrepl subscription set-mode`).
CURRENT_MODES = ("queued", "immediate")


def normalize_update_mode(mode: Any) -> str:
    if not isinstance(mode, str):
        raise ConfigError(f"invalid update mode {mode!r}")
    text = " ".join(mode.strip().lower().split())
    value = UPDATE_MODE_ALIASES.get(text, text.replace(" ", "_"))
    if value not in UPDATE_MODES:
        allowed = ", ".join(list(UPDATE_MODES) + [repr(a) for a in UPDATE_MODE_ALIASES])
        raise ConfigError(f"unknown update mode {mode!r}: use one of {allowed}")
    return value


def initial_current_mode(update_mode: str) -> str:
    """How a new subscription of this update mode captures: immediate for immediate and
    failover, read_only for read_only, otherwise queued."""
    if update_mode in ("immediate", "failover"):
        return "immediate"
    return "read_only" if update_mode == "read_only" else "queued"


def capture_refusal(subscriber: str, current_mode: str, status: str = "active") -> str | None:
    """Why a subscription may not capture changes (None when it may)."""
    if status == REINITIALIZING:
        return (f"subscriber {subscriber} is being reinitialized: capture again once "
                f"`qrepl subscription reinit {subscriber}` has finished")
    if current_mode == "read_only":
        return (f"subscriber {subscriber} is read only: its replica cannot be changed "
                f"(subscribe it with --mode queued or immediate to capture changes)")
    return None


def switch_refusal(subscriber: str, update_mode: str, target: str, pending_commands: int,
                   reader_ran_since_init: bool) -> str | None:
    """Why `set-mode subscriber target` is refused (None when allowed). Only failover
    subscriptions switch; to immediate only once the queue reader has applied every queued
    command of the subscriber and has run at least once since its initialization."""
    if target not in CURRENT_MODES:
        return f"unknown mode {target!r}: a failover subscription switches to queued or immediate"
    if update_mode not in ("failover", "queued_failover"):
        return (f"subscriber {subscriber} has update mode {update_mode}: only failover and "
                f"queued_failover subscriptions switch between queued and immediate")
    if target == "immediate" and pending_commands:
        return (f"subscriber {subscriber} still has {pending_commands} queued command(s) the queue "
                f"reader has not applied: run the queue reader (qrepl run), then switch to immediate")
    if target == "immediate" and not reader_ran_since_init:
        return (f"the queue reader has not run since subscriber {subscriber} was initialized: "
                f"run it once (qrepl run), then switch to immediate")
    return None


class ConflictError(RuntimeError):
    """An immediate transaction rejected because rows differ between publisher and subscriber
    (SQL Server's error 20515). Nothing changed at either side. `rows` has one dict per
    conflicting row: article, row_key, conflict_type, reason_text, publisher_row,
    subscriber_row, old_version (what the subscriber saw)."""

    def __init__(self, subscriber: str, tran_id: str, rows: list[dict]) -> None:
        self.subscriber, self.tran_id, self.rows = subscriber, tran_id, rows
        super().__init__(conflict_message(subscriber, tran_id, rows))


def conflict_message(subscriber: str, tran_id: str, rows: list[dict]) -> str:
    """First line: the rejection; then one block per row, like `qrepl conflicts --show`."""
    lines = [f"immediate transaction {tran_id} of subscriber {subscriber} rejected: {len(rows)} row(s) "
             f"do not match between publisher and subscriber; nothing was changed at either side"]
    for r in rows:
        lines.append(f"  {r['conflict_type']} (code {CONFLICT_CODES[r['conflict_type']]}) on {r['article']} "
                     f"{r['row_key']}: {CONFLICT_REASONS[r['conflict_type']]}")
        publisher, subscriber_row = r.get("publisher_row"), r.get("subscriber_row")
        lines.append(f"    publisher:  {dumps(publisher) if publisher is not None else '(absent)'}")
        deleted = "(deleted)" if r["conflict_type"].startswith("delete") else "(absent)"
        lines.append(f"    subscriber: {dumps(subscriber_row) if subscriber_row is not None else deleted}")
    return "\n".join(lines)


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


def check_type(type_name: Any, column: str) -> str:
    if not isinstance(type_name, str):
        raise ConfigError(f"column {column}: type must be a string, got {type_name!r}")
    t = type_name.strip().lower()
    if t in SCALAR_TYPES or DECIMAL_TYPE.match(t):
        return t
    raise ConfigError(f"column {column}: unsupported type {type_name!r} (use {', '.join(SCALAR_TYPES)}, decimal(p,s))")


DEFAULT_IDENTITY_RANGE = 1000  # values per subscriber range, SQL Server's @identity_range default
MAX_IDENTITY_RANGE = 10**12
PUBLISHER_RANGE_OWNER = ""  # the owner of the publisher's own identity range


@dataclass(frozen=True)
class Article:
    name: str
    key: tuple[str, ...]
    columns: dict[str, str]  # column -> type, in declaration order
    # the publisher table when it is not `<publication schema>.<name>`: `schema.table`, or a bare
    # `table` in the publication's schema (docs/publishing.md); None is the default
    table: str | None = None
    # columns the publisher generates (docs/spec.md §3): an identity (bigint) and a commit stamp (timestamp)
    identity: str | None = None
    identity_range: int = DEFAULT_IDENTITY_RANGE
    stamped: str | None = None

    @property
    def value_columns(self) -> list[str]:
        return list(self.columns)

    @property
    def key_ddl(self) -> str:
        """Spark DDL of the key columns in key order ('order_id INT, line_no INT')."""
        return ", ".join(f"{k} {self.columns[k].upper()}" for k in self.key)


@dataclass
class Publication:
    name: str
    policy: str = "publisher_wins"
    conflict_retention_days: int = 14
    centralized_conflicts: bool = True
    articles: list[Article] = field(default_factory=list)

    def article(self, name: str) -> Article | None:
        for a in self.articles:
            if a.name == name:
                return a
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "publication": self.name,
            "policy": self.policy,
            "conflict_retention_days": self.conflict_retention_days,
            "centralized_conflicts": self.centralized_conflicts,
            "articles": [
                _article_dict(a) for a in self.articles
            ],
        }


def _article_dict(a: Article) -> dict[str, Any]:
    out: dict[str, Any] = {"name": a.name, "key": list(a.key), "columns": dict(a.columns)}
    if a.table:
        out["table"] = a.table
    if a.identity:
        out["identity"] = a.identity
        out["identity_range"] = a.identity_range
    if a.stamped:
        out["stamped"] = a.stamped
    return out


def _generated_columns(raw: dict, aname: str, columns: dict[str, str],
                       key: list[str]) -> tuple[str | None, int, str | None]:
    """An article's identity column (a bigint the publisher assigns, from ranges per owner) and
    stamped column (a timestamp the publisher sets at commit), validated (docs/spec.md §3)."""
    identity, stamped = raw.get("identity"), raw.get("stamped")
    size = raw.get("identity_range", DEFAULT_IDENTITY_RANGE)
    if identity is not None:
        if identity not in columns:
            raise ConfigError(f"article {aname}: identity column {identity!r} is not among its columns")
        if columns[identity] != "bigint":
            raise ConfigError(f"article {aname}: identity column {identity} must be bigint, not {columns[identity]}")
    if "identity_range" in raw and identity is None:
        raise ConfigError(f"article {aname}: identity_range needs an identity column")
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_IDENTITY_RANGE:
        raise ConfigError(f"article {aname}: identity_range must be a whole number from 1 to {MAX_IDENTITY_RANGE}, "
                          f"got {size!r}")
    if stamped is not None:
        if stamped not in columns:
            raise ConfigError(f"article {aname}: stamped column {stamped!r} is not among its columns")
        if columns[stamped] != "timestamp":
            raise ConfigError(f"article {aname}: stamped column {stamped} must be timestamp, not {columns[stamped]}")
        if stamped in key:
            raise ConfigError(f"article {aname}: stamped column {stamped} cannot be a key column")
        if stamped == identity:
            raise ConfigError(f"article {aname}: {stamped} cannot be both the identity and the stamped column")
    return identity, size, stamped


def publication_from_dict(data: Any) -> Publication:
    """Validate a publication declaration (docs/spec.md §3) and return it normalized."""
    if not isinstance(data, dict):
        raise ConfigError("publication config must be a mapping")
    name = check_identifier(data.get("publication"), "publication")
    policy = normalize_policy(data.get("policy", "publisher_wins"))
    retention = data.get("conflict_retention_days", 14)
    if not isinstance(retention, int) or isinstance(retention, bool) or retention < 0:
        raise ConfigError(f"conflict_retention_days must be a whole number >= 0, got {retention!r}")
    centralized = data.get("centralized_conflicts", True)
    if not isinstance(centralized, bool):
        raise ConfigError(f"centralized_conflicts must be true or false, got {centralized!r}")
    raw_articles = data.get("articles")
    if not isinstance(raw_articles, list) or not raw_articles:
        raise ConfigError("a publication needs at least one article")
    articles: list[Article] = []
    seen: set[str] = set()
    for raw in raw_articles:
        if not isinstance(raw, dict):
            raise ConfigError("each article must be a mapping with name, key and columns")
        aname = check_identifier(raw.get("name"), "article")
        if aname.lower() in QREPL_TABLES and not raw.get("table"):
            raise ConfigError(f"article {aname}: {aname} is a table qrepl keeps in the publisher's schema; "
                              f"name the article otherwise, or give its table with `table:`")
        if aname.lower() in seen:
            raise ConfigError(f"article {aname} is declared twice")
        seen.add(aname.lower())
        cols = raw.get("columns")
        if not isinstance(cols, dict) or not cols:
            raise ConfigError(f"article {aname}: columns must be a mapping of column: type")
        columns: dict[str, str] = {}
        for col, typ in cols.items():
            check_identifier(col, "column")
            if col.lower() == "msrepl_tran_version":
                raise ConfigError(f"article {aname}: msrepl_tran_version is added by qrepl, do not declare it")
            if col.lower() in RESERVED_COLUMNS or col.lower().startswith("qrepl_"):
                raise ConfigError(f"article {aname}: column name {col} is reserved by the queue reader; rename it")
            columns[col] = check_type(typ, f"{aname}.{col}")
        key = raw.get("key")
        if isinstance(key, str):
            key = [key]
        if not isinstance(key, list) or not key:
            raise ConfigError(f"article {aname}: key must be a list of columns")
        for k in key:
            if k not in columns:
                raise ConfigError(f"article {aname}: key column {k!r} is not among its columns")
            if columns[k] not in KEY_TYPES and not DECIMAL_TYPE.match(columns[k]):
                raise ConfigError(f"article {aname}: key column {k} must be of type {', '.join(KEY_TYPES)} "
                                  f"or decimal(p,s), not {columns[k]}")
        identity, size, stamped = _generated_columns(raw, aname, columns, key)
        table = check_article_table(raw.get("table"), aname)
        articles.append(Article(aname, tuple(key), columns, table, identity, size, stamped))
    tables: dict[str, Article] = {}
    for a in articles:  # two articles over one table would stamp and apply it twice
        where = (a.table or "").lower()
        if where and where in tables:
            raise ConfigError(f"articles {tables[where].name} and {a.name} both name table {tables[where].table}")
        tables[where] = a
    return Publication(name, policy, retention, centralized, articles)


def check_article_table(table: Any, article: str) -> str | None:
    """An article's `table:` (`schema.table`, or `table` in the publication's schema), each
    part an identifier; None when not given."""
    if table is None:
        return None
    parts = table.split(".") if isinstance(table, str) else []
    if not 1 <= len(parts) <= 2 or not all(isinstance(p, str) and IDENTIFIER.fullmatch(p) for p in parts):
        raise ConfigError(f"article {article}: invalid table {table!r}: must be SCHEMA.TABLE or TABLE, each "
                          f"matching ^[A-Za-z_][A-Za-z0-9_]*$")
    if len(parts) == 1 and parts[0].lower() in QREPL_TABLES:
        raise ConfigError(f"article {article}: table {table} is a table qrepl keeps in the publisher's schema; "
                          f"publish a table of your own")
    return table


def qrepl_table_refusal(article: str, table: str, schema: str) -> str | None:
    """Why an article's `schema.table` may not be published from the publisher schema
    `schema`: it is one of qrepl's own tables there, or a table of one of its replica or
    what-if schemas (`<schema>__<subscriber>`, `<schema>_whatif`). None when it may."""
    where, _, name = table.rpartition(".")
    where = (where or schema).lower()
    own = schema.lower()
    if where == own and name.lower() in QREPL_TABLES:
        return f"article {article}: table {table} is a table qrepl keeps in the publisher's schema; publish a table of your own"
    if where.startswith(own + "__") or where == own + "_whatif":
        return (f"article {article}: table {table} is in schema {where}, which qrepl keeps for a subscriber's "
                f"replica or what-if; publish a table of your own")
    return None


# ---------------------------------------------------------------------------------------------
# Typed values. `coerce_json_value` mirrors Spark's from_json for the supported types: a value of
# the wrong JSON type becomes None (what from_json yields for that field).


def coerce_json_value(value: Any, type_name: str) -> Any:
    if value is None:
        return None
    if type_name in INTEGER_BITS:
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        limit = 2 ** (INTEGER_BITS[type_name] - 1)
        return value if -limit <= value < limit else None
    if type_name == "string":
        # Spark's from_json reads a JSON scalar into a string column as its text
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, Decimal):
            value = float(value)
        return json.dumps(value, separators=(",", ":")) if isinstance(value, (int, float)) else None
    if type_name in ("double", "float"):
        if isinstance(value, str) and value in non_finite.SPELLING:  # a non-finite value as row images spell it
            return non_finite.SPELLING[value]
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            return None
        return non_finite.canonical(float(value) if type_name == "double" else float32(value))
    if type_name == "boolean":
        return value if isinstance(value, bool) else None
    if type_name == "date":
        if isinstance(value, date) and not isinstance(value, datetime):
            value = value.isoformat()  # a Parquet or Spark date, a date given to the capture API
        if not (isinstance(value, str) and DATE_TEXT.match(value)):
            return None
        try:
            date.fromisoformat(value)
        except ValueError:
            return None  # 2026-02-30 is no day: Spark's cast yields NULL
        return value
    if type_name in TIMESTAMP_TYPES:
        moment = timestamp_value(value, type_name)
        return None if moment is None else timestamp_text(moment, type_name)
    if type_name == "binary":
        data = binary_value(value)
        return None if data is None else base64.b64encode(data).decode("ascii")
    m = DECIMAL_TYPE.match(type_name)
    if m:
        return decimal_value(value, int(m.group(1)), int(m.group(2)))
    raise ConfigError(f"unsupported type {type_name}")


def timestamp_value(value: Any, type_name: str) -> datetime | None:
    """The datetime a queued value stands for in a `timestamp` column (an aware datetime in UTC)
    or a `timestamp_ntz` column (a naive one), or None when it does not fit: never rounded.

    Text follows TIMESTAMP_TEXT / TIMESTAMP_NTZ_TEXT: a `timestamp` text without a zone is
    refused (an instant's text says its zone), one with an offset is converted to UTC; a
    `timestamp_ntz` text with a zone or offset is refused. A Python datetime (the capture API,
    a Spark or Parquet row): for a `timestamp`, an aware one is converted to UTC and a naive one
    is taken as UTC (Spark's session zone, in which Spark hands timestamps to Python); for a
    `timestamp_ntz` only a naive one fits. An instant outside years 0001..9999 in UTC does not
    fit (Spark could hold it, Python and the canonical text cannot)."""
    ntz = type_name == "timestamp_ntz"
    try:
        if isinstance(value, datetime):
            if ntz:
                return value if value.tzinfo is None else None
            return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
        if not isinstance(value, str):
            return None
        m = (TIMESTAMP_NTZ_TEXT if ntz else TIMESTAMP_TEXT).match(value)
        if not m:
            return None
        year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
        micro = int((m.group(7) or "").ljust(6, "0"))
        wall = datetime(year, month, day, hour, minute, second, micro)  # ValueError: no such day
        if ntz:
            return wall
        zone = m.group(8)
        offset = timedelta(0) if zone == "Z" else (1 if zone[0] == "+" else -1) * timedelta(
            hours=int(zone[1:3]), minutes=int(zone[4:6]))
        return (wall - offset).replace(tzinfo=timezone.utc)  # OverflowError: beyond 0001..9999 in UTC
    except (ValueError, OverflowError):
        return None


def timestamp_text(moment: datetime, type_name: str) -> str:
    """The canonical text of a timestamp_value: six fractional digits always, and for a
    `timestamp` the instant in UTC with `Z` (`2026-01-01T12:00:00.000000Z`); what the dbt macros
    write through to_json's timestampFormat (docs/stack.md 35)."""
    if type_name == "timestamp_ntz":
        return moment.isoformat(timespec="microseconds")
    return moment.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def stamp_text(at: datetime) -> str:
    """A commit time as a stamped column holds it: a `timestamp`; a naive time is UTC."""
    return timestamp_text(at if at.tzinfo else at.replace(tzinfo=timezone.utc), "timestamp")


def binary_value(value: Any) -> bytes | None:
    """The bytes a queued value stands for in a `binary` column: bytes as they are (a Spark or
    Parquet row, the capture API), text only as canonical base64 (BASE64_TEXT); None otherwise."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if not (isinstance(value, str) and BASE64_TEXT.match(value)):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def decimal_fits(digits: str, exponent: int, precision: int, scale: int) -> bool:
    """Whether the number digits * 10**exponent fits decimal(precision, scale) exactly: at most
    `scale` fractional digits once trailing zeros are dropped (1.50 fits decimal(12,1): the zero
    is exact; 1.05 does not: it would need rounding) and at most precision - scale digits before
    the point. Pure digit counting, so no context or float can round it."""
    significant = digits.lstrip("0")
    if not significant:
        return True  # zero, however written
    trimmed = significant.rstrip("0")
    point = -exponent - (len(significant) - len(trimmed))  # fractional digits the value needs
    return max(0, point) <= scale and len(trimmed) - point <= precision - scale


def decimal_value(value: Any, precision: int, scale: int) -> Decimal | None:
    """The exact Decimal of a queued value for decimal(precision, scale) at that scale, or None
    when it is not a decimal's text or number or does not fit exactly (never rounded).

    A JSON string holds the text (DECIMAL_TEXT); a JSON number arrives as an int or an exact
    Decimal (parse_json_object reads numbers with parse_float=Decimal)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        m = DECIMAL_TEXT.fullmatch(value)
        if not m:
            return None
        digits, exponent = m.group(1) + (m.group(2) or ""), int(m.group(3) or 0) - len(m.group(2) or "")
        number = Decimal(value)
    elif isinstance(value, (int, float, Decimal)):
        # a Python float (the capture API, a Parquet double) counts as the shortest text that
        # reads back as it, what its writer typed; JSON numbers never arrive as floats
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not number.is_finite():
            return None
        t = number.as_tuple()
        digits, exponent = "".join(map(str, t.digits)), int(t.exponent)
        if abs(exponent) >= 10**9:
            return None
    else:
        return None
    if not decimal_fits(digits, exponent, precision, scale):
        return None
    try:
        return number.quantize(Decimal(1).scaleb(-scale), context=DECIMAL_CONTEXT)
    except InvalidOperation:
        return None


def decimal_text(value: Decimal) -> str:
    """A Decimal as plain text (never exponent notation): 0.00000000, not 0E-8."""
    return format(value, "f")


# The largest float plus half its last unit: at and beyond it a number rounds to infinity.
_FLOAT32_OVERFLOW = Decimal(2**128 - 2**103)
# Below a tenth of the smallest float (2**-149, about 1.4e-45) a number rounds to zero.
_FLOAT32_UNDERFLOW = Decimal("1e-46")


def float32(value: int | float | Decimal) -> float:
    """The 32-bit float nearest to a number, ties to even, as a Python float: what Spark reads
    from a JSON number into a FLOAT column (Jackson parses the text straight to a float; going
    through the nearest double first could round twice). Beyond the largest float: +-inf."""
    exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not exact.is_finite():
        return float(exact)
    if exact.copy_abs() >= _FLOAT32_OVERFLOW:
        return math.copysign(math.inf, exact)
    if exact.copy_abs() < _FLOAT32_UNDERFLOW:
        return math.copysign(0.0, exact)
    try:
        guess = struct.unpack("<I", struct.pack("<f", float(exact)))[0]
    except OverflowError:  # just below the overflow point, the nearest double rounds up to it
        guess = 0x7F7FFFFF | (0x80000000 if exact < 0 else 0)
    candidates = [b for b in (guess - 1, guess, guess + 1) if 0 <= b < 2**32]
    values = [(b, struct.unpack("<f", struct.pack("<I", b))[0]) for b in candidates]
    values = [(b, v) for b, v in values if math.isfinite(v)]
    target = Fraction(exact)  # exact arithmetic: no decimal context can round the distances
    best = min(values, key=lambda bv: (abs(Fraction(bv[1]) - target), bv[0] & 1))
    return best[1]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicate_fields(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a field appears twice")
    return out


def parse_json_object(text: Any) -> dict | None:
    """A queued JSON object, strictly: None unless `text` is one JSON object (no NaN, no field twice,
    nothing after it)."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_fields,
                           parse_float=Decimal)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def queued_value_ok(value: Any, type_name: str) -> bool:
    """Whether a queued JSON value fits an article column of `type_name` (JSON null always fits).

    Strict where Spark's from_json is lenient or silently yields NULL: a string column takes
    only JSON strings, a double only finite numbers, a date only 'YYYY-MM-DD' of a real day, a
    decimal a number or a plain numeric string that fits its precision.
    """
    if value is None:
        return True
    if isinstance(value, (dict, list)):
        return False
    if type_name == "string":
        return isinstance(value, str)
    if type_name in ("double", "float"):
        if isinstance(value, str):
            return value in non_finite.SPELLING  # a value the publisher can hold, as Spark's to_json spells it
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            return False
        try:
            return math.isfinite(coerce_json_value(value, type_name))
        except OverflowError:
            return False
    if type_name == "date":
        if isinstance(value, date) and not isinstance(value, datetime):
            value = value.isoformat()  # a Parquet or Spark date, a date given to the capture API
        if not (isinstance(value, str) and DATE_TEXT.match(value)):
            return False
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return True
    return coerce_json_value(value, type_name) is not None


def canonical_key(article: Article, row: dict[str, Any]) -> str | None:
    """Canonical text of a row's key: compact JSON of the key columns in key order.

    Spark's `to_json(named_struct(...))` over the typed key columns yields the same text
    (the dbt macro `row_key_expr`); None when a key column is missing or mistyped.
    """
    parts = []
    for k in article.key:
        v = coerce_json_value(row.get(k), article.columns[k])
        if v is None:
            return None
        # a decimal as Java's BigDecimal.toString writes it (Python's str follows the same
        # rule: plain unless the exponent is positive or the value is below 1E-6: 0E-8, 1E-7)
        text = str(v) if isinstance(v, Decimal) else json.dumps(v, ensure_ascii=False)
        parts.append(f'"{k}":{text}')
    return jackson_text("{" + ",".join(parts) + "}")


# Python's json and Spark's to_json (Jackson) escape the same characters: '"', '\\', the short
# escapes \b \f \n \r \t and every other code point below 0x20 as \u00XX; everything else
# (0x7F, U+2028/U+2029, characters outside the BMP, '/') is written as itself. The one
# difference: Jackson writes the hex digits upper case (\u001F), Python lower case (\u001f).
# Measured on Spark 3.5 for every code point 0..0x7F and samples above (docs/spec.md §3).
_PYTHON_ESCAPE = re.compile(r"\\(\\|u00[0-9a-f]{2})")


def jackson_text(text: str) -> str:
    r"""JSON text written by Python's json (ensure_ascii=False) as Spark's to_json writes it: the
    \u00XX escapes of control characters with upper-case hex digits (an escaped backslash
    before a 'u' is left alone)."""
    if "\\u00" not in text:
        return text
    return _PYTHON_ESCAPE.sub(lambda m: m.group(0) if m.group(1) == "\\" else "\\u00" + m.group(1)[3:].upper(), text)


def value_refusal(article: Article, row: dict[str, Any]) -> str | None:
    """Why the capture API refuses a row's values (None when every given value fits its column):
    a value is never rounded or turned into NULL on its way to the queue."""
    for col, v in row.items():
        typ = article.columns.get(col)
        if typ is None or v is None:
            continue
        value = coerce_json_value(v, typ)
        if value is None:
            hint = " exactly (never rounded)" if typ.startswith("decimal") else ""
            return f"{article.name}.{col}: {v!r} does not fit {typ}{hint}{fit_hint(typ)}"
        refusal = non_finite.refusal(f"{article.name}.{col}", v, value, typ) if typ in ("double", "float") else None
        if refusal:
            return refusal
    return None


def fit_hint(type_name: str) -> str:
    """What a value of a timestamp or binary column must look like (docs/spec.md §3), for a
    refusal's one line; empty for other types."""
    return {
        "timestamp": " (an instant: ISO-8601 with Z or an offset of at most 18:00, at most 6 fractional digits, "
                     "years 0001..9999 in UTC; never truncated)",
        "timestamp_ntz": " (a wall-clock value: ISO-8601 without zone or offset, at most 6 fractional digits)",
        "binary": " (padded standard base64, alphabet A-Z a-z 0-9 + /)",
    }.get(type_name, "")


def typed_row(article: Article, row: dict[str, Any]) -> dict[str, Any]:
    """A row with Python values Spark accepts for the article's column types."""
    out: dict[str, Any] = {}
    for col, typ in article.columns.items():
        v = row.get(col)
        if (isinstance(v, (date, Decimal)) and not isinstance(v, datetime)) or (typ == "date" and v is None):
            out[col] = v
            continue
        if typ in TIMESTAMP_TYPES:
            out[col] = timestamp_value(v, typ)  # aware in UTC, or naive for timestamp_ntz: Spark's toInternal
            continue
        if typ == "binary":
            out[col] = binary_value(v)
            continue
        v = coerce_json_value(v, typ)
        out[col] = date.fromisoformat(v) if (typ == "date" and v is not None) else v
    out["msrepl_tran_version"] = row.get("msrepl_tran_version")
    return out


def normalize_row(article: Article, row: dict[str, Any] | None) -> dict[str, Any] | None:
    """A row as replay writes it: every article column typed, plus msrepl_tran_version."""
    if row is None:
        return None
    out: dict[str, Any] = {}
    for col, typ in article.columns.items():
        v = coerce_json_value(row.get(col), typ)
        out[col] = decimal_text(v) if isinstance(v, Decimal) else v
    out["msrepl_tran_version"] = row.get("msrepl_tran_version")
    return out


# ---------------------------------------------------------------------------------------------
# Identity ranges (SQL Server's automatic identity range management, docs/spec.md §3). A range is
# (start, end), both inclusive. The publisher and each subscriber of an identity article hold one;
# ranges never overlap, and each new one starts above every range and every value the publisher
# table holds.


def next_range(ranges: list[tuple[int, int]], highest: int | None, size: int) -> tuple[int, int]:
    """The next range of `size` values: above every existing range and the table's highest value."""
    start = max([end for _, end in ranges] + [highest or 0, 0]) + 1
    return start, start + size - 1


def next_identity(rng: tuple[int, int], used: Iterable[Any]) -> int | None:
    """The next value of a range: one above the highest value in it already used (the range's
    start when none is), None when the range is used up."""
    start, end = rng
    inside = [v for v in used if v is not None and start <= int(v) <= end]
    value = max(inside) + 1 if inside else start
    return value if value <= end else None


def range_refusal(owner: str, article: Article, rng: tuple[int, int] | None) -> str:
    """The line a capture gets when its identity range is used up or missing: what to run."""
    who = "the publisher" if owner == PUBLISHER_RANGE_OWNER else f"subscriber {owner}"
    fix = ("qrepl publication range --article " + article.name if owner == PUBLISHER_RANGE_OWNER
           else f"qrepl subscription range {owner} --article {article.name}")
    if rng is None:
        return f"{who} has no identity range for {article.name}.{article.identity}: run `{fix}` to assign one"
    return (f"{who} has used its identity range {rng[0]}..{rng[1]} of {article.name}.{article.identity}: "
            f"run `{fix}` to assign the next range")


def dumps(obj: Any) -> str:
    """Compact, deterministic JSON used for row images in the queue."""
    if isinstance(obj, dict):  # a row image: a non-finite value as Spark's to_json spells it
        obj = {k: non_finite.spelled(v) for k, v in obj.items()}
    return jackson_text(json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=False, default=str))
