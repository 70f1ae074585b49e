"""Partition overlap (docs/spec.md §11): per article, how many publisher rows each subscription
holds, and how many each pair of subscriptions both hold: the rows where their changes can
meet in a conflict. `qrepl publication check` prints it, `qrepl status` its total."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from ..core.filter_meaning import spark_sql
from ..storage.open import warehouse
from ..storage.warehouse import Warehouse

# aggregate expressions per statement: a publication with many subscribers is counted in a few
# scans of each article rather than one statement too large to plan
_PER_SCAN = 200


def partition_overlaps(schema: str | None) -> dict[str, Any]:
    """{"partitioned": any subscription has a filter, "articles": [{article, rows, holds:
    {subscriber: rows}, pairs: [{subscribers: [a, b], rows}]}], "total": rows both of some
    pair hold, summed over pairs and articles}. Each article is read as it is now, counted
    with count_if over the filters rendered from their checked trees."""
    return overlaps_of(warehouse(schema))


def overlaps_of(wh: Warehouse, subscriptions: list[dict] | None = None) -> dict[str, Any]:
    """`partition_overlaps` on an open warehouse, from `subscriptions` when the caller has read
    them already (`qrepl status`)."""
    from pyspark.sql import functions as F

    pub = wh.require_publication()
    subs = [
        (s["subscriber"], wh.partition(s)) for s in (wh.subscriptions() if subscriptions is None else subscriptions)
    ]
    partitioned = any(p for _, p in subs)
    articles, total = [], 0
    for article in pub.articles:
        held = {name: spark_sql(p[article.name]) if article.name in p else "true" for name, p in subs}
        pairs = list(combinations(sorted(held), 2))
        exprs = [("rows", "count(*)")]
        exprs += [(f"holds:{name}", f"count_if(coalesce({held[name]}, false))") for name in sorted(held)]
        exprs += [(f"pair:{a}:{b}", f"count_if(coalesce({held[a]} and {held[b]}, false))") for a, b in pairs]
        table = wh.spark.table(wh.article_table(article))
        counted: dict[str, int] = {}
        for start in range(0, len(exprs), _PER_SCAN):
            part = exprs[start : start + _PER_SCAN]
            row = table.agg(*[F.expr(sql).alias(f"c{i}") for i, (_, sql) in enumerate(part)]).first()
            counted.update({label: row[f"c{i}"] for i, (label, _) in enumerate(part)})
        both = [{"subscribers": [a, b], "rows": counted[f"pair:{a}:{b}"]} for a, b in pairs]
        total += sum(p["rows"] for p in both)
        articles.append(
            {
                "article": article.name,
                "rows": counted["rows"],
                "holds": {name: counted[f"holds:{name}"] for name in sorted(held)},
                "pairs": both,
            }
        )
    return {"partitioned": partitioned, "articles": articles, "total": total}
