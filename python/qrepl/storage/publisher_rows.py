"""The publisher's current rows of an article for a set of keys, as row images by canonical key."""

from __future__ import annotations

from ..core.publication import Article
from ..core.rows import canonical_key, normalize_row, typed_row
from .warehouse import Warehouse, readable


def publisher_rows(wh: Warehouse, article: Article, key_values: list[dict]) -> dict[str, dict]:
    """The publisher's current rows for these keys, by canonical key (a key join, not a scan
    to the driver)."""
    keys = wh.spark.createDataFrame(
        [tuple(typed_row(article, k)[c] for c in article.key) for k in key_values], article.key_ddl
    )
    rows = readable(
        wh.spark.table(wh.article_table(article)).join(keys, list(article.key), "left_semi"), article
    ).collect()
    return {canonical_key(article, r.asDict()): normalize_row(article, r.asDict()) for r in rows}
