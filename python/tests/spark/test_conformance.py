"""Property test: random workloads through Spark + dbt and through the reference agree.

Each hypothesis example draws a random publication (1–3 articles, composite keys, mixed
column types) and PACK independent workloads over it. A workload has 1–5 subscribers of its
own, hot rows, multi-command and multi-row transactions, current / stale / garbage / foreign
old versions, publisher-local changes between runs, reinitializations and transactions
stamped with an older generation. The workloads share the articles but never a subscriber or
a key, so one replay of the pack checks them all, and the pack itself is one more (bigger)
workload that must match too. If a pack differs, each of its workloads is replayed on its
own to name the one that differs.

CI runs QREPL_CONFORMANCE_EXAMPLES workloads per policy (default 25, one pack) in one Spark session;
`make conformance N=300` runs more on demand (progress in .qrepl_state/conformance.log).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import uuid
from datetime import date, datetime, timedelta

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from qrepl.tools.replay import (
    CONDITIONAL_POINTS,
    RUN_POINTS,
    ReferenceBackend,
    SparkBackend,
    normalized_outputs,
    play,
    scenario_from_dict,
)

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("QREPL_CONFORMANCE_EXAMPLES", "25"))
# more than ~25 workloads per example exceed hypothesis's budget of choices per example
PACK = min(25, max(1, int(os.environ.get("QREPL_CONFORMANCE_PACK", "25"))))
# a pack of 25 deep cascades outgrows Hypothesis's data buffer: at N=100 only 2 of 4 packs were
# generated; packs of 10 are generated every time
COUPLED_PACK = min(PACK, 10)
KEY_TYPES = ["int", "bigint", "string", "smallint", "date", "decimal(10,2)", "timestamp", "timestamp_ntz"]
VALUE_TYPES = [
    "int",
    "string",
    "decimal(8,2)",
    "boolean",
    "date",
    "double",
    "tinyint",
    "smallint",
    "float",
    "decimal(38,2)",
    "timestamp",
    "timestamp_ntz",
    "binary",
]


def _many(draw, low: int, high: int) -> int:
    """A count in [low, high] whose simplest draw is `high`: hypothesis tries its simplest
    example first, and that one should be a busy workload, not one transaction."""
    return high - draw(st.integers(0, high - low))


@st.composite
def publications(draw) -> list[dict]:
    """1–3 articles, each with a 1–2 column key and 1–3 other columns of mixed types."""
    articles = []
    for a in range(_many(draw, 1, 3)):
        key = [f"k{i}" for i in range(_many(draw, 1, 2))]
        columns = {k: draw(st.sampled_from(KEY_TYPES)) for k in key}
        for c in range(_many(draw, 1, 3)):
            columns[f"c{c}"] = draw(st.sampled_from(VALUE_TYPES))
        articles.append({"name": f"article_{a}", "key": key, "columns": columns})
    return articles


def _key_value(type_name: str, n: int, text: str):
    """Key value number `n` (unique within its pack) of a key column: `text` for a string."""
    if type_name == "string":
        return text
    if type_name == "date":
        return (date(2000, 1, 1) + timedelta(days=n)).isoformat()
    if type_name in ("timestamp", "timestamp_ntz"):  # n microseconds and n days after 1969-12-31
        moment = datetime(1969, 12, 31) + timedelta(days=n, microseconds=n)
        return moment.isoformat(timespec="microseconds") + ("Z" if type_name == "timestamp" else "")
    return f"{n}.25" if type_name.startswith("decimal") else n


def _value(draw, type_name: str):
    if draw(st.integers(0, 9)) == 0:
        return None
    if type_name in ("int", "bigint", "tinyint", "smallint"):
        return draw(st.integers(-5, 5))
    if type_name == "float":
        return draw(st.sampled_from([0.5, -2.25, 1.1, 3.0e38]))
    if type_name == "decimal(38,2)":
        return draw(st.sampled_from(["1.50", "-999999999999999999999999999999999999.99", "0.01"]))
    if type_name == "string":
        return draw(st.sampled_from(["a", "b", "é", "x y", ""]))
    if type_name == "boolean":
        return draw(st.booleans())
    if type_name == "date":
        return (date(2026, 1, 1) + timedelta(days=draw(st.integers(0, 3)))).isoformat()
    if type_name == "double":
        return draw(st.sampled_from([0.5, -2.25, 3.0, 1e10]))
    if type_name == "timestamp":  # as a writer may put it: any offset, 0..6 fractional digits
        return draw(
            st.sampled_from(
                [
                    "2026-01-01T00:00:00.000001Z",
                    "1969-12-31T23:59:59.999999+01:00",
                    "0001-01-01T00:00:00Z",
                    "2024-02-29 12:00:00.5-05:30",
                ]
            )
        )
    if type_name == "timestamp_ntz":
        return draw(
            st.sampled_from(["2026-01-01T00:00:00.000001", "9999-12-31T23:59:59.999999", "1900-03-01 00:00:00"])
        )
    if type_name == "binary":
        return draw(st.sampled_from(["", "AP8=", "AAECAw==", "////"]))
    return draw(st.sampled_from(["1.50", "-0.25", "100.00"]))


def _filter_literal(type_name: str, value) -> str:
    """A value of a column as a row filter's literal (docs/spec.md §11)."""
    if type_name == "string":
        return "'" + value.replace("'", "''") + "'"
    if type_name == "date":
        return f"DATE '{value}'"
    return str(value).lower() if isinstance(value, bool) else str(value)


