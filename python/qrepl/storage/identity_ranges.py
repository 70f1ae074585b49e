"""Identity ranges (docs/spec.md §3, SQL Server's automatic identity range management).

The publisher and every subscriber of an article with an identity column hold a range of its
values: an immediate insert takes the next value of the publisher's range, a queued capture the
next value of its subscriber's. Ranges never overlap, and each starts above every range before it
and every value the publisher table holds.

The table `identity_ranges` (Python-owned) holds, per article, one mark row (owner `*`) whose
`range_end` is the end of the last range assigned, and one row per range assigned (owner: the
subscriber, or '' for the publisher); an owner's current range is its latest. Assigning is two
writes: a compare-and-swap MERGE that moves the mark (two processes assigning at once cannot
both move it from the same value: one matches nothing or fails its commit, and tries again), then
the append of the owner's row. A crash between the two leaves a block no one holds, never two
owners of one block; the rerun assigns the next.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ..core.model import Article, ConfigError, next_identity, next_range, range_refusal
from .faults import point_comment
from .replica import retry_on_commit_conflict
from .tables import IDENTITY_RANGES_SCHEMA
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


def current_range(wh: Warehouse, owner: str, article: str) -> tuple[int, int] | None:
    mine = [r for r in _rows(wh, article) if r.owner == owner]
    if not mine:
        return None
    last = max(mine, key=lambda r: r.range_start)
    return last.range_start, last.range_end


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


def assign_range(wh: Warehouse, owner: str, article: Article) -> tuple[int, int]:
    """Give the owner the article's next range and return it."""
    if not article.identity:
        raise ConfigError(f"article {article.name} has no identity column")
    if not wh.exists(TABLE):
        wh.create_own(TABLE)
    highest = highest_value(wh, wh.article_table(article), article)
    for _ in range(ATTEMPTS):
        marks = [r for r in _rows(wh, article.name) if r.owner == MARK]
        seen = marks[0].range_end if marks else None
        rng = next_range([(0, seen)] if seen is not None else [], highest, article.identity_range)
        view = wh._temp_view([(article.name, MARK, rng[0], rng[1], seen)],
                             "article STRING, owner STRING, range_start BIGINT, range_end BIGINT, seen BIGINT")
        retry_on_commit_conflict(lambda: wh.spark.sql(
            f"{point_comment('identity.mark')}"
            f"merge into {wh.table(TABLE)} as t using {view} as s on t.article = s.article and t.owner = s.owner "
            f"when matched and t.range_end = s.seen then update set t.range_start = s.range_start, "
            f"t.range_end = s.range_end "
            f"when not matched and s.seen is null then insert (article, owner, range_start, range_end, assigned_at) "
            f"values (s.article, s.owner, s.range_start, s.range_end, current_timestamp())"))
        wh.spark.catalog.dropTempView(view)
        moved = [r for r in _rows(wh, article.name) if r.owner == MARK]
        if moved and (moved[0].range_start, moved[0].range_end) == rng:
            now = datetime.now(timezone.utc).replace(tzinfo=None)
            wh.spark.createDataFrame([(article.name, owner, rng[0], rng[1], now)], SCHEMA) \
                .writeTo(wh.table(TABLE)).append()
            return rng
    raise ConfigError(f"identity range of {article.name} not assigned: {ATTEMPTS} concurrent assignments won; "
                      f"try again")


def ensure_ranges(wh: Warehouse, owner: str, articles: list[Article]) -> None:
    """A range for the owner in every identity article that has none (publication create,
    subscription add; rerunnable)."""
    for article in articles:
        if article.identity and current_range(wh, owner, article.name) is None:
            assign_range(wh, owner, article)


def next_value(wh: Warehouse, owner: str, article: Article, table: str, taken: list[int]) -> int:
    """The identity value the owner's next insert gets: one above the highest its table holds
    in its current range (and the values its open transaction took); one line when used up."""
    rng = current_range(wh, owner, article.name)
    if rng is None:
        raise ConfigError(range_refusal(owner, article, None))
    value = next_identity(rng, [highest_value(wh, table, article, rng), *taken])
    if value is None:
        raise ConfigError(range_refusal(owner, article, rng))
    return value
