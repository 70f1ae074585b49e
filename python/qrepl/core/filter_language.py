"""Row filters (docs/spec.md §11): the small SQL language a subscription's partition is written
in, parsed and checked when it is given (its meaning for a row and its SQL: `filter_meaning`).

A filter is a boolean expression over one article's own columns:

    region = 'north'
    store_id IN (1, 2, 3) AND NOT closed
    opened BETWEEN DATE '2026-01-01' AND DATE '2026-06-30' OR lower(trim(region)) LIKE 'n%'

Parts: the article's columns of an exact type (integers, decimal, string, boolean, date);
literals (integers, decimals, 'strings' with '' for a quote, TRUE, FALSE, DATE 'yyyy-mm-dd');
comparisons = <> != < <= > >=; AND, OR, NOT, parentheses; [NOT] IN (literals), [NOT] BETWEEN,
IS [NOT] NULL, [NOT] LIKE 'pattern'; and the deterministic functions of FUNCTIONS. Anything
else (another table, a subquery, a nondeterministic or unknown function, arithmetic, a float
or timestamp column, a comparison with NULL) is refused in one line naming the part.

The checked tree is plain JSON (lists and dicts), stored with the subscription; the SQL the
queue reader and distribution run is rendered from it (`filter_meaning.spark_sql`), never from
the user's text, and a string literal reaches SQL as its UTF-8 bytes in hex.
"""

from __future__ import annotations

import re
from typing import Any

from .publication import Article
from .values import DATE_TEXT, DECIMAL_TYPE, INTEGER_BITS, coerce_json_value
from .vocabulary import ConfigError

Tree = dict[str, Any]

# name -> (argument types, result type); "same" takes any number of arguments of one type
FUNCTIONS = {
    "coalesce": ("same", "same"),
    "length": (("string",), "number"),
    "lower": (("string",), "string"),
    "upper": (("string",), "string"),
    "trim": (("string",), "string"),
}
COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")
KEYWORDS = {"and", "or", "not", "in", "between", "is", "null", "like", "true", "false", "date"}
MAX_DIGITS = 38  # a decimal literal's digits, and the digits a comparison may need (Spark's decimal)
MAX_FILTER_CHARS = 4000

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<string>'(?:[^']|'')*')"
    r"|(?P<number>-?[0-9]+(?:\.[0-9]+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<quoted>`[^`]*`)"
    r"|(?P<op><=|>=|<>|!=|=|<|>|\(|\)|,)"
    r"|(?P<other>\S)"
    r")"
)


