"""dbt invoked in-process (docs/stack.md §2): dbt-spark's session method reuses our SparkSession."""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from datetime import datetime

from .run_lock import RUN_LEASE_ENV, TOKEN_ENV, LeaseKeeper, holder_text, lease_seconds, new_token, release_if_mine
from .spark import PROJECT_DIR, WORK_DIR, get_spark
from .warehouse import Warehouse


class DbtError(RuntimeError):
    pass


# Iceberg's verdict when another writer committed to the table between this write's read and
# its commit (docs/reliability.md): the write is safe to make again, from a fresh read
_LOST_COMMIT = re.compile(r"ValidationException|CommitFailedException|conflicted with another concurrent")
COMMIT_ATTEMPTS = 3
_FRAME = re.compile(r"^(at |\.\.\. \d+ more$)")
_EXCEPTION = re.compile(r"(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*(?:Exception|Error)\b")


def lost_to_a_concurrent_commit(exc: BaseException) -> bool:
    """The error is a commit that lost to another writer's (made again, it reads afresh)."""
    return bool(_LOST_COMMIT.search(str(exc)))


def _error_line(lines: list[str]) -> str:
    """The line of an error text that says why: its last line, unless that is a frame of a JVM
    stack; then Iceberg's own exception, else the first exception named, else the last line
    that is not a frame."""
    if not lines or not _FRAME.match(lines[-1]):
        return lines[-1] if lines else ""
    body = [line for line in lines if not _FRAME.match(line)]
    for wanted in (lambda line: "org.apache.iceberg.exceptions." in line, lambda line: bool(_EXCEPTION.search(line))):
        found = [line for line in body if wanted(line)]
        if found:
            return found[0]
    return body[-1] if body else lines[-1]


def _model_progress(progress):
    """A dbt event callback: one line per finished model ('[3/12] int_batch_transactions OK (1.2 s)')
    and the macros' own `qrepl: ...` log lines."""

    def callback(event) -> None:
        if event.info.name == "JinjaLogInfo" and event.data.msg.startswith("qrepl: "):
            progress("    " + event.data.msg[len("qrepl: ") :])
        if event.info.name == "LogModelResult":
            data = event.data
            name = data.node_info.node_name if data.node_info else data.description
            progress(f"  [{data.index}/{data.total}] {name} {data.status} ({data.execution_time:.1f} s)")

    return callback


def _failure_detail(res) -> str:
    """One line saying why a dbt invocation failed: the project's own `qrepl: ...` message
    when there is one (e.g. the run lock's), else the failed node and the last line of its error."""
    messages = []
    if res.exception is not None:
        messages.append(("", str(res.exception) or repr(res.exception)))
    try:
        results = list(res.result or []) if not isinstance(res.result, (str, bytes)) else []
    except TypeError:  # a result that is not a list of node results (parse, docs)
        results = []
    for r in results:
        if getattr(r, "status", None) not in ("success", "pass", None):
            node = getattr(getattr(r, "node", None), "name", None) or getattr(r, "unique_id", "") or ""
            messages.append((node, str(getattr(r, "message", None) or getattr(r, "status", ""))))
    for node, text in messages:
        for line in text.splitlines():
            if line.strip().startswith("qrepl: "):
                return line.strip()[len("qrepl: ") :]
    for node, text in messages:
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        if lines:
            return f"{node}: {_error_line(lines)}" if node else _error_line(lines)
    return ""


