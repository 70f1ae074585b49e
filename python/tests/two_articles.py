"""A publication of two articles (customers, tags) with a few publisher rows and the given
subscribers, and every article's rows at the publisher or a replica: shared by the tests that
interleave a second writer with a named write (`spark/test_no_write_lost.py`,
`spark/test_races_by_reading.py`)."""

from __future__ import annotations

from qrepl.core.publication import publication_from_dict
from qrepl.services.subscriptions import add_subscription
from qrepl.storage.replica import replica_schema
from qrepl.storage.warehouse import Warehouse, new_version
from races_cases import PUBLICATION  # the same two articles the queue cases use

QUIET = {"echo": lambda _: None}


def two_articles(spark, schema: str, *subscribers: str, immediate: str | None = None) -> Warehouse:
    """`schema` (and its replica schemas) made afresh: customers 1 and 2 and tag t at the
    publisher, and the subscribers with their replicas (`immediate`: the one in immediate mode)."""
    wh = Warehouse(spark, schema)
    for s in spark.catalog.listDatabases():
        if s.name.startswith(schema + "__"):
            Warehouse(spark, s.name).drop_schema()
    wh.drop_schema()
    wh.write_publication(publication_from_dict(PUBLICATION))
    wh.upsert_rows(
        "customers", [{"customer_id": i, "city": f"c{i}", "msrepl_tran_version": new_version()} for i in (1, 2)]
    )
    wh.upsert_rows("tags", [{"tag": "t", "note": "n", "msrepl_tran_version": new_version()}])
    for s in subscribers:
        add_subscription(schema, s, update_mode="immediate" if s == immediate else "queued", **QUIET)
    return wh


def article_rows(wh: Warehouse, subscriber: str | None = None) -> dict[str, list[tuple]]:
    """Every article's rows (with versions) at the publisher, or at a subscriber's replica."""
    rows = {}
    for a in ("customers", "tags"):
        table = wh.table(a) if subscriber is None else f"{replica_schema(wh, subscriber)}.{a}"
        rows[a] = sorted(tuple(r) for r in wh.spark.table(table).collect())
    return rows
