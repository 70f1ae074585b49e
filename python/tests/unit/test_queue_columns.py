"""The batch cut reads the queue by the columns documented on the dbt source
(macros/queue/qrepl_queue_rows.sql, _qrepl_queue_columns): they must be the columns the Python layer
writes, in the same order, or a queued value would never reach a batch."""

from pathlib import Path

import yaml

from qrepl.storage.warehouse import QUEUE_COLUMNS

SOURCES = Path(__file__).resolve().parents[3] / "models" / "staging" / "_sources.yml"


def documented_queue_columns() -> list[str]:
    sources = yaml.safe_load(SOURCES.read_text())["sources"]
    qrepl = next(s for s in sources if s["name"] == "qrepl")
    queue = next(t for t in qrepl["tables"] if t["name"] == "replication_queue")
    return [c["name"] for c in queue["columns"]]


def test_the_sources_queue_columns_are_the_queue_table_the_python_layer_writes():
    assert documented_queue_columns() == QUEUE_COLUMNS