FILTERABLE = ("int", "bigint", "smallint", "tinyint", "string", "boolean", "date", "decimal(8,2)", "decimal(10,2)")


def _row_filter(draw, article: dict, key_row) -> str | None:
    """A row filter over one of the article's columns of an exact type, drawn so that rows
    move in and out as their values change: the key in a few of the workload's keys, or a
    value column against values the workload writes. None when no column can be filtered."""
    columns = [c for c, t in article["columns"].items() if t in FILTERABLE or t == "decimal(38,2)"]
    if not columns:
        return None
    col = draw(st.sampled_from(columns))
    typ = article["columns"][col]
    if col in article["key"]:
        keys = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True))
        return f"{col} IN ({', '.join(_filter_literal(typ, key_row(article, k)[col]) for k in keys)})"
    if typ == "boolean":
        return draw(st.sampled_from([col, f"NOT {col}", f"{col} IS NULL"]))
    if typ == "string":
        return draw(
            st.sampled_from([f"{col} IN ('a', 'é')", f"{col} LIKE 'x%'", f"lower({col}) <> 'b'", f"length({col}) = 0"])
        )
    if typ == "date":
        return f"{col} >= DATE '2026-01-02'"
    if typ.startswith("decimal"):
        return draw(st.sampled_from([f"{col} > 0", f"{col} BETWEEN -1 AND 2", f"{col} IS NOT NULL"]))
    return draw(st.sampled_from([f"{col} > 0", f"{col} IN (-5, 0, 5)", f"NOT ({col} = 1 OR {col} IS NULL)"]))


