"""Identity ranges (docs/spec.md §3): give an owner the next range of an identity article, and
report every owner's current range with the values it has left."""

from __future__ import annotations

from ..core.identity_ranges import PUBLISHER_RANGE_OWNER
from ..core.vocabulary import ConfigError
from ..storage.identity_ranges import assign_range, claimed_value, current_range, highest_value
from ..storage.open import warehouse


def assign_identity_range(schema: str | None, owner: str, article: str | None = None) -> list[tuple[str, int, int]]:
    """Give the publisher (owner PUBLISHER_RANGE_OWNER) or a subscriber the next identity range
    of an article (every identity article when None): what a used-up range asks for. Returns
    (article, start, end) per range assigned."""
    wh = warehouse(schema)
    pub = wh.require_publication()
    if owner != PUBLISHER_RANGE_OWNER and wh.subscription(owner) is None:
        raise ConfigError(f"no subscription for subscriber {owner}")
    chosen = [a for a in pub.articles if a.identity and (article is None or a.name == article)]
    if not chosen:
        raise ConfigError(
            f"article {article} has no identity column"
            if article
            else f"publication {pub.name} has no article with an identity column"
        )
    return [(a.name, *assign_range(wh, owner, a)) for a in chosen]


def identity_ranges(schema: str | None) -> list[dict]:
    """Every owner's current identity range, per identity article, and the values it has left."""
    wh = warehouse(schema)
    pub = wh.require_publication()
    out = []
    owners = [PUBLISHER_RANGE_OWNER] + [s["subscriber"] for s in wh.subscriptions()]
    for a in pub.articles:
        if not a.identity:
            continue
        for owner in owners:
            rng = current_range(wh, owner, a.name)
            if rng is None:
                continue
            table = wh.article_table(a) if owner == PUBLISHER_RANGE_OWNER else f"{wh.schema}__{owner}.{a.name}"
            held = highest_value(wh, table, a, rng) if wh.spark.catalog.tableExists(table) else None
            highest = max([v for v in (held, claimed_value(wh, owner, a.name)) if v is not None], default=None)
            out.append(
                {
                    "article": a.name,
                    "owner": owner or "publisher",
                    "range_start": rng[0],
                    "range_end": rng[1],
                    "left": rng[1] - max(highest or rng[0] - 1, rng[0] - 1),
                }
            )
    return out
