"""A publication's warehouse opened by its schema name (None: $QREPL_SCHEMA, else 'qrepl'),
on this process's Spark session: how every service and tool opens the tables it works on."""

from __future__ import annotations

import os

from .spark import get_spark
from .warehouse import Warehouse


def default_schema() -> str:
    return os.environ.get("QREPL_SCHEMA", "qrepl")


def warehouse(schema: str | None = None):
    return Warehouse(get_spark(), schema or default_schema())