class _Refused(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while True:
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "other":
            if value == ".":
                raise _Refused("`.` is not allowed (only the article's own columns, no other table)")
            if value == "'":
                raise _Refused("a string literal is not closed")
            raise _Refused(f"`{value}` is not allowed (no arithmetic, subqueries or other operators)")
        if kind == "quoted":
            value, kind = value[1:-1], "column"
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
                raise _Refused(f"`{value}` is not a column name")
        out.append((kind, value))
    if text[pos:].strip():
        raise _Refused(f"`{text[pos:].strip()[:20]}` is not allowed")
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens, self.i = tokens, 0

    def peek(self, ahead: int = 0) -> tuple[str, str] | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def word(self, ahead: int = 0) -> str | None:
        t = self.peek(ahead)
        return t[1].lower() if t and t[0] == "name" else None

    def take(self, kind: str | None = None, value: str | None = None) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise _Refused("the filter ends too soon")
        if (kind and t[0] != kind) or (value and t[1].lower() != value):
            want = value or kind
            raise _Refused(f"`{t[1]}` is not allowed here (expected {want})")
        self.i += 1
        return t

    def parse(self) -> Tree:
        tree = self.disjunction()
        if self.peek() is not None:
            raise _Refused(f"`{self.peek()[1]}` is not allowed here")
        return tree

    def disjunction(self) -> Tree:
        args = [self.conjunction()]
        while self.word() == "or":
            self.i += 1
            args.append(self.conjunction())
        return args[0] if len(args) == 1 else {"op": "or", "args": args}

    def conjunction(self) -> Tree:
        args = [self.negation()]
        while self.word() == "and":
            self.i += 1
            args.append(self.negation())
        return args[0] if len(args) == 1 else {"op": "and", "args": args}

    def negation(self) -> Tree:
        if self.word() == "not":
            self.i += 1
            return {"op": "not", "args": [self.negation()]}
        return self.predicate()

    def predicate(self) -> Tree:
        left = self.operand()
        t = self.peek()
        if t and t[0] == "op" and t[1] in COMPARISONS + ("!=",):
            self.i += 1
            op = "<>" if t[1] == "!=" else t[1]
            return {"op": op, "args": [left, self.operand()]}
        negated = self.word() == "not" and self.word(1) in ("in", "between", "like")
        if negated:
            self.i += 1
        w = self.word()
        if w == "in":
            self.i += 1
            self.take("op", "(")
            if self.word() == "select":
                raise _Refused("a subquery is not allowed")
            items = [self.operand()]
            while self.peek() == ("op", ","):
                self.i += 1
                items.append(self.operand())
            self.take("op", ")")
            tree = {"op": "in", "args": [left, *items]}
        elif w == "between":
            self.i += 1
            low = self.operand()
            self.take("name", "and")
            high = self.operand()
            tree = {"op": "and", "args": [{"op": ">=", "args": [left, low]}, {"op": "<=", "args": [left, high]}]}
        elif w == "like":
            self.i += 1
            tree = {"op": "like", "args": [left, self.operand()]}
        elif w == "is" and not negated:
            self.i += 1
            is_not = self.word() == "not"
            if is_not:
                self.i += 1
            self.take("name", "null")
            tree = {"op": "is null", "args": [left]}
            return {"op": "not", "args": [tree]} if is_not else tree
        else:
            return left
        return {"op": "not", "args": [tree]} if negated else tree

    def operand(self) -> Tree:
        t = self.peek()
        if t is None:
            raise _Refused("the filter ends too soon")
        if t == ("op", "("):
            self.i += 1
            if self.word() == "select":
                raise _Refused("a subquery is not allowed")
            inner = self.disjunction()
            self.take("op", ")")
            return inner
        if t[0] == "string":
            self.i += 1
            return {"lit": t[1][1:-1].replace("''", "'"), "type": "string"}
        if t[0] == "number":
            self.i += 1
            return {"lit": t[1], "type": "number"}
        if t[0] == "column":
            self.i += 1
            return {"col": t[1]}
        if t[0] != "name":
            raise _Refused(f"`{t[1]}` is not allowed here")
        w = t[1].lower()
        if w in ("true", "false"):
            self.i += 1
            return {"lit": w, "type": "boolean"}
        if w == "null":
            self.i += 1
            return {"lit": None, "type": "null"}
        if w == "date" and self.peek(1) and self.peek(1)[0] == "string":
            self.i += 2
            return {"lit": self.tokens[self.i - 1][1][1:-1], "type": "date"}
        if w in ("select", "exists"):
            raise _Refused(f"`{t[1]}` is not allowed (no subqueries)")
        if w in KEYWORDS:
            raise _Refused(f"`{t[1]}` is not allowed here")
        self.i += 1
        if self.peek() == ("op", "("):
            self.i += 1
            args = []
            if self.peek() != ("op", ")"):
                args.append(self.disjunction())
                while self.peek() == ("op", ","):
                    self.i += 1
                    args.append(self.disjunction())
            self.take("op", ")")
            return {"fn": w, "args": args}
        return {"col": t[1]}


# -- checking ---------------------------------------------------------------------------------


def _column_type(article: Article, name: str) -> tuple[str, tuple[int, int] | None]:
    """A column's filter type and, for a number, its (integer digits, fraction digits)."""
    match = [c for c in article.columns if c.lower() == name.lower()]
    if not match:
        raise _Refused(f"`{name}` is not a column of {article.name}")
    typ = article.columns[match[0]]
    if typ in INTEGER_BITS:
        return "number", ({"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}[typ], 0)
    m = DECIMAL_TYPE.match(typ)
    if m:
        p, s = int(m.group(1)), int(m.group(2))
        return "number", (p - s, s)
    if typ in ("string", "boolean", "date"):
        return typ, None
    raise _Refused(
        f"column `{match[0]}` is a {typ}: a filter compares exact types only (integers, decimal, string, boolean, date)"
    )


def _literal_digits(text: str) -> tuple[int, int]:
    whole, _, frac = text.lstrip("-").partition(".")
    return len(whole.lstrip("0") or "0"), len(frac)


def _check(article: Article, node: Tree) -> tuple[str, tuple[int, int] | None]:
    """(type, digits) of a checked node; node is rewritten in place to canonical form (a
    column's declared spelling)."""
    if "col" in node:
        match = [c for c in article.columns if c.lower() == str(node["col"]).lower()]
        typ = _column_type(article, node["col"])
        node["col"] = match[0]
        return typ
    if "lit" in node:
        t, v = node["type"], node["lit"]
        if t == "number":
            if not re.fullmatch(r"-?[0-9]+(?:\.[0-9]+)?", str(v)):
                raise _Refused(f"`{v}` is not a number")
            digits = _literal_digits(v)
            if sum(digits) > MAX_DIGITS:
                raise _Refused(f"`{v}` has more than {MAX_DIGITS} digits")
            return "number", digits
        if t == "date":
            if coerce_json_value(v, "date") is None or not DATE_TEXT.match(str(v)):
                raise _Refused(f"DATE '{v}' is not a date (yyyy-mm-dd)")
            return "date", None
        if t == "string":
            if not isinstance(v, str):
                raise _Refused("a string literal is not text")
            return "string", None
        if t == "boolean":
            if v not in ("true", "false"):
                raise _Refused(f"`{v}` is not a boolean")
            return "boolean", None
        if t == "null":
            raise _Refused("NULL is not allowed here (use IS NULL or IS NOT NULL)")
        raise _Refused(f"a literal of type {t} is not allowed")
    if "fn" in node:
        name = node["fn"]
        if name not in FUNCTIONS:
            raise _Refused(
                f"function `{name}` is not allowed (a filter uses deterministic functions only: {', '.join(FUNCTIONS)})"
            )
        want, result = FUNCTIONS[name]
        types = [_check(article, a) for a in node["args"]]
        if want == "same":
            if not types:
                raise _Refused(f"{name}() needs arguments")
            _same(name, types)
            return _widest(types)
        if len(types) != len(want) or any(t[0] != w for t, w in zip(types, want)):
            raise _Refused(f"{name}() takes {', '.join(want)}")
        return (result, (10, 0)) if result == "number" else (result, None)
    op, args = node.get("op"), node.get("args")
    if not isinstance(args, list):
        raise _Refused("a part of the filter has no arguments")
    if op in ("and", "or", "not"):
        if (op == "not") != (len(args) == 1) or not args:
            raise _Refused(f"{op.upper()} has the wrong number of parts")
        for a in args:
            if _check(article, a)[0] != "boolean":
                raise _Refused(f"each part of {op.upper()} must be a condition")
        return "boolean", None
    if op in COMPARISONS or op == "in":
        if len(args) < 2 or (op != "in" and len(args) != 2):
            raise _Refused(f"{op} has the wrong number of parts")
        if op == "in" and any("lit" not in a for a in args[1:]):
            raise _Refused("IN takes a list of literals")
        _same(op.upper(), [_check(article, a) for a in args])
        return "boolean", None
    if op == "is null":
        if len(args) != 1:
            raise _Refused("IS NULL has the wrong number of parts")
        _check(article, args[0])
        return "boolean", None
    if op == "like":
        if len(args) != 2 or _check(article, args[0])[0] != "string":
            raise _Refused("LIKE takes a string")
        pattern = args[1]
        if pattern.get("type") != "string" or "lit" not in pattern:
            raise _Refused("LIKE takes a string literal pattern")
        if re.search(r"\\(?![%_])", pattern["lit"].replace("\\\\", "")):
            raise _Refused("a LIKE pattern may escape only %, _ and \\ with \\")
        return "boolean", None
    raise _Refused(f"`{op}` is not allowed")


def _same(what: str, types: list[tuple[str, tuple[int, int] | None]]) -> None:
    kinds = {t[0] for t in types}
    if len(kinds) != 1:
        raise _Refused(f"{what} compares {' and '.join(sorted(kinds))}: both sides must be of one type")
    if kinds == {"number"}:
        whole = max(t[1][0] for t in types)
        frac = max(t[1][1] for t in types)
        if whole + frac > MAX_DIGITS:
            raise _Refused(f"{what} would need {whole + frac} digits to compare exactly (at most {MAX_DIGITS})")


def _widest(types: list[tuple[str, tuple[int, int] | None]]) -> tuple[str, tuple[int, int] | None]:
    if types[0][0] != "number":
        return types[0]
    return "number", (max(t[1][0] for t in types), max(t[1][1] for t in types))


def parse(article: Article, text: Any) -> Tree:
    """The checked tree of a filter's text over an article; ConfigError in one line naming the
    part that is not allowed."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"filter for {article.name}: empty")
    if len(text) > MAX_FILTER_CHARS:
        raise ConfigError(f"filter for {article.name}: longer than {MAX_FILTER_CHARS} characters")
    try:
        tree = _Parser(_tokens(text)).parse()
        return check(article, tree)
    except _Refused as e:
        raise ConfigError(f"filter for {article.name}: {e}") from None
    except RecursionError:
        raise ConfigError(f"filter for {article.name}: nested too deeply") from None


def check(article: Article, tree: Any) -> Tree:
    """A tree checked again (as stored, maybe edited since): the same tree in canonical form,
    or _Refused / ConfigError."""
    import copy

    if not isinstance(tree, dict):
        raise ConfigError(f"filter for {article.name}: not a filter tree")
    tree = copy.deepcopy(tree)
    try:
        if _check(article, tree)[0] != "boolean":
            raise _Refused("the filter is not a condition (true or false for a row)")
    except _Refused as e:
        raise ConfigError(f"filter for {article.name}: {e}") from None
    except (KeyError, TypeError, AttributeError):
        raise ConfigError(f"filter for {article.name}: not a filter tree") from None
    return tree
