"""A subscription's partition (docs/spec.md §11): per article, the row filter that says which
publisher rows its replica holds and which rows it may write. An article without a filter is
whole. Pure Python: the reference, the capture API and the CLI share these definitions."""

from __future__ import annotations

import json
from typing import Any

from . import filter_language, filter_meaning
from .publication import Article, Publication
from .vocabulary import ConfigError

Partition = dict[str, dict]  # article name -> checked filter tree

OUTSIDE_THE_PARTITION = "outside the partition"  # the queue reader's quarantine reason


def parse_filters(publication: Publication, specs: list[str] | tuple[str, ...]) -> Partition:
    """`--filter "ARTICLE: CONDITION"` options (once per article) as a partition; ConfigError in
    one line for an unknown article, an article given twice, or a condition not allowed."""
    partition: Partition = {}
    for spec in specs:
        name, sep, condition = str(spec).partition(":")
        name = name.strip()
        if not sep or not name:
            raise ConfigError(f'filter {spec!r}: write it as "ARTICLE: CONDITION", e.g. "orders: region = \'north\'"')
        article = publication.article(name)
        if article is None:
            known = ", ".join(a.name for a in publication.articles)
            raise ConfigError(f"filter {spec!r}: {name} is not an article of {publication.name} ({known})")
        if name in partition:
            raise ConfigError(f"filter {spec!r}: {name} has a filter already (one filter per article)")
        partition[name] = filter_language.parse(article, condition)
    return partition


def partition_json(partition: Partition) -> str | None:
    """The stored form (subscriptions.partition_spec): per article its normalized text and
    checked tree, sorted; None for no partition."""
    if not partition:
        return None
    return json.dumps(
        {name: {"filter": filter_meaning.text(tree), "tree": tree} for name, tree in sorted(partition.items())},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def partition_of(publication: Publication, stored: Any) -> Partition:
    """A stored partition read back, each tree checked again against the article as it is now;
    ConfigError in one line when the stored text is not a partition."""
    if stored is None or stored == "":
        return {}
    try:
        data = json.loads(stored) if isinstance(stored, str) else stored
    except ValueError:
        raise ConfigError("a subscription's partition_spec is not JSON") from None
    if not isinstance(data, dict):
        raise ConfigError("a subscription's partition_spec is not a JSON object")
    out: Partition = {}
    for name, entry in data.items():
        article = publication.article(name)
        if article is None or not isinstance(entry, dict):
            raise ConfigError(
                f"a subscription's partition names {name!r}, which is not an article of {publication.name}"
            )
        out[name] = filter_language.check(article, entry.get("tree"))
    return out


def describe(partition: Partition) -> dict[str, str]:
    """Per article, its filter's normalized text."""
    return {name: filter_meaning.text(tree) for name, tree in sorted(partition.items())}


def holds(partition: Partition, article: Article, row: dict[str, Any] | None) -> bool:
    """Whether a replica with this partition holds the row (an article without a filter holds
    every row)."""
    if row is None:
        return False
    tree = partition.get(article.name)
    return tree is None or filter_meaning.matches(article, tree, row)


def write_refusal(
    subscriber: str,
    partition: Partition,
    article: Article,
    op: str,
    new_row: dict[str, Any] | None,
    seen_row: dict[str, Any] | None,
) -> str | None:
    """Why a subscriber may not write this row (None when it may): an insert or update whose
    new row falls outside its partition, or an update or delete of a row its replica does not
    hold (`seen_row`: the row as the subscriber saw it; None when unknown)."""
    tree = partition.get(article.name)
    if tree is None:
        return None
    shown = filter_meaning.text(tree)
    if op in ("U", "D") and seen_row is not None and not filter_meaning.matches(article, tree, seen_row):
        what = "updates" if op == "U" else "deletes"
        return f"{subscriber} {what} a row of {article.name} outside its partition: the row does not meet {shown}"
    if op in ("I", "U") and new_row is not None and not filter_meaning.matches(article, tree, new_row):
        what = "inserts a row" if op == "I" else "moves a row"
        return f"{subscriber} {what} of {article.name} outside its partition: the new row does not meet {shown}"
    return None