def dbt_invoke(
    args: list[str], schema: str, quiet: bool = True, extra_vars: dict | None = None, progress=None
) -> object:
    """Run one dbt command on the embedded `local` target against `schema`; `progress`, if
    given, receives the lines of `_model_progress`. The schema reaches the profile through
    QREPL_SCHEMA for this call only: the process's environment is as it was afterwards, so
    a later call (or `service.warehouse(None)`) never inherits this one's schema."""
    get_spark()  # the session dbt-spark's getOrCreate() will return
    from dbt.cli.main import dbtRunner

    cmd = list(args) + ["--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR)]
    if extra_vars:
        cmd += ["--vars", json.dumps(extra_vars)]
    if quiet:
        cmd = ["--quiet", "--log-format", "text"] + cmd
    errors: list[str] = []

    def operation_errors(event) -> None:
        """A run-operation's error reaches no result, only this event: keep its text."""
        if event.info.name in ("RunningOperationCaughtError", "RunningOperationUncaughtError"):
            errors.append(str(event.data.exc))

    callbacks = [operation_errors] + ([_model_progress(progress)] if progress else [])
    with _dbt_environment(schema):
        res = dbtRunner(callbacks=callbacks).invoke(cmd)
    if not res.success:
        detail = _operation_detail(errors) or _failure_detail(res)
        raise DbtError(f"dbt {args[0]} failed{': ' + detail if detail else ''}")
    return res


@contextmanager
def _dbt_environment(schema: str):
    """The variables profiles.yml and dbt read, set for one dbt call and restored after it."""
    settings = {
        "QREPL_SCHEMA": schema,
        # the profile's output for dbt in this process, on the session get_spark built (profiles.yml)
        "QREPL_TARGET": os.environ.get("QREPL_TARGET", "in_process"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": os.environ.get("DBT_SEND_ANONYMOUS_USAGE_STATS", "false"),
        "DBT_TARGET_PATH": os.environ.get(
            "DBT_TARGET_PATH", str(WORK_DIR / "target")
        ),  # the project's own target/ in a checkout
        "DBT_LOG_PATH": os.environ.get("DBT_LOG_PATH", str(WORK_DIR / "logs")),
    }
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _operation_detail(errors: list[str]) -> str:
    """The project's own `qrepl: ...` line of a failed run-operation, else the last line of
    its error."""
    for text in errors:
        for line in text.splitlines():
            if line.strip().startswith("qrepl: "):
                return line.strip()[len("qrepl: ") :]
    lines = [line.strip() for text in errors for line in text.splitlines() if line.strip()]
    return _error_line(lines)


def run_queue_reader(schema: str, batch_time: datetime | None = None, quiet: bool = True, progress=None) -> object:
    """One queue-reader run: `dbt run` of the whole project. The run lock the project takes
    carries this run's token and a lease (QREPL_RUN_LOCK_LEASE_SECONDS, default 120 s), which a
    thread of this process renews until dbt returns (run_lock.LeaseKeeper); the lock is then
    released here, once nothing renews it (the project's on-run-end leaves it to this process)."""
    token, lease = new_token(), lease_seconds()
    os.environ["QREPL_BATCH_TIME"] = batch_time.strftime("%Y-%m-%d %H:%M:%S.%f") if batch_time else ""
    os.environ["QREPL_RUN_HOLDER"] = holder_text()  # names this process in the run lock
    os.environ[TOKEN_ENV] = token  # the lock row's token: what the lease keeper renews
    os.environ[RUN_LEASE_ENV] = str(lease)  # only while it runs: a lock nothing renews has no lease
    try:
        with LeaseKeeper(Warehouse(get_spark(), schema), token, lease):
            result = dbt_invoke(["run"], schema, quiet=quiet, progress=progress)
        release_if_mine(Warehouse(get_spark(), schema), token)
        return result
    except Exception:
        _release_own_lock(schema, token)
        raise
    finally:
        for name in ("QREPL_BATCH_TIME", "QREPL_RUN_HOLDER", TOKEN_ENV, RUN_LEASE_ENV):
            os.environ.pop(name, None)


IDLE_MESSAGE = "NOTHING TO DO"  # macros/materializations/incremental_spark.sql, on a run with nothing to do


def run_was_idle(result) -> bool:
    """Whether the reader run `result` (run_queue_reader's) had nothing to do (macro
    qrepl_run_is_idle): it took no lock and wrote nothing, not even a history row."""
    return any(r.node.name == "queue_reader_history" and r.message == IDLE_MESSAGE for r in result.result.results)


def stamp_publisher(wh) -> None:
    """The publisher's trigger (macros/stamp/qrepl_stamp_publisher.sql): every publisher row
    a writer changed without a new msrepl_tran_version gets one. The queue reader runs it at
    the start of every run; distribution, maintenance, immediate updating and `publication
    create` run it here, through `dbt run-operation`, when an article of the Warehouse `wh`
    has a commit the last stamp did not examine (nothing is started otherwise)."""
    stamped = wh.last_stamps()
    # 0 stands for "before the table's first snapshot" (the macro records it for a new table)
    if all((wh.article_snapshot(a) or 0) == stamped.get(a.name) for a in wh.require_publication().articles):
        return
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        try:
            dbt_invoke(["run-operation", "qrepl_stamp_publisher"], wh.schema)
            return
        except DbtError as exc:  # a job committed between the stamp's read and its MERGE: examine again
            if attempt == COMMIT_ATTEMPTS or not lost_to_a_concurrent_commit(exc):
                raise


def _release_own_lock(schema: str, token: str) -> None:
    """After a failed run: this process's own run lock, if dbt left it behind (best effort; the
    run's own error is what the caller sees)."""
    try:
        release_if_mine(Warehouse(get_spark(), schema), token)
    except Exception:  # noqa: BLE001 - a second failure must not hide the first
        pass