@st.composite
def workloads(draw, policy: str, articles: list[dict], part: int) -> dict:
    """One workload over `articles`: its own subscribers p<part>s<i>, its own keys; about half
    of the subscribers partitioned by a row filter on an article (docs/spec.md §11), which a
    round may change (with --force: the subscriber's queued commands become rejected_reinit)."""
    subscribers = [f"p{part}s{i}" for i in range(1, _many(draw, 1, 5) + 1)]
    versions: list[str] = []

    def fresh() -> str:
        value = str(uuid.UUID(int=draw(st.integers(0, 2**64)) | (part << 96) | (len(versions) << 72)))
        versions.append(value)
        return value

    def key_row(article: dict, k: int) -> dict:
        row = {}
        for i, col in enumerate(article["key"]):
            n = part * 100 + k + i  # disjoint from every other workload of the pack
            row[col] = _key_value(article["columns"][col], n, f"p{part}k{k}_{i}")
        return row

    def full_row(article: dict, k: int) -> dict:
        row = key_row(article, k)
        for col, typ in article["columns"].items():
            if col not in row:
                row[col] = _value(draw, typ)
        return row

    def partition_of() -> dict[str, str]:
        article = draw(st.sampled_from(articles))
        condition = _row_filter(draw, article, key_row)
        return {article["name"]: condition} if condition else {}

    filters = {s: f for s in subscribers if draw(st.booleans()) and (f := partition_of())}
    # about a third of the subscribers take some columns of an article (a column filter): its
    # key, the columns its row filter reads, and some of the others, never all
    columns: dict[str, dict[str, list[str]]] = {}
    for s in subscribers:
        if draw(st.integers(0, 2)):
            continue
        article = draw(st.sampled_from(articles))
        read = set(re.findall(r"\b[kc][0-9]\b", filters.get(s, {}).get(article["name"], "")))
        needed = [c for c in article["columns"] if c in article["key"] or c in read]
        optional = [c for c in article["columns"] if c not in needed]
        if optional:
            kept = draw(st.lists(st.sampled_from(optional), unique=True, max_size=len(optional) - 1))
            columns[s] = {article["name"]: [c for c in article["columns"] if c in needed or c in kept]}

    def sent(subscriber: str, article: dict, row: dict) -> dict:
        """The row as the subscriber sends it: its columns of the article."""
        taken = columns.get(subscriber, {}).get(article["name"])
        return row if taken is None else {c: v for c, v in row.items() if c in taken}

    known: dict[tuple[str, int], str] = {}
    publisher = {}
    for article in articles:
        rows = []
        for k in range(_many(draw, 0, 3)):
            known[(article["name"], k)] = fresh()
            rows.append({**full_row(article, k), "msrepl_tran_version": known[(article["name"], k)]})
        publisher[article["name"]] = rows
    rounds = []
    generations = dict.fromkeys(subscribers, 0)

    def outside_writes(during: bool) -> list[dict]:
        """0–2 writes by a job that knows nothing of qrepl: between runs, or at a point of the
        next run (RUN_POINTS); the rows it writes have versions only the trigger knows."""
        writes = []
        for _ in range(_many(draw, 0, 2)):
            article = draw(st.sampled_from(articles))
            k = draw(st.integers(0, 3))
            op = draw(st.sampled_from(["U", "U", "I", "D"]))
            write = {"article": article["name"], "op": op}
            write["key" if op == "D" else "row"] = key_row(article, k) if op == "D" else full_row(article, k)
            if during:
                write["during"] = draw(st.sampled_from([p for p in RUN_POINTS if p not in CONDITIONAL_POINTS]))
            writes.append(write)
            if op == "D":
                known.pop((article["name"], k), None)
            else:
                known[(article["name"], k)] = None
        return writes

    for r in range(_many(draw, 1, 3)):
        changes = []
        for _ in range(draw(st.integers(0, 2)) if r else 0):  # publisher-local writes between runs
            article = draw(st.sampled_from(articles))
            k = draw(st.integers(0, 3))
            if draw(st.booleans()):
                new = fresh()
                changes.append({"article": article["name"], "op": "U", "row": full_row(article, k), "new_version": new})
                known[(article["name"], k)] = new
            else:
                changes.append({"article": article["name"], "op": "D", "key": key_row(article, k)})
                known.pop((article["name"], k), None)
        outside = outside_writes(during=False)
        transactions = []
        for t in range(_many(draw, 1, 6)):
            subscriber = draw(st.sampled_from(subscribers))
            commands = []
            for _ in range(_many(draw, 1, 3)):
                article = draw(st.sampled_from(articles))
                k = draw(st.integers(0, 3))
                op = draw(st.sampled_from(["I", "U", "U", "D"]))
                seen = known.get((article["name"], k))
                old = None
                if op != "I":
                    old = draw(st.sampled_from([seen, seen, None, "foreign"]))
                    old = versions[0] if old == "foreign" and versions else (old or fresh())
                new = fresh() if op != "D" else None
                cmd = {"article": article["name"], "op": op, "old_version": old, "new_version": new}
                if op == "D":
                    cmd["key"] = key_row(article, k)
                else:
                    cmd["row"] = sent(subscriber, article, full_row(article, k))
                if op == "D" and draw(st.booleans()):
                    known.pop((article["name"], k), None)
                elif op != "D" and draw(st.booleans()):
                    known[(article["name"], k)] = new
                commands.append(cmd)
            tran = {"subscriber": subscriber, "tran_id": f"p{part}r{r}t{t}", "commands": commands}
            if generations[subscriber] and draw(st.integers(0, 4)) == 0:
                tran["generation"] = generations[subscriber] - 1  # queued before the last snapshot
            transactions.append(tran)
        reinit = []
        if policy == "publisher_wins_reinit" and draw(st.booleans()):
            reinit = [draw(st.sampled_from(subscribers))]
        filter_changes = []
        unlisted = [s for s in subscribers if s not in columns]  # a new filter may read any column
        if (
            unlisted and draw(st.integers(0, 7)) == 0
        ):  # a filter change, forced: this round's commands are rejected_reinit
            changed = draw(st.sampled_from(unlisted))
            filter_changes = [{"subscriber": changed, "filters": partition_of(), "force": True}]
        outside_during = outside_writes(during=True)
        rounds.append(
            {
                "changes": changes,
                "outside": outside,
                "transactions": transactions,
                "filter_changes": filter_changes,
                "outside_during": outside_during,
                "reinit": reinit,
            }
        )
        for s in reinit + [c["subscriber"] for c in filter_changes]:
            generations[s] += 1
    return {
        "subscribers": subscribers,
        "publisher": publisher,
        "rounds": rounds,
        "filters": filters,
        "columns": columns,
    }


