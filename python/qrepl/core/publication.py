"""A publication and its articles: the declaration (docs/spec.md §3, docs/publishing.md)
parsed and validated, generated columns (identity and stamped) included, and the tables an
article may not name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .values import DECIMAL_TYPE, KEY_TYPES, check_type
from .vocabulary import IDENTIFIER, QREPL_TABLES, RESERVED_COLUMNS, ConfigError, check_identifier, normalize_policy

DEFAULT_IDENTITY_RANGE = 1000  # values per subscriber range, SQL Server's @identity_range default
MAX_IDENTITY_RANGE = 10**12


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
            "articles": [_article_dict(a) for a in self.articles],
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


def _generated_columns(
    raw: dict, aname: str, columns: dict[str, str], key: list[str]
) -> tuple[str | None, int, str | None]:
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
        raise ConfigError(
            f"article {aname}: identity_range must be a whole number from 1 to {MAX_IDENTITY_RANGE}, got {size!r}"
        )
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
            raise ConfigError(
                f"article {aname}: {aname} is a table qrepl keeps in the publisher's schema; "
                f"name the article otherwise, or give its table with `table:`"
            )
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
                raise ConfigError(
                    f"article {aname}: key column {k} must be of type {', '.join(KEY_TYPES)} "
                    f"or decimal(p,s), not {columns[k]}"
                )
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
        raise ConfigError(
            f"article {article}: invalid table {table!r}: must be SCHEMA.TABLE or TABLE, each "
            f"matching ^[A-Za-z_][A-Za-z0-9_]*$"
        )
    if len(parts) == 1 and parts[0].lower() in QREPL_TABLES:
        raise ConfigError(
            f"article {article}: table {table} is a table qrepl keeps in the publisher's schema; "
            f"publish a table of your own"
        )
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
        return (
            f"article {article}: table {table} is in schema {where}, which qrepl keeps for a subscriber's "
            f"replica or what-if; publish a table of your own"
        )
    return None
