"""Identity ranges (docs/spec.md §3, SQL Server's automatic identity range management).

The publisher and every subscriber of an article with an identity column hold a range of its
values: an immediate insert takes the next value of the publisher's range, a queued capture the
next value of its subscriber's. Ranges never overlap, and each starts above every range before it
and every value the publisher table holds. A range and a value are each given once: two
processes that ask at the same instant get different ones (DESIGN.md §10).

The table `identity_ranges` (Python-owned) holds, per article, one mark row (owner `*`) whose
`range_end` is the end of the last range assigned, and one row per range assigned (owner: the
subscriber, or '' for the publisher); an owner's current range is its latest, and its `claimed`
is the highest value given from it. Every change is a compare-and-swap MERGE that also writes a
token of its own (a fresh uuid); the writer reads the row back and has won only if the row holds
its token. Two processes that computed the same change from the same row cannot both move it
(one matches nothing or fails its commit), and the one that did not is the one whose token is
not there: it tries again from the row as it is now.

Assigning a range is two writes: the mark's compare-and-swap, then the append of the owner's
row. A crash between the two leaves a block no one holds, never two owners of one block; the
rerun assigns the next. Giving a value is one write, the claim's compare-and-swap on the owner's
row; a value claimed by a transaction that then fails is not given again (a gap, as SQL Server's
identity has).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from ..core.identity_ranges import next_identity, next_range, range_refusal
from ..core.publication import Article
from ..core.vocabulary import ConfigError
from .faults import point_comment
from .replica import retry_on_commit_conflict
from .tables import IDENTITY_RANGES_LATE_COLUMNS, IDENTITY_RANGES_SCHEMA
from .warehouse import Warehouse

TABLE = "identity_ranges"
SCHEMA = IDENTITY_RANGES_SCHEMA
MARK = "*"
ATTEMPTS = 10


def _rows(wh: Warehouse, article: str) -> list:
    if not wh.exists(TABLE):
        return []
    df = wh.spark.table(wh.table(TABLE))
    return df.where(df.article == article).collect()


def _ensure_table(wh: Warehouse) -> None:
    """Create the table, or add the token and claim columns to one made before they existed."""
    if not wh.exists(TABLE):
        wh.create_own(TABLE)
        return
    try:
        wh._add_missing_columns(TABLE, IDENTITY_RANGES_LATE_COLUMNS)
    except Exception:  # another process added them at the same instant
        have = set(wh.table_columns(TABLE))
        if not set(IDENTITY_RANGES_LATE_COLUMNS) <= have:
            raise


def _current_row(wh: Warehouse, owner: str, article: str):
    mine = [r for r in _rows(wh, article) if r.owner == owner]
    return max(mine, key=lambda r: r.range_start) if mine else None


def current_range(wh: Warehouse, owner: str, article: str) -> tuple[int, int] | None:
    last = _current_row(wh, owner, article)
    return (last.range_start, last.range_end) if last is not None else None


def claimed_value(wh: Warehouse, owner: str, article: str) -> int | None:
    """The highest value given from the owner's current range (None: none, or a table from
    before claims)."""
    last = _current_row(wh, owner, article)
    return last.asDict().get("claimed") if last is not None else None


def owned_ranges(wh: Warehouse, owner: str, article: str) -> list[tuple[int, int]]:
    """Every range the owner was ever assigned for the article (values captured from an earlier
    range stay the owner's)."""
    return sorted((r.range_start, r.range_end) for r in _rows(wh, article) if r.owner == owner)


def highest_value(wh: Warehouse, table: str, article: Article, rng: tuple[int, int] | None = None) -> int | None:
    """The highest identity value a table holds (within a range, if given): one aggregate, not a scan to the driver."""
    col = article.identity
    df = wh.spark.table(table)
    if rng is not None:
        df = df.where((df[col] >= rng[0]) & (df[col] <= rng[1]))
    return df.agg({col: "max"}).first()[0]


def _swap(wh: Warehouse, point: str, row: tuple, seen_column: str, seen, changes: str, insert: bool = False) -> None:
    """One compare-and-swap MERGE on the row (article, owner, range_start) of `row`: it takes
    `changes` (and the row's token) only where `seen_column` still holds `seen`; with `insert`,
    a missing row is inserted when `seen` is null."""
    view = wh._temp_view(
        [(*row, seen)],
        "article STRING, owner STRING, range_start BIGINT, range_end BIGINT, claimed BIGINT, token STRING, seen BIGINT",
    )
    on = "t.article = s.article and t.owner = s.owner" + ("" if insert else " and t.range_start = s.range_start")
    first = (
        "when not matched and s.seen is null then insert (article, owner, range_start, range_end, assigned_at, "
        "token) values (s.article, s.owner, s.range_start, s.range_end, current_timestamp(), s.token)"
        if insert
        else ""
    )
    retry_on_commit_conflict(
        lambda: wh.spark.sql(
            f"{point_comment(point)}"
            f"merge into {wh.table(TABLE)} as t using {view} as s on {on} "
            f"when matched and t.{seen_column} <=> s.seen then update set {changes}, t.token = s.token {first}"
        )
    )
    wh.spark.catalog.dropTempView(view)


def _holds(wh: Warehouse, owner: str, article: str, range_start: int, token: str) -> bool:
    """Whether the row (article, owner, range_start) holds this token: the compare-and-swap that wrote it won."""
    return any(r.owner == owner and r.range_start == range_start and r.token == token for r in _rows(wh, article))


def assign_range(wh: Warehouse, owner: str, article: Article) -> tuple[int, int]:
    """Give the owner the article's next range and return it."""
    if not article.identity:
        raise ConfigError(f"article {article.name} has no identity column")
    _ensure_table(wh)
    highest = highest_value(wh, wh.article_table(article), article)
    for _ in range(ATTEMPTS):
        marks = [r for r in _rows(wh, article.name) if r.owner == MARK]
        seen = max(r.range_end for r in marks) if marks else None
        rng = next_range([(0, seen)] if seen is not None else [], highest, article.identity_range)
        token = uuid.uuid4().hex
        _swap(
            wh,
            "identity.mark",
            (article.name, MARK, rng[0], rng[1], None, token),
            "range_end",
            seen,
            "t.range_start = s.range_start, t.range_end = s.range_end",
            insert=True,
        )
        if _holds(wh, MARK, article.name, rng[0], token):
            now = datetime.now(timezone.utc).replace(tzinfo=None)
            wh.spark.createDataFrame([(article.name, owner, rng[0], rng[1], now, token, None)], SCHEMA).writeTo(
                wh.table(TABLE)
            ).append()
            return rng
    raise ConfigError(
        f"identity range of {article.name} not assigned: {ATTEMPTS} concurrent assignments won; try again"
    )


def ensure_ranges(wh: Warehouse, owner: str, articles: list[Article]) -> None:
    """A range for the owner in every identity article that has none (publication create,
    subscription add; rerunnable)."""
    for article in articles:
        if article.identity and current_range(wh, owner, article.name) is None:
            assign_range(wh, owner, article)


def next_value(wh: Warehouse, owner: str, article: Article, table: str, taken: list[int]) -> int:
    """Claim the identity value the owner's next insert gets: one above the highest value
    given from its current range and the highest its table holds in it (and the values its
    open transaction took); one line when used up. Held by this caller alone: a concurrent
    caller gets another."""
    _ensure_table(wh)
    for _ in range(ATTEMPTS):
        row = _current_row(wh, owner, article.name)
        if row is None:
            raise ConfigError(range_refusal(owner, article, None))
        rng = (row.range_start, row.range_end)
        value = next_identity(rng, [row.claimed, highest_value(wh, table, article, rng), *taken])
        if value is None:
            raise ConfigError(range_refusal(owner, article, rng))
        token = uuid.uuid4().hex
        _swap(
            wh,
            "identity.claim",
            (article.name, owner, rng[0], rng[1], value, token),
            "claimed",
            row.claimed,
            "t.claimed = s.claimed",
        )
        if _holds(wh, owner, article.name, rng[0], token):
            return value
    raise ConfigError(f"identity value of {article.name} not given: {ATTEMPTS} concurrent claims won; try again")