@st.composite
def coupled_workloads(draw, policy: str, articles: list[dict], part: int) -> dict:
    """Deep cascades and large coupled groups: 1–3 offline subscribers each make a chain of
    multi-row transactions over a few shared rows, every one expecting the subscriber's own
    last write (or what it saw at the start), so one early conflict can reject a long chain,
    and chains of different subscribers couple through the shared rows. One run."""
    subscribers = [f"p{part}s{i}" for i in range(1, _many(draw, 1, 3) + 1)]
    article = articles[0]
    serial = [0]

    def fresh() -> str:
        serial[0] += 1
        return str(uuid.UUID(int=(part << 96) | (serial[0] << 32) | draw(st.integers(0, 2**32 - 1))))

    def key_row(k: int) -> dict:
        return {
            col: _key_value(article["columns"][col], part * 100 + k + i, f"p{part}k{k}_{i}")
            for i, col in enumerate(article["key"])
        }

    def full_row(k: int) -> dict:
        row = key_row(k)
        for col, typ in article["columns"].items():
            if col not in row:
                row[col] = _value(draw, typ)
        return row

    width = _many(draw, 2, 6)
    start = {k: fresh() for k in range(width) if draw(st.integers(0, 5))}
    views = {s: dict(start) for s in subscribers}  # each subscriber's offline view: version or absent
    transactions = []
    for t in range(_many(draw, 4, 30)):
        subscriber = draw(st.sampled_from(subscribers))
        view = views[subscriber]
        first = draw(st.integers(0, width - 1))
        rows = sorted(
            {first, (first + 1) % width} | ({draw(st.integers(0, width - 1))} if draw(st.booleans()) else set())
        )
        commands = []
        for k in rows:
            stale = t == 0 and draw(st.booleans())
            if k not in view:
                new = fresh()
                commands.append(
                    {"article": article["name"], "op": "I", "old_version": None, "new_version": new, "row": full_row(k)}
                )
                view[k] = new
            elif draw(st.integers(0, 6)) == 0:
                commands.append(
                    {
                        "article": article["name"],
                        "op": "D",
                        "key": key_row(k),
                        "old_version": fresh() if stale else view[k],
                        "new_version": None,
                    }
                )
                del view[k]
            else:
                new = fresh()
                commands.append(
                    {
                        "article": article["name"],
                        "op": "U",
                        "row": full_row(k),
                        "old_version": fresh() if stale else view[k],
                        "new_version": new,
                    }
                )
                view[k] = new
        transactions.append({"subscriber": subscriber, "tran_id": f"p{part}c{t}", "commands": commands})
    publisher = {a["name"]: [] for a in articles}
    publisher[article["name"]] = [{**full_row(k), "msrepl_tran_version": v} for k, v in start.items()]
    return {
        "subscribers": subscribers,
        "publisher": publisher,
        "rounds": [{"changes": [], "transactions": transactions, "reinit": []}],
    }


def scenario_of(policy: str, articles: list[dict], parts: list[dict]) -> dict:
    """The replay scenario running `parts` side by side: round r of every part before run r."""
    publisher = {a["name"]: [row for p in parts for row in p["publisher"][a["name"]]] for a in articles}
    steps: list[dict] = [{"publisher_rows": publisher}]
    for r in range(max(len(p["rounds"]) for p in parts)):
        rounds = [p["rounds"][r] for p in parts if r < len(p["rounds"])]
        steps += [{"publisher_change": c} for rd in rounds for c in rd["changes"]]
        steps += [{"outside_write": w} for rd in rounds for w in rd.get("outside", [])]
        steps.append({"enqueue": [t for rd in rounds for t in rd["transactions"]]})
        steps += [{"filter_change": c} for rd in rounds for c in rd.get("filter_changes", [])]
        steps += [{"outside_write": w} for rd in rounds for w in rd.get("outside_during", [])]
        steps.append({"run": {}})
        steps += [{"reinitialize": {"subscriber": s}} for rd in rounds for s in rd["reinit"]]
    last = [rd for p in parts for rd in p["rounds"][-1:] if len(p["rounds"]) == r + 1]
    if any(rd.get("outside_during") for rd in last):
        # a run after them has nothing to do (docs/spec.md 5.10) and leaves what they wrote
        # unstamped to the trigger that reads the outputs (SparkBackend.outputs)
        steps.append({"run": {}})
    return {
        "publication": "sales",
        "policy": policy,
        "articles": articles,
        "subscribers": [s for p in parts for s in p["subscribers"]],
        "filters": {s: f for p in parts for s, f in p.get("filters", {}).items()},
        "columns": {s: c for p in parts for s, c in p.get("columns", {}).items()},
        "steps": steps,
    }


