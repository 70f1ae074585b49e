"""docs/spec.md §5 numbers the reader's rules (5.1, 5.2, ...). A newcomer finds where each
is decided from models/ and macros/ alone: the model or macro says "Decides docs/spec.md
5.N" in its SQL comment (kept in target/compiled) and in its yml description (shown by
dbt docs), and docs/reader.md lists the same files per rule. These tests hold the spec, the
files and the table together, so a new rule, a moved decision or a renamed model cannot
leave one of them behind."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
RULE = re.compile(r"Decides docs/spec\.md ((?:\d\.\d+ \([^)]*\)(?:, )?)+)\.")


def spec_rules() -> dict[str, str]:
    """The numbered rules of spec §5: number -> name."""
    text = (ROOT / "docs" / "spec.md").read_text()
    section = text[text.index("## 5. ") : text.index("## 6. ")]
    rules = {}
    for number, name in re.findall(r"\*\*(5\.\d+)\*?\*? ?`?([^`.*]+)", section):
        rules[number] = name.strip()
    return rules


def named_in(path: Path) -> list[str]:
    """The rules a model or macro file says it decides."""
    found = []
    for match in RULE.finditer(" ".join(path.read_text().split())):
        found += re.findall(r"(\d\.\d+) \(", match.group(1))
    return found


def decided_where() -> dict[str, set[str]]:
    where: dict[str, set[str]] = {}
    for path in sorted([*ROOT.glob("models/**/*.sql"), *ROOT.glob("macros/**/*.sql")]):
        for rule in named_in(path):
            where.setdefault(rule, set()).add(path.relative_to(ROOT).as_posix())
    return where


def described(kind: str) -> dict[str, str]:
    """Every model's or macro's yml description, by name."""
    out = {}
    for yml in ROOT.glob(f"{'models' if kind == 'models' else 'macros'}/**/_*.yml"):
        for node in (yaml.safe_load(yml.read_text()) or {}).get(kind, []) or []:
            out[node["name"]] = " ".join(str(node.get("description", "")).split())
    return out


def test_the_spec_numbers_its_rules_in_order():
    assert list(spec_rules()) == [f"5.{n}" for n in range(1, len(spec_rules()) + 1)]
    assert len(spec_rules()) >= 9


def test_every_rule_is_decided_somewhere_and_every_named_rule_exists():
    where = decided_where()
    assert sorted(where) == sorted(spec_rules())


def test_each_deciding_file_says_so_in_its_description_too():
    descriptions = {**described("models"), **described("macros")}
    for rule, files in decided_where().items():
        for f in files:
            name = Path(f).stem
            assert name in descriptions, f"{f} has no yml description"
            assert rule in re.findall(r"(\d\.\d+) \(", " ".join(RULE.findall(descriptions[name]))), (rule, f)


def test_readers_table_lists_exactly_the_deciding_files():
    text = (ROOT / "docs" / "reader.md").read_text()
    table = text[text.index("## Where each rule is decided") : text.index("## Hostile input")]
    listed = {}
    for line in table.splitlines():
        m = re.match(r"\| (5\.\d+) [^|]+\| ([^|]+) \|", line)
        if m:
            listed[m.group(1)] = set(re.findall(r"`([^`]+)`", m.group(2)))
    assert listed == decided_where()
