"""Identity ranges (SQL Server's automatic identity range management, docs/spec.md §3). A range is
(start, end), both inclusive. The publisher and each subscriber of an identity article hold one;
ranges never overlap, and each new one starts above every range and every value the publisher
table holds."""

from __future__ import annotations

from typing import Any, Iterable

from .publication import Article

PUBLISHER_RANGE_OWNER = ""  # the owner of the publisher's own identity range


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
    fix = (
        "qrepl publication range --article " + article.name
        if owner == PUBLISHER_RANGE_OWNER
        else f"qrepl subscription range {owner} --article {article.name}"
    )
    if rng is None:
        return f"{who} has no identity range for {article.name}.{article.identity}: run `{fix}` to assign one"
    return (
        f"{who} has used its identity range {rng[0]}..{rng[1]} of {article.name}.{article.identity}: "
        f"run `{fix}` to assign the next range"
    )
