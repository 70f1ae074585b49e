"""The publication: create or update it from its YAML, describe an existing table as an
article, show it, change its policy, drop it (docs/publishing.md)."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..core.identity_ranges import PUBLISHER_RANGE_OWNER
from ..core.publication import Publication, publication_from_dict
from ..core.values import check_type
from ..core.vocabulary import ConfigError, Progress, check_identifier, normalize_policy
from ..storage.dbt_runner import dbt_invoke, stamp_publisher
from ..storage.identity_ranges import ensure_ranges
from ..storage.open import warehouse
from ..storage.replica import replica_schema
from ..storage.warehouse import Warehouse


def load_publication_file(path: Path) -> Publication:
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read publication config {path}: {exc}") from exc
    return publication_from_dict(data)


def create_publication(
    path: Path, schema: str | None = None, seed: bool = False, echo: Progress = print
) -> Publication:
    """Create (or update) the publication's tables; with seed, load initial rows from seeds/."""
    pub = load_publication_file(path)
    wh = warehouse(schema)
    wh.write_publication(pub)
    # a table published in place: every row it already holds gets a version
    stamp_publisher(wh)
    # identity ranges: the publisher's, and every subscriber's (an identity declared later included)
    ensure_ranges(wh, PUBLISHER_RANGE_OWNER, pub.articles)
    for sub in wh.subscriptions():
        ensure_ranges(wh, sub["subscriber"], pub.articles)
    if seed:
        echo("loading initial publisher rows from seeds/ (dbt seed)")
        dbt_invoke(["seed"], wh.schema)
        for article in pub.articles:
            seed_table = wh.table(f"demo_{article.name}")
            cols = ", ".join(article.columns)
            wh.spark.sql(f"insert into {wh.article_table(article)} select {cols}, uuid() from {seed_table}")
    return pub


def describe_table(table: str, key: list[str], publication_schema: str | None = None) -> str:
    """The YAML article declaration of an existing table (`qrepl publication describe`); a
    table outside `publication_schema` is named by the article's `table:`."""
    parts = table.split(".")
    if len(parts) != 2:
        raise ConfigError(f"--table must be SCHEMA.TABLE, got {table!r}")
    schema, name = (check_identifier(p, "table") for p in parts)
    wh = warehouse(schema)
    if not wh.exists(name):
        raise ConfigError(f"no table {schema}.{name}")
    columns = wh.table_columns(name)
    columns.pop("msrepl_tran_version", None)
    for c, t in columns.items():
        check_type(t, c)
    missing = [k for k in key if k not in columns]
    if missing:
        raise ConfigError(f"key column(s) {', '.join(missing)} not in {schema}.{name} ({', '.join(columns)})")
    article = {"name": name, "key": list(key), "columns": columns}
    if publication_schema is not None and schema.lower() != publication_schema.lower():
        article["table"] = f"{schema}.{name}"
    publication_from_dict({"publication": "check", "articles": [article]})  # the rules a declaration obeys
    return yaml.safe_dump([article], sort_keys=False, default_flow_style=None)


def drop_publication(schema: str | None, subscribers: tuple[str, ...] = ()) -> None:
    """Drop a publication's schema with every table in it, and the replica schemas of its
    subscriptions (and of `subscribers`, named whether or not they are subscribed). For a
    demo or a test; a user's table published in place in the publication's schema goes with
    it, one in another schema (an article's `table:`) is kept, unmarked (docs/publishing.md)."""
    wh = warehouse(schema)
    names = set(subscribers)
    if wh.exists("subscriptions"):
        names |= {s["subscriber"] for s in wh.subscriptions()}
    for name in sorted(names):
        Warehouse(wh.spark, replica_schema(wh, name)).drop_schema()
    if wh.exists("qrepl_publication"):
        wh.unpublish_tables()
    wh.drop_schema()


def publication(schema: str | None) -> Publication:
    """The publication's settings and articles (one line if the schema has none)."""
    return warehouse(schema).require_publication()


def set_policy(schema: str | None, policy: str) -> Publication:
    """Change the conflict policy (only while the publication has no subscriptions)."""
    return warehouse(schema).set_policy(normalize_policy(policy))
