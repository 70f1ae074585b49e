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
# article name -> the columns a subscription takes (its key among them), in declaration order;
# an article not named is taken whole (column filters, docs/spec.md §11)
ColumnLists = dict[str, tuple[str, ...]]

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


def parse_columns(publication: Publication, specs: list[str] | tuple[str, ...], partition: Partition) -> ColumnLists:
    """`--columns "ARTICLE: COL, COL, ..."` options (once per article) as column lists;
    ConfigError in one line for an unknown article or column, an article given twice, a list
    without a key column, the identity or stamped column (docs/spec.md §3), or a column its row
    filter reads."""
    lists: ColumnLists = {}
    for spec in specs:
        name, sep, names = str(spec).partition(":")
        name = name.strip()
        article = publication.article(name)
        if not sep or article is None:
            raise ConfigError(f'columns {spec!r}: write them as "ARTICLE: COL, COL", ARTICLE one of the publication\'s')
        if name in lists:
            raise ConfigError(f"columns {spec!r}: {name} has a column list already (one per article)")
        given = [c.strip() for c in names.split(",") if c.strip()]
        unknown = [c for c in given if c not in article.columns]
        if unknown:
            raise ConfigError(f"columns {spec!r}: {unknown[0]} is not a column of {name}")
        missing = [k for k in article.key if k not in given]
        if missing:
            raise ConfigError(f"columns {spec!r}: the key column {missing[0]} must be in the list")
        for column, kind, why in (
            (article.identity, "identity", "qrepl gives its values"),
            (article.stamped, "stamped", "qrepl stamps it at every write"),
        ):
            if column and column not in given:
                raise ConfigError(f"columns {spec!r}: the {kind} column {column} must be in the list ({why})")
        read = filter_meaning.columns(partition[name]) if name in partition else []
        if any(c not in given for c in read):
            left_out = next(c for c in read if c not in given)
            raise ConfigError(f"columns {spec!r}: the row filter of {name} reads {left_out}, which the list leaves out")
        lists[name] = tuple(c for c in article.columns if c in given)
    return lists


def takes(columns: ColumnLists, article: Article) -> tuple[str, ...]:
    """The article's columns a subscription takes."""
    return columns.get(article.name) or tuple(article.columns)


def project(columns: ColumnLists, article: Article, row: dict[str, Any] | None) -> dict[str, Any] | None:
    """A row image as the subscription holds it: its columns and msrepl_tran_version (the
    whole row for an article it takes whole)."""
    if row is None or article.name not in columns:
        return row
    return {**{c: row.get(c) for c in columns[article.name]}, "msrepl_tran_version": row.get("msrepl_tran_version")}


def partition_json(partition: Partition, columns: ColumnLists | None = None) -> str | None:
    """The stored form (subscriptions.partition_spec): per article its filter's normalized text
    and checked tree, and its column list, sorted; None for no partition."""
    columns = columns or {}
    if not partition and not columns:
        return None
    stored: dict[str, dict] = {}
    for name, tree in partition.items():
        stored.setdefault(name, {}).update(filter=filter_meaning.text(tree), tree=tree)
    for name, names in columns.items():
        stored.setdefault(name, {})["columns"] = list(names)
    return json.dumps(dict(sorted(stored.items())), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
        if "tree" in entry:
            out[name] = filter_language.check(article, entry.get("tree"))
    return out


def columns_of(publication: Publication, stored: Any) -> ColumnLists:
    """The column lists of a stored partition_spec, checked again (ConfigError in one line)."""
    partition = partition_of(publication, stored)  # the stored text checked, its filters too
    if stored is None or stored == "":
        return {}
    data = json.loads(stored) if isinstance(stored, str) else stored
    specs = [f"{name}: {', '.join(map(str, entry['columns']))}" for name, entry in data.items() if "columns" in entry]
    return parse_columns(publication, specs, partition)


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
