# over 400 lines: one Warehouse class, the one writer of the publisher-side tables the Python layer owns
"""Publisher-side tables written by the Python layer: config, queue, subscriptions, articles.

Identifiers are validated before they reach SQL; values always travel in DataFrames (temp
views as MERGE sources), never in SQL text.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from datetime import datetime
from typing import Any, Iterable

from .faults import point_comment
from .spark import on_rest_catalog
from .tables import (  # noqa: F401  (the Python tables' DDL, re-exported for the modules that write them)
    ARTICLES_SCHEMA,
    IMMEDIATE_REJECTIONS_SCHEMA,
    IMMEDIATE_TRANSACTIONS_SCHEMA,
    PUBLICATION_SCHEMA,
    PYTHON_TABLES,
    QUEUE_SCHEMA,
    SUBSCRIPTION_TOMBSTONES_SCHEMA,
    SUBSCRIPTIONS_SCHEMA,
    columns,
)
from ..core.modes import initial_current_mode, normalize_update_mode
from ..core.partitions import ColumnLists, Partition, columns_of, partition_json, partition_of
from ..core.publication import Article, Publication, publication_from_dict, qrepl_table_refusal
from ..core.rows import typed_row
from ..core.vocabulary import ConfigError, check_identifier
from .table_formats import format_refusal

ICEBERG_PROPS = (
    "'format-version'='2', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read', "
    # zstd (Iceberg's default codec) at level 1, not 3: faster to write, as fast to read
    # (docs/performance.md#thresholds-and-choices-measured)
    "'write.parquet.compression-level'='1'"
)


QUEUE_COLUMNS = columns(QUEUE_SCHEMA)
# added after the first release: a store created before gets them on first use (null = queued)
# columns added to the subscriptions table after it first existed: the update modes, and the
# partition (docs/spec.md §11: per article its filter's text and checked tree, JSON; NULL: whole)
SUBSCRIPTION_LATE_COLUMNS = {"update_mode": "STRING", "current_mode": "STRING", "partition_spec": "STRING"}
# added after the first release: a store created before gets them on first use (null = the
# default table, no identity, no stamped column; docs/spec.md §3)
ARTICLE_LATE_COLUMNS = {
    "table_name": "STRING",
    "identity_column": "STRING",
    "identity_range": "BIGINT",
    "stamped_column": "STRING",
}
# the table property marking a table published in place by a publication: `<schema>.<publication>`
PUBLISHED_BY = "qrepl.publication"

_view_ids = itertools.count()
_commit_numbers = {"last": 0}
_commit_numbers_lock = threading.Lock()


# to_json's options for article values: timestamps at six fractional digits, a `timestamp` in UTC
# with `Z` (values.timestamp_text; the dbt macro qrepl_json_options spells the same).
TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"
JSON_OPTIONS = {"timestampFormat": TIMESTAMP_FORMAT, "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"}


def readable(df, article: Article):
    """An article table's rows as Python can take them: each `timestamp` column as its canonical
    text. pyspark turns a timestamp into a datetime through the local clock's fromtimestamp,
    which fails on the first day of year 0001 (measured: 'year 0 is out of range')."""
    from pyspark.sql import functions as F

    for column, type_name in article.columns.items():
        if type_name == "timestamp" and column in df.columns:  # a replica may take some columns only
            df = df.withColumn(column, F.date_format(column, TIMESTAMP_FORMAT))
    return df


def allocate_commit_numbers(count: int = 1) -> int:
    """Reserve `count` consecutive commit numbers; returns the first. Microseconds since the
    epoch, bumped past anything this process handed out before."""
    with _commit_numbers_lock:
        first = max(time.time_ns() // 1000, _commit_numbers["last"] + 1)
        _commit_numbers["last"] = first + count - 1
        return first


def new_version() -> str:
    return str(uuid.uuid4())


class Warehouse:
    """The publisher's tables in one schema of the session catalog."""

    def __init__(self, spark, schema: str) -> None:
        self.spark = spark
        self.schema = check_identifier(schema, "schema")

    def table(self, name: str) -> str:
        return f"{self.schema}.{check_identifier(name, 'table')}"

    def article_table(self, article: Article) -> str:
        """The article's publisher table: `<schema>.<article name>`, or the table its `table:`
        names (a bare name in this schema). Both parts validated again as they are read back."""
        if not article.table:
            return self.table(article.name)
        schema, _, name = article.table.rpartition(".")
        return f"{check_identifier(schema or self.schema, 'schema')}.{check_identifier(name, 'table')}"

    def current_snapshot(self, name: str) -> int | None:
        """A table's current snapshot id (its `main` ref), None for a table never written."""
        return self.snapshot_of(self.table(name))

    def snapshot_of(self, table: str) -> int | None:
        """current_snapshot of a table named in full (`schema.table`, validated by the caller)."""
        row = self.spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").first()
        return row.snapshot_id if row else None

    def article_snapshot(self, article: Article) -> int | None:
        """The article's publisher table's current snapshot id."""
        return self.snapshot_of(self.article_table(article))

    def last_stamps(self) -> dict[str, int]:
        """The snapshot the publisher's trigger last examined, per article (publisher_stamps,
        written by macros/stamp/qrepl_stamp_publisher.sql): the record the trigger starts from
        next, so two records of one stamp_seq (two triggers at once) are told apart as it does."""
        if not self.exists("publisher_stamps"):
            return {}
        latest = "named_struct('stamp_seq', stamp_seq, 'snapshot_id', snapshot_id)"
        rows = self.spark.sql(
            f"select article, max_by(snapshot_id, {latest}) as snapshot_id "
            f"from {self.table('publisher_stamps')} group by article"
        ).collect()
        return {r.article: r.snapshot_id for r in rows}

    def exists(self, name: str) -> bool:
        """A table or view of the schema. On a REST catalog an Iceberg view is one Spark's own
        catalog API does not see (spark.catalog.tableExists says False): `show views` does."""
        return self.spark.catalog.tableExists(self.table(name)) or (on_rest_catalog() and name in self._views())

    def _views(self) -> set[str]:
        """The schema's views as `show views` lists them (an Iceberg catalog's too); none if the
        schema does not exist."""
        if not self.spark.catalog.databaseExists(self.schema):
            return set()
        return {r.viewName for r in self.spark.sql(f"show views in {self.schema}").collect() if not r.isTemporary}

    def _create(self, name: str, ddl: str) -> None:
        self.spark.sql(
            f"create table if not exists {self.table(name)} ({ddl}) using iceberg tblproperties ({ICEBERG_PROPS})"
        )

    def create_own(self, name: str) -> None:
        """Create, if missing, one of the Python layer's own tables (qrepl.storage.tables)."""
        self._create(name, PYTHON_TABLES[name])

    def _temp_view(self, rows: list[dict], ddl: str) -> str:
        name = f"qrepl_values_{next(_view_ids)}"
        self.spark.createDataFrame(rows, ddl).createOrReplaceTempView(name)
        return name

    # -- setup ------------------------------------------------------------------------------
    def ensure_base_tables(self) -> None:
        self.spark.sql(f"create database if not exists {self.schema}")
        self.create_own("replication_queue")
        self.create_own("subscriptions")
        self.create_own("qrepl_publication")
        self.create_own("qrepl_articles")
        self.ensure_article_columns()
        self.create_own("immediate_transactions")
        self.create_own("immediate_rejections")
        self.ensure_subscription_columns()

    def ensure_article_columns(self) -> None:
        """Add the later article settings (table_name, the generated columns) to a
        qrepl_articles created before they existed."""
        self._add_missing_columns("qrepl_articles", ARTICLE_LATE_COLUMNS)

    def ensure_subscription_columns(self) -> None:
        """Add the update-mode and partition columns to a subscriptions table created before
        they existed."""
        self._add_missing_columns("subscriptions", SUBSCRIPTION_LATE_COLUMNS)

    def _add_missing_columns(self, name: str, columns: dict[str, str]) -> None:
        """Add to an existing table each of `columns` (name: type) it does not have yet."""
        if not self.exists(name):
            return
        have = {f.name for f in self.spark.table(self.table(name)).schema.fields}
        missing = [f"{c} {t}" for c, t in columns.items() if c not in have]
        if missing:
            self.spark.sql(f"alter table {self.table(name)} add columns ({', '.join(missing)})")

    def drop_schema(self) -> None:
        if self.spark.catalog.databaseExists(self.schema):
            for t in self.spark.catalog.listTables(self.schema):
                if not t.isTemporary:
                    kind = "view" if t.tableType == "VIEW" else "table"
                    self.spark.sql(
                        f"drop {kind} if exists {self.schema}.{check_identifier(t.name, 'table')}"
                        + (" purge" if kind == "table" else "")
                    )
            if on_rest_catalog():  # Iceberg views, which listTables leaves out there
                for view in self._views():
                    self.spark.sql(f"drop view if exists {self.schema}.{check_identifier(view, 'view')}")
            self.spark.sql(f"drop database if exists {self.schema} cascade")

    def read_publication(self) -> Publication | None:
        if not self.exists("qrepl_publication"):
            return None
        rows = self.spark.table(self.table("qrepl_publication")).collect()
        if not rows:
            return None
        p = rows[0]
        articles = []
        for a in self.spark.table(self.table("qrepl_articles")).orderBy("ordinal").collect():
            article = {
                "name": a.article,
                "key": list(a.key_columns or []),
                "columns": dict(zip(a.column_names or [], a.column_types or [])),
            }
            row = a.asDict()
            if row.get("table_name") is not None:
                article["table"] = row["table_name"]
            if row.get("identity_column") is not None:
                article["identity"], article["identity_range"] = row["identity_column"], row["identity_range"]
            if row.get("stamped_column") is not None:
                article["stamped"] = row["stamped_column"]
            articles.append(article)
        # validated as on creation: the config tables can be written by anyone with access, and
        # these names reach SQL text (the dbt macros check them again when they read them)
        try:
            return publication_from_dict(
                {
                    "publication": p.publication,
                    "policy": p.policy,
                    "conflict_retention_days": p.conflict_retention_days,
                    "centralized_conflicts": p.centralized_conflicts,
                    "articles": articles,
                }
            )
        except ConfigError as exc:
            raise ConfigError(
                f"{self.table('qrepl_publication')} / {self.table('qrepl_articles')} hold an invalid publication: {exc}"
            ) from exc

    def _foreign_qrepl_table(self, article: Article, table: str) -> str | None:
        """Why `table` may not be published: it is one of another publication's own tables, or
        in one of its replica or what-if schemas (qrepl_table_refusal, asked of the schema that
        holds that publication). None when it may."""
        where = table.rpartition(".")[0].lower()
        if not where or where == self.schema.lower():
            return None
        owner = where.split("__")[0] if "__" in where else where.removesuffix("_whatif")
        for schema in {owner, where}:
            if self.spark.catalog.tableExists(f"{schema}.qrepl_publication"):
                return qrepl_table_refusal(article.name, table, schema)
        return None

    def write_publication(self, pub: Publication) -> None:
        """Create or update the publication: config rows, and a table per article."""
        for article in pub.articles:  # before any write: never one of qrepl's own tables
            table = self.article_table(article)
            refusal = qrepl_table_refusal(article.name, table, self.schema) or self._foreign_qrepl_table(article, table)
            if not refusal and self.spark.catalog.tableExists(table):
                refusal = format_refusal(self.spark, table)  # read by the trigger
            if refusal:
                raise ConfigError(f"article {article.name}: {refusal}" if refusal.startswith("table ") else refusal)
        self.ensure_base_tables()
        existing = self.read_publication()
        if existing and existing.policy != pub.policy and self.subscription_count() > 0:
            raise ConfigError(
                f"publication {existing.name} has subscriptions: its policy cannot change from "
                f"{existing.policy} to {pub.policy} (drop the subscriptions first)"
            )
        if existing and existing.name != pub.name:
            raise ConfigError(f"schema {self.schema} already holds publication {existing.name}")
        tables: dict[str, str] = {}
        for article in pub.articles:
            table = self.article_table(article).lower()
            if table in tables:
                raise ConfigError(f"articles {tables[table]} and {article.name} both name table {table}")
            tables[table] = article.name
            before = existing.article(article.name) if existing else None
            if before is not None and self.article_table(before).lower() != table:
                raise ConfigError(
                    f"article {article.name}: its table cannot change from {self.article_table(before)} "
                    f"to {self.article_table(article)} (declare a new article)"
                )
            # before any write: a table belongs to one publication
            owner = self.published_by(table) if self.spark.catalog.tableExists(table) else None
            if owner is not None and owner != f"{self.schema}.{pub.name}":
                raise ConfigError(
                    f"article {article.name}: table {self.article_table(article)} is already published "
                    f"by publication {owner} (a table belongs to one publication)"
                )
        for article in pub.articles:
            self._publish_article(article, existing.article(article.name) if existing else None, pub.name)
        self.spark.createDataFrame(
            [(pub.name, pub.policy, pub.conflict_retention_days, pub.centralized_conflicts)], PUBLICATION_SCHEMA
        ).writeTo(self.table("qrepl_publication")).overwritePartitions()
        self.spark.createDataFrame(
            [
                (
                    a.name,
                    i,
                    list(a.key),
                    list(a.columns),
                    list(a.columns.values()),
                    a.table,
                    a.identity,
                    a.identity_range if a.identity else None,
                    a.stamped,
                )
                for i, a in enumerate(pub.articles)
            ],
            ARTICLES_SCHEMA,
        ).writeTo(self.table("qrepl_articles")).overwritePartitions()

    def table_columns(self, name: str) -> dict[str, str]:
        """An existing table's columns and their types, as a declaration spells them."""
        return self.columns_of(self.table(name))

    def columns_of(self, table: str) -> dict[str, str]:
        """table_columns of a table named in full (`schema.table`, validated by the caller)."""
        return {f.name: f.dataType.simpleString() for f in self.spark.table(table).schema.fields}

    def published_by(self, table: str) -> str | None:
        """The publication (`<schema>.<publication>`) that marked `table` as published in place."""
        for r in self.spark.sql(f"show tblproperties {table}").collect():
            if r[0] == PUBLISHED_BY:
                return r[1]
        return None

    def _publish_article(self, article: Article, declared_before: Article | None, publication: str) -> None:
        """The article's publisher table: created, or an existing table published in place
        (docs/publishing.md), anywhere in the catalog (the article's `table:`). An existing
        table must hold exactly the declared columns with the declared types; it gains
        msrepl_tran_version (its rows get one from the publisher's trigger,
        qrepl.storage.warehouse.stamp_publisher) and keeps its data and history.
        A column added to a publication is added to the table (and to every replica, by the
        caller); a column removed or retyped is refused. The table is marked with the table
        property qrepl.publication (write_publication refused a table another publication marked)."""
        table = self.article_table(article)
        mark = f"{self.schema}.{publication}"
        props = f"{ICEBERG_PROPS}, '{PUBLISHED_BY}'='{mark}'"
        if not self.spark.catalog.tableExists(table):
            if article.table:
                raise ConfigError(
                    f"article {article.name}: no table {table} (an article's table: names an "
                    f"existing table; leave it out to have the publication create one)"
                )
            cols = ", ".join(f"{c} {t.upper()}" for c, t in article.columns.items())
            self.spark.sql(
                f"create table if not exists {table} ({cols}, msrepl_tran_version STRING) "
                f"using iceberg tblproperties ({props})"
            )
            return
        have = self.columns_of(table)
        have.pop("msrepl_tran_version", None)
        problems: list[str] = []
        added: list[str] = []  # columns this change adds to a published article
        if declared_before is not None:  # a publication changed: columns may only be added
            before = declared_before.columns
            problems += [
                f"column {c} removed (a published column cannot be dropped)" for c in before if c not in article.columns
            ]
            problems += [
                f"column {c} retyped from {before[c]} to {article.columns[c]} (a published column keeps its type)"
                for c in before
                if c in article.columns and before[c] != article.columns[c]
            ]
            added = [c for c in article.columns if c not in before]
        problems += [
            f"column {c} is {have[c]} in the table, {t} in the declaration"
            for c, t in article.columns.items()
            if c in have and have[c] != t
        ]
        problems += [
            f"column {c} is declared but not in the table" for c in article.columns if c not in have and c not in added
        ]
        problems += [
            f"column {c} ({t}) is in the table but not declared" for c, t in have.items() if c not in article.columns
        ]
        if problems:
            raise ConfigError(
                f"article {article.name}: table {table} does not match the "
                f"declaration: {'; '.join(problems)} (`qrepl publication describe --table "
                f"{table}` writes a declaration from the table)"
            )
        if "msrepl_tran_version" not in self.columns_of(table):
            self.spark.sql(f"alter table {table} add column msrepl_tran_version string")
        if added:  # the publisher table, then every replica of it; each only where it is missing, so
            # a rerun after a failure in between adds it to the tables that still lack it
            for target in [table] + self._replica_tables(article.name):
                missing = [c for c in added if c not in self.columns_of(target)]
                for c in missing:
                    self.spark.sql(
                        f"alter table {target} add column {check_identifier(c, 'column')} {article.columns[c]}"
                    )
        self.spark.sql(f"alter table {table} set tblproperties ({props})")

    def unpublish_tables(self) -> None:
        """Before the publication's schema is dropped: each article table elsewhere in the
        catalog (a user's table published in place) loses its qrepl.publication mark and is
        kept, with its rows and msrepl_tran_version."""
        pub = self.read_publication()
        for article in pub.articles if pub else []:
            table = self.article_table(article)
            if (
                table.split(".")[0].lower() != self.schema.lower()
                and self.spark.catalog.tableExists(table)
                and self.published_by(table) == f"{self.schema}.{pub.name}"
            ):
                self.spark.sql(f"alter table {table} unset tblproperties if exists ('{PUBLISHED_BY}')")

    def _replica_tables(self, article: str) -> list[str]:
        """The article's table in every subscriber's replica schema that has it."""
        tables = []
        for sub in self.subscriptions() if self.exists("subscriptions") else []:
            table = f"{self.schema}__{check_identifier(sub['subscriber'], 'subscriber')}.{check_identifier(article, 'article')}"
            if self.spark.catalog.tableExists(table):
                tables.append(table)
        return tables

    def set_policy(self, policy: str) -> Publication:
        pub = self.require_publication()
        pub.policy = policy
        self.write_publication(pub)
        return pub

    def require_publication(self) -> Publication:
        pub = self.read_publication()
        if pub is None:
            raise ConfigError(f"no publication in schema {self.schema}: run `qrepl publication create` first")
        return pub

    # -- subscriptions ------------------------------------------------------------------------
    def subscription_count(self) -> int:
        return self.spark.table(self.table("subscriptions")).count() if self.exists("subscriptions") else 0

    @staticmethod
    def _subscription_row(row) -> dict:
        """A subscription as a dict; a row written before update modes existed is queued, one
        written before partitions existed is whole."""
        s = row.asDict()
        s.setdefault("partition_spec", None)
        s["update_mode"] = s.get("update_mode") or "queued"
        s["current_mode"] = s.get("current_mode") or initial_current_mode(s["update_mode"])
        return s

    def _subscriptions_table(self):
        """The subscriptions table; None when the publication has none yet, and ConfigError in
        one line when the schema has no publication."""
        try:
            return self.spark.table(self.table("subscriptions"))
        except Exception:
            if self.exists("subscriptions"):
                raise
        self.require_publication()
        return None

    def subscriptions(self) -> list[dict]:
        table = self._subscriptions_table()
        return [] if table is None else [self._subscription_row(r) for r in table.orderBy("subscriber").collect()]

    def subscription(self, subscriber: str) -> dict | None:
        table = self._subscriptions_table()
        rows = [] if table is None else table.where(table.subscriber == subscriber).collect()
        return self._subscription_row(rows[0]) if rows else None

    def add_subscription(
        self, subscriber: str, update_mode: str = "queued", partition: Partition | None = None
    ) -> None:
        self.add_subscriptions([subscriber], update_mode, {subscriber: partition} if partition else None)

    def add_subscriptions(
        self,
        subscribers: list[str],
        update_mode: str = "queued",
        partitions: dict[str, Partition] | None = None,
        columns: dict[str, ColumnLists] | None = None,
    ) -> None:
        """Subscribe several subscribers in one commit (active, generation 0, one update mode;
        each with its partition and column lists, docs/spec.md §11)."""
        pub = self.require_publication()
        update_mode = normalize_update_mode(update_mode)
        self.ensure_subscription_columns()
        for s in subscribers:
            check_identifier(s, "subscriber")
        if len(set(subscribers)) != len(subscribers):
            raise ConfigError(f"subscribers listed twice: {sorted(subscribers)}")
        existing = {s["subscriber"] for s in self.subscriptions()} & set(subscribers)
        if existing:
            raise ConfigError(f"subscriber {sorted(existing)[0]} is already subscribed to {pub.name}")
        dropped = self.dropped_generations()
        self.spark.createDataFrame(
            [
                (
                    s,
                    pub.name,
                    "active",
                    dropped[s] + 1 if s in dropped else 0,
                    None,
                    None,
                    update_mode,
                    initial_current_mode(update_mode),
                    partition_json((partitions or {}).get(s) or {}, (columns or {}).get(s)),
                )
                for s in subscribers
            ],
            SUBSCRIPTIONS_SCHEMA,
        ).writeTo(self.table("subscriptions")).append()

    def dropped_generations(self) -> dict[str, int]:
        """Each dropped subscriber's last generation (the tombstones)."""
        if not self.exists("subscription_tombstones"):
            return {}
        rows = self.spark.table(self.table("subscription_tombstones")).groupBy("subscriber").max("generation").collect()
        return {r[0]: r[1] for r in rows}

    def set_current_mode(self, subscriber: str, current_mode: str) -> None:
        """Record how a failover subscription captures now (queued or immediate)."""
        self.ensure_subscription_columns()
        view = self._temp_view([(subscriber, current_mode)], "subscriber STRING, current_mode STRING")
        self.spark.sql(
            f"merge into {self.table('subscriptions')} as target using {view} as source "
            f"on target.subscriber = source.subscriber "
            f"when matched then update set target.current_mode = source.current_mode"
        )

    def drop_subscription(self, subscriber: str) -> None:
        """Unsubscribe, keeping the generation in a tombstone first (a crash in between leaves
        the subscription, and dropping it again finishes)."""
        sub = self.subscription(subscriber)
        if not sub:
            raise ConfigError(f"no subscription for subscriber {subscriber}")
        self.create_own("subscription_tombstones")
        self.spark.createDataFrame(
            [(subscriber, sub["generation"], datetime.utcnow())], SUBSCRIPTION_TOMBSTONES_SCHEMA
        ).writeTo(self.table("subscription_tombstones")).append()
        view = self._temp_view([{"subscriber": subscriber}], "subscriber STRING")
        self.spark.sql(f"delete from {self.table('subscriptions')} where subscriber in (select subscriber from {view})")

    def partition(self, subscription: dict) -> Partition:
        """A subscription's partition (docs/spec.md §11), each filter checked again against its
        article: {} when it takes every row."""
        return partition_of(self.require_publication(), subscription.get("partition_spec"))

    def columns(self, subscription: dict) -> ColumnLists:
        """A subscription's column lists (docs/spec.md §11), checked again: per article it takes
        only some columns of, those (key included, in the article's order); {} when it takes
        every column."""
        return columns_of(self.require_publication(), subscription.get("partition_spec"))

    def set_partition(self, subscriber: str, partition: Partition, columns: ColumnLists | None = None) -> None:
        """Record a subscription's partition and column lists (its filter change is a
        reinitialization: services.subscriptions.change_partition)."""
        self.ensure_subscription_columns()
        view = self._temp_view(
            [(subscriber, partition_json(partition, columns))], "subscriber STRING, partition_spec STRING"
        )
        self.spark.sql(
            f"merge into {self.table('subscriptions')} as target using {view} as source "
            f"on target.subscriber = source.subscriber "
            f"when matched then update set target.partition_spec = source.partition_spec"
        )

    def update_subscription(
        self, subscriber: str, status: str, generation: int, requested_at: datetime | None, reason: str | None
    ) -> None:
        view = self._temp_view(
            [(subscriber, status, generation, requested_at, reason)],
            "subscriber STRING, status STRING, generation INT, reinit_requested_at TIMESTAMP, reinit_reason STRING",
        )
        self.spark.sql(f"""
            merge into {self.table("subscriptions")} as target using {view} as source
            on target.subscriber = source.subscriber
            when matched then update set target.status = source.status, target.generation = source.generation,
                target.reinit_requested_at = source.reinit_requested_at, target.reinit_reason = source.reinit_reason
        """)

    # -- publisher rows -----------------------------------------------------------------------
    def article(self, name: str) -> Article:
        pub = self.require_publication()
        article = pub.article(name)
        if article is None:
            raise ConfigError(
                f"unknown article {name!r} (publication {pub.name} has {', '.join(a.name for a in pub.articles)})"
            )
        return article

    def _article_ddl(self, article: Article) -> str:
        return ", ".join(f"{c} {t.upper()}" for c, t in article.columns.items()) + ", msrepl_tran_version STRING"

    def upsert_rows(self, article_name: str, rows: Iterable[dict[str, Any]], point: str = "") -> None:
        article = self.article(article_name)
        typed = []
        for row in rows:
            norm = typed_row(article, row)
            typed.append(tuple(norm[c] for c in article.columns) + (norm["msrepl_tran_version"],))
        if not typed:
            return
        view = self._temp_view(typed, self._article_ddl(article))
        on = " and ".join(f"target.{k} = source.{k}" for k in article.key)
        self.spark.sql(
            f"{point_comment(point) if point else ''}merge into {self.article_table(article)} as target "
            f"using {view} as source on {on} when matched then update set * when not matched then insert *"
        )

    def delete_rows(self, article_name: str, keys: Iterable[dict[str, Any]], point: str = "") -> None:
        article = self.article(article_name)
        rows = [tuple(typed_row(article, k)[c] for c in article.key) for k in keys]
        if not rows:
            return
        view = self._temp_view(rows, article.key_ddl)
        on = " and ".join(f"target.{k} = source.{k}" for k in article.key)
        self.spark.sql(
            f"{point_comment(point) if point else ''}merge into {self.article_table(article)} as target "
            f"using {view} as source on {on} when matched then delete"
        )

    def outside_write(self, article_name: str, op: str, row: dict[str, Any]) -> None:
        """A write by a writer that knows nothing of qrepl (a scenario's `outside_write`): a
        MERGE by `row`'s key that updates every other column and keeps the version (U),
        inserts the row with no version where the key is absent (I), or deletes (D)."""
        if op == "D":
            return self.delete_rows(article_name, [row])
        article = self.article(article_name)
        norm = typed_row(article, row)
        view = self._temp_view([tuple(norm[c] for c in article.columns) + (None,)], self._article_ddl(article))
        on = " and ".join(f"target.{k} = source.{k}" for k in article.key)
        if op == "U":
            sets = ", ".join(f"target.{c} = source.{c}" for c in article.columns if c not in article.key)
            action = f"when matched then update set {sets}"
        else:
            action = "when not matched then insert *"
        self.spark.sql(f"merge into {self.article_table(article)} as target using {view} as source on {on} {action}")

    def publisher_rows(self, article_name: str) -> list[dict]:
        article = self.article(article_name)
        return [r.asDict() for r in readable(self.spark.table(self.article_table(article)), article).collect()]

    # -- queue ------------------------------------------------------------------------------
    def next_tran_seq(self, subscriber: str, count: int = 1) -> int:
        """The first of `count` commit numbers for the subscriber's next transactions.

        A subscriber's queued transactions are processed in (enqueued_at, tran_seq) order, so
        a commit number only has to grow with the commits of the process that makes them: it
        is the time in microseconds, strictly increasing within this process. No Spark job
        (the queue is not read), and two processes capturing for one subscriber never wait for
        or collide with each other (ties in time are ordered by tran_id)."""
        return allocate_commit_numbers(count)

    def append_queue(self, rows: list[dict]) -> None:
        """One atomic Iceberg commit: a transaction's commands are never partly visible."""
        if not rows:
            return
        self.spark.createDataFrame([tuple(r.get(c) for c in QUEUE_COLUMNS) for r in rows], QUEUE_SCHEMA).writeTo(
            self.table("replication_queue")
        ).append()

    def rows_of(self, table: str, order_by: str | None = None) -> list[dict]:
        if not self.exists(table):
            return []
        df = self.spark.table(self.table(table))
        if order_by:
            df = df.orderBy(*order_by.split(","))
        return [r.asDict(recursive=True) for r in df.collect()]
