"""Fault injection for the crash tests: stop a process right after its K-th write.

Every write qrepl makes, from dbt or from the Python layer, goes through one of a few PySpark
calls (`SparkSession.sql` of a DDL/DML statement, or a `DataFrameWriterV2` commit). When the
environment variable `QREPL_FAULT` is set, `install()` wraps those calls and counts the writes:

* `QREPL_FAULT=count:/path/file` appends one line per write (`<k>\t<first words>`), so a test
  learns how many write points an operation has;
* `QREPL_FAULT=kill:K` sends SIGKILL to the whole process group right after write K, so the
  Python process and its Spark JVM die together, as in a power cut;
* `QREPL_FAULT=raise:K` raises `InjectedFault` right after write K (an ordinary failure).

In-process tests use `arm(k, action)` instead: `action` runs right after write k (a callable,
for instance one that commits a concurrent publisher write, or `raise_fault`).
"""

from __future__ import annotations

import os
import re
import signal
import threading
from contextlib import contextmanager
from typing import Callable

ENV = "QREPL_FAULT"
_WRITE_WORDS = {"create", "insert", "merge", "delete", "update", "drop", "alter", "replace", "call", "truncate"}
_COMMENTS = re.compile(r"^\s*(?:/\*.*?\*/|--[^\n]*\n|\s)*", re.S)


class InjectedFault(RuntimeError):
    """Raised by an armed fault point (never in production use)."""


class _State:
    uncounted = threading.local()  # set in a thread whose writes are not write points
    installed = False
    writes = 0
    armed_at: int | None = None
    action: Callable[[int, str], None] | None = None
    count_file: str | None = None
    labels: list[str] = []


def is_write(statement: str) -> bool:
    """True for a statement that changes a table or the catalog (temporary views do not count)."""
    text = _COMMENTS.sub("", statement, count=1).lower()
    words = text.split(None, 6)
    if not words or words[0] not in _WRITE_WORDS:
        return False
    head = " ".join(words[:5])
    return not (
        words[0] in ("create", "replace")
        and ("temporary" in head or " temp " in f" {head} ")
        or words[0] == "drop"
        and words[1:2] == ["view"]
        and "temp" in head
    )


_DBT_NODE = re.compile(r'"node_id":\s*"([^"]+)"')
# a Python-layer write names itself with a leading `/* qrepl:<point> */` comment
_PYTHON_POINT = re.compile(r"^\s*/\*\s*qrepl:([A-Za-z0-9_.]+)\s*\*/")


def statement_label(statement: str) -> str:
    """`<dbt node id, python:<point> or python> <first words>`: names a write point in logs and tests."""
    node = _DBT_NODE.search(statement[:400])
    point = _PYTHON_POINT.match(statement)
    words = " ".join(_COMMENTS.sub("", statement, count=1).split()[:8])
    source = node.group(1) if node else f"python:{point.group(1)}" if point else "python"
    return f"{source} {words}"[:200]


def point_comment(point: str) -> str:
    """The leading comment that names a Python-layer write point (`python:<point>` in labels)."""
    if not re.fullmatch(r"[A-Za-z0-9_.]+", point):
        raise ValueError(f"bad write point name {point!r}")
    return f"/* qrepl:{point} */ "


def _after_write(label: str) -> None:
    _State.writes += 1
    k = _State.writes
    _State.labels.append(label)
    if _State.count_file:
        with open(_State.count_file, "a") as f:
            f.write(f"{k}\t{label}\n")
    if _State.armed_at == k and _State.action is not None:
        action, _State.armed_at = _State.action, None
        action(k, label)


def kill_process_group(k: int, label: str) -> None:
    """SIGKILL the whole process group: this Python process and the Spark JVM it started."""
    os.killpg(os.getpgid(0), signal.SIGKILL)


def raise_fault(k: int, label: str) -> None:
    raise InjectedFault(f"injected fault after write {k} ({label})")


def arm(k: int, action: Callable[[int, str], None]) -> None:
    """Run `action` right after the k-th write from now on (counting restarts at zero)."""
    install()
    _State.writes = 0
    _State.labels = []
    _State.armed_at = k
    _State.action = action


def arm_at_label(prefix: str, action: Callable[[int, str], None]) -> None:
    """Run `action` right after the first write whose label starts with `prefix`."""
    arm_when(lambda label: label.startswith(prefix), action)


def arm_when(matches: Callable[[str], bool], action: Callable[[int, str], None]) -> None:
    """Run `action` right after the first write whose label `matches`."""

    def step(k: int, label: str) -> None:
        if matches(label):
            action(k, label)
        else:
            _State.armed_at, _State.action = k + 1, step

    arm(1, step)


def arm_each(action: Callable[[int, str], None]) -> None:
    """Run `action` right after every write from now on, until `disarm` (writes the action
    makes itself are counted only outside `uncounted()`)."""

    def step(k: int, label: str) -> None:
        action(k, label)
        if _State.action is step:  # not disarmed by the action
            _State.armed_at, _State.action = _State.writes + 1, step

    arm(1, step)


def labels() -> list[str]:
    """The write points counted since `arm`, in order (label of write k at index k - 1)."""
    return list(_State.labels)


def disarm() -> int:
    """Stop injecting; returns how many writes were counted since `arm`."""
    _State.armed_at = None
    _State.action = None
    return _State.writes


@contextmanager
def uncounted():
    """Writes of this thread inside the block are not write points: the run lock's lease
    renewals, which come at times of their own and would make write K differ between runs."""
    _State.uncounted.on = True
    try:
        yield
    finally:
        _State.uncounted.on = False


def install() -> None:
    """Wrap PySpark's write calls once per process (idempotent)."""
    if _State.installed:
        return
    from pyspark.sql import DataFrameWriterV2, SparkSession

    original_sql = SparkSession.sql

    def sql(self, sqlQuery, *args, **kwargs):  # noqa: N803 (PySpark's own parameter name)
        result = original_sql(self, sqlQuery, *args, **kwargs)
        if is_write(sqlQuery) and not getattr(_State.uncounted, "on", False):
            _after_write(statement_label(sqlQuery))
        return result

    SparkSession.sql = sql
    for method in ("append", "overwrite", "overwritePartitions", "create", "createOrReplace", "replace"):
        original = getattr(DataFrameWriterV2, method)

        def wrapped(self, *args, __original=original, __name=method, **kwargs):
            result = __original(self, *args, **kwargs)
            _after_write(f"writeTo.{__name} {getattr(self, '_table', '')}".strip())
            return result

        setattr(DataFrameWriterV2, method, wrapped)
    _State.installed = True


def install_from_env() -> None:
    """Honour QREPL_FAULT (see the module docstring); a malformed value is one clear error."""
    spec = os.environ.get(ENV, "")
    if not spec:
        return
    mode, _, arg = spec.partition(":")
    install()
    if mode == "count" and arg:
        _State.count_file = arg
    elif mode in ("kill", "raise") and arg.isdigit() and int(arg) > 0:
        _State.writes = 0
        _State.armed_at = int(arg)
        _State.action = kill_process_group if mode == "kill" else raise_fault
    else:
        raise ValueError(f"{ENV} must be count:FILE, kill:K or raise:K (K >= 1), got {spec!r}")