@st.composite
def packs(draw, policy: str, size: int, shape=workloads) -> tuple[list[dict], list[dict]]:
    articles = draw(publications())
    return articles, [draw(shape(policy, articles, j)) for j in range(size)]


def _outputs(data: dict, backend_class) -> dict:
    scenario = scenario_from_dict(data, "generated")
    return normalized_outputs(scenario, play(scenario, backend_class(scenario)))


def _progress(line: str) -> None:
    """One line per checked pack to QREPL_CONFORMANCE_LOG, if set (long on-demand runs)."""
    log = os.environ.get("QREPL_CONFORMANCE_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} {line}\n")


def _check(policy: str, articles: list[dict], parts: list[dict]) -> None:
    data = scenario_of(policy, articles, parts)
    started = time.monotonic()
    expected = _outputs(data, ReferenceBackend)
    actual = _outputs(data, SparkBackend)
    _progress(
        f"{policy}: pack of {len(parts)} workloads, {len(data['steps'])} steps, "
        f"{'match' if actual == expected else 'DIFFER'} ({time.monotonic() - started:.0f} s)"
    )
    if actual == expected:
        return
    for part in parts:  # name the workload that differs
        single = scenario_of(policy, articles, [part])
        if _outputs(single, SparkBackend) != _outputs(single, ReferenceBackend):
            pytest.fail("Spark + dbt differs from the reference on this workload:\n" + json.dumps(single, indent=1))
    pytest.fail("each workload matches alone but the pack differs:\n" + json.dumps(data, indent=1))


@pytest.mark.parametrize("policy", ["publisher_wins", "publisher_wins_reinit", "subscriber_wins"])
def test_generated_workloads_match_reference(spark, policy):
    """Random publications, 1–5 subscribers, hot rows, multi-command transactions, stale /
    current / garbage old versions, publisher changes between runs and reinitializations:
    `qrepl replay` (Spark + dbt) == the reference on publisher tables, conflicts,
    compensating commands, transaction outcomes, subscriptions and rejects."""
    size = min(PACK, EXAMPLES)
    _check_packs(policy, packs(policy, size), math.ceil(EXAMPLES / size))


@pytest.mark.parametrize("fold_alone_up_to", ["0", "100000"], ids=["passes", "fold-after-pass-0"])
@pytest.mark.parametrize("policy", ["publisher_wins", "publisher_wins_reinit"])
def test_cascades_and_coupled_groups_match_reference(spark, policy, fold_alone_up_to, monkeypatch):
    """Deep cascades of dependent multi-row transactions from offline subscribers sharing
    rows (coupled_workloads): the resolution == the reference, both ways it decides a coupled
    batch: the set-based passes, then the fold of what they leave unsettled (forced with
    QREPL_FOLD_ALONE_UP_TO=0); and the fold right after pass 0, which the default limit picks
    for batches this small (macro qrepl_fold_alone_limit). QREPL_CONFORMANCE_COUPLED workloads
    per policy and way (default 10), in packs of 10."""
    monkeypatch.setenv("QREPL_FOLD_ALONE_UP_TO", fold_alone_up_to)
    examples = int(os.environ.get("QREPL_CONFORMANCE_COUPLED", "10"))
    size = min(COUPLED_PACK, examples)
    _check_packs(policy, packs(policy, size, coupled_workloads), math.ceil(examples / size))


def _check_packs(policy: str, strategy, wanted: int) -> None:
    """`wanted` generated packs, each replayed on Spark + dbt and by the reference. Hypothesis
    drops a drawn example that outgrows its data buffer and may end early; counting makes a
    run that checked fewer packs than asked fail instead of passing quietly."""
    checked: list[int] = []

    @settings(
        max_examples=wanted,
        deadline=None,
        derandomize=os.environ.get("CI") == "true",
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    @given(strategy)
    def check(pack):
        _check(policy, *pack)
        checked.append(len(pack[1]))

    check()
    assert len(checked) == wanted, f"{policy}: {len(checked)} packs generated and checked, {wanted} asked"
