"""A checked row filter's meaning (docs/spec.md §11): its value for a row, evaluated here exactly
as Spark evaluates the SQL that `spark_sql` renders from the same tree, and its normalized text.
What a filter may say, and its tree, are `filter_language`'s."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from .filter_language import KEYWORDS, Tree
from .publication import Article
from .values import coerce_json_value


# -- evaluating (Spark's semantics: three-valued logic; a row is in the partition when TRUE) ---


def _value(article: Article, col: str, row: dict[str, Any]) -> Any:
    typ = article.columns[col]
    v = coerce_json_value(row.get(col), typ)
    if isinstance(v, int) and not isinstance(v, bool):
        return Decimal(v)
    return v


def _like(value: str, pattern: str) -> bool:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(out), value, re.DOTALL) is not None


def _trim(value: str) -> str:
    return value.strip(" ")


def evaluate(article: Article, tree: Tree, row: dict[str, Any]) -> Any:
    """The node's value for a row (None for SQL NULL)."""
    if "col" in tree:
        return _value(article, tree["col"], row)
    if "lit" in tree:
        t, v = tree["type"], tree["lit"]
        return Decimal(v) if t == "number" else (v == "true") if t == "boolean" else v
    if "fn" in tree:
        args = [evaluate(article, a, row) for a in tree["args"]]
        if tree["fn"] == "coalesce":
            return next((a for a in args if a is not None), None)
        if args[0] is None:
            return None
        return {
            "length": lambda s: Decimal(len(s)),
            "lower": str.lower,
            "upper": str.upper,
            "trim": _trim,
        }[tree["fn"]](args[0])
    op = tree["op"]
    if op == "and":
        values = [evaluate(article, a, row) for a in tree["args"]]
        return False if False in values else None if None in values else True
    if op == "or":
        values = [evaluate(article, a, row) for a in tree["args"]]
        return True if True in values else None if None in values else False
    if op == "not":
        v = evaluate(article, tree["args"][0], row)
        return None if v is None else not v
    if op == "is null":
        return evaluate(article, tree["args"][0], row) is None
    if op == "in":
        x, *items = [evaluate(article, a, row) for a in tree["args"]]
        if x is None:
            return None
        return True if any(x == i for i in items if i is not None) else None if None in items else False
    left, right = (evaluate(article, a, row) for a in tree["args"])
    if left is None or right is None:
        return None
    if op == "like":
        return _like(left, right)
    return {
        "=": left == right,
        "<>": left != right,
        "<": left < right,
        "<=": left <= right,
        ">": left > right,
        ">=": left >= right,
    }[op]


def matches(article: Article, tree: Tree, row: dict[str, Any] | None) -> bool:
    """Whether a row is in the partition: the filter is TRUE for it (NULL and FALSE are out)."""
    return row is not None and evaluate(article, tree, row) is True


# -- rendering --------------------------------------------------------------------------------


def text(tree: Tree) -> str:
    """The filter in qrepl's normalized text (what `subscription show` prints; parses back to
    the same tree)."""
    if "col" in tree:
        return f"`{tree['col']}`" if tree["col"].lower() in KEYWORDS else tree["col"]
    if "lit" in tree:
        t, v = tree["type"], tree["lit"]
        if t == "string":
            return "'" + v.replace("'", "''") + "'"
        if t == "date":
            return f"DATE '{v}'"
        return v.upper() if t == "boolean" else v
    if "fn" in tree:
        return f"{tree['fn']}({', '.join(text(a) for a in tree['args'])})"
    op, args = tree["op"], tree["args"]
    if op in ("and", "or"):
        return f" {op.upper()} ".join(_grouped(a, op) for a in args)
    if op == "not":
        inner = args[0]
        if inner.get("op") == "is null":
            return f"{text(inner['args'][0])} IS NOT NULL"
        if inner.get("op") == "in":
            x, *items = inner["args"]
            return f"{text(x)} NOT IN ({', '.join(text(i) for i in items)})"
        if inner.get("op") == "like":
            return f"{text(inner['args'][0])} NOT LIKE {text(inner['args'][1])}"
        return f"NOT {_grouped(args[0], 'not')}"
    if op == "is null":
        return f"{text(args[0])} IS NULL"
    if op == "in":
        return f"{text(args[0])} IN ({', '.join(text(a) for a in args[1:])})"
    if op == "like":
        return f"{text(args[0])} LIKE {text(args[1])}"
    return f"{text(args[0])} {op} {text(args[1])}"


def _grouped(tree: Tree, parent: str) -> str:
    inner = text(tree)
    loose = tree.get("op") in ("and", "or") and (parent == "not" or tree.get("op") != parent)
    return f"({inner})" if loose or (parent == "not" and tree.get("op") == "not") else inner


def spark_sql(tree: Tree) -> str:
    """Spark SQL of a checked tree. Columns are backquoted; a
    string literal is its UTF-8 bytes in hex, cast to string, so no text of the user's reaches
    the SQL; numbers are exact (int, bigint, or a decimal literal)."""
    if "col" in tree:
        return f"`{tree['col']}`"
    if "lit" in tree:
        t, v = tree["type"], tree["lit"]
        if t == "string":
            return f"cast(X'{v.encode('utf-8').hex().upper()}' as string)" if v else "''"
        if t == "date":
            return f"DATE '{v}'"
        if t == "boolean":
            return v
        if "." in v:
            return f"{v}BD"
        n = int(v)
        if -(2**31) <= n < 2**31:
            return str(n)
        return f"{n}L" if -(2**63) <= n < 2**63 else f"{n}BD"
    if "fn" in tree:
        return f"{tree['fn']}({', '.join(spark_sql(a) for a in tree['args'])})"
    op, args = tree["op"], [spark_sql(a) for a in tree["args"]]
    if op in ("and", "or"):
        return "(" + f" {op} ".join(args) + ")"
    if op == "not":
        return f"(not {args[0]})"
    if op == "is null":
        return f"({args[0]} is null)"
    if op == "in":
        return f"({args[0]} in ({', '.join(args[1:])}))"
    if op == "like":
        return f"({args[0]} like {args[1]})"
    return f"({args[0]} {op} {args[1]})"


def columns(tree: Tree) -> list[str]:
    """The columns a filter reads, in first-use order."""
    found: list[str] = []
    if "col" in tree:
        return [tree["col"]]
    for a in tree.get("args", []):
        found += [c for c in columns(a) if c not in found]
    return found
