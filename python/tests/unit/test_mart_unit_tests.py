"""The dbt unit tests of the marts (models/marts/_marts__unit_tests.yml) test each mart's own
filter: a unit test node does not carry its model's meta, so a mart whose rows are selected by
meta.qrepl_rows_where (macro qrepl_rows_where) has that macro overridden in its unit test, and
the override must be the model's filter word for word; and every mart that filters has one
(docs/testing.md). The marts that are views over the batch log filter in their own SQL and
need no override."""

from pathlib import Path
import re

import yaml

ROOT = Path(__file__).resolve().parents[3]
MARTS = ROOT / "models" / "marts"
META = re.compile(r"""'qrepl_rows_where':\s*(?:"([^"]*)"|'([^']*)')""")


def mart_filters() -> dict[str, str]:
    """Each mart's meta.qrepl_rows_where, by model name."""
    found = {}
    for path in sorted(MARTS.glob("*.sql")):
        m = META.search(path.read_text())
        if m:
            found[path.stem] = m.group(1) if m.group(1) is not None else m.group(2)
    return found


def unit_tests() -> list[dict]:
    return yaml.safe_load((MARTS / "_marts__unit_tests.yml").read_text())["unit_tests"]


def test_each_override_of_qrepl_rows_where_is_its_models_filter():
    filters = mart_filters()
    assert filters, filters
    for case in unit_tests():
        macros = (case.get("overrides") or {}).get("macros") or {}
        if case["model"] in filters:
            assert macros.get("qrepl_rows_where") == f"true and ({filters[case['model']]})", case["name"]
        else:
            assert "qrepl_rows_where" not in macros, case["name"]


def test_each_mart_that_filters_its_batch_has_a_unit_test():
    tested = {case["model"] for case in unit_tests()}
    views = {p.stem for p in MARTS.glob("*.sql") if "materialized='qrepl_view'" in p.read_text()}
    assert set(mart_filters()) | views <= tested
