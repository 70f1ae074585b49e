"""Every table the Python layer creates is defined in qrepl.storage.tables and documented as a
source in models/staging/_sources.yml with the same columns in the same order, so the
lineage `dbt docs` shows is the tables Python really makes (docs/spec.md §4)."""

from pathlib import Path
import re

import yaml

from qrepl.storage.tables import PYTHON_TABLES, columns

ROOT = Path(__file__).resolve().parents[3]
SOURCES = ROOT / "models" / "staging" / "_sources.yml"


def documented() -> dict[str, list[str]]:
    sources = yaml.safe_load(SOURCES.read_text())["sources"]
    qrepl = next(s for s in sources if s["name"] == "qrepl")
    return {t["name"]: [c["name"] for c in t.get("columns", [])] for t in qrepl["tables"]}


def test_each_python_table_is_a_source_with_its_columns_in_order():
    docs = documented()
    assert sorted(docs) == sorted(PYTHON_TABLES)
    for name, ddl in PYTHON_TABLES.items():
        assert docs[name] == columns(ddl), name


def test_no_python_module_creates_a_table_of_the_publisher_schema_by_its_own_ddl():
    """Tables are made by Warehouse.create_own (the DDL of qrepl.storage.tables); the two other
    create statements make an article's publisher table and the generic helper itself."""
    found = []
    for path in sorted((ROOT / "python" / "qrepl").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"create table|\.create\(\)|_create\(", line, re.I) and "def " not in line:
                found.append(f"{path.relative_to(ROOT)}:{n}")
    allowed = {
        "python/qrepl/storage/warehouse.py",
        "python/qrepl/storage/spark.py",
        "python/qrepl/services/distribution.py",
        "python/qrepl/tools/whatif.py",
    }
    assert {f.split(":")[0] for f in found} <= allowed, found
