"""The queue reader's run lock, seen from the Python layer.

The lock itself is taken and released by the dbt project (`macros/lock/`, in
`on-run-start` / `on-run-end`), so it holds for `qrepl run`, `qrepl dbt run` and a plain
`dbt run --target thrift` alike: it is the table `<schema>.qrepl_run_lock`, whose properties
name the holder and whose one row is its lease: the holder's `token`, a renewal counter
`renewals`, the time `renewed_at` and `lease_seconds`.

A holder is judged dead only by its lease: `qrepl run` renews it from a thread while it runs
(`LeaseKeeper`), and a lease not renewed for `lease_seconds` has expired. (Not by its process
id: a live reader in another container may have the same host name and a pid that does not
exist here.) A plain `dbt run` writes no lease (`lease_seconds` null): nothing renews it, so it
never expires and only `qrepl unlock` removes it.

Removing a lock someone else took is a compare-and-delete on the exact holder judged dead
(`claim_and_drop`): one Iceberg MERGE replaces that row's token by a claim token, matching the
judged token and renewal count; the MERGE commits only against the row it read (a renewal or a
concurrent claim in between makes it match nothing or fail its commit), and only the process
that reads its own claim token back drops the table. Two processes recovering one dead lock
therefore cannot drop a lock one of them took meanwhile.
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable

from .warehouse import Warehouse

LOCK_TABLE = "qrepl_run_lock"
LEASE_ENV = "QREPL_RUN_LOCK_LEASE_SECONDS"  # the user's setting
RUN_LEASE_ENV = "QREPL_RUN_LEASE"  # set by `qrepl run` only while its lease keeper runs; read by the macro
TOKEN_ENV = "QREPL_RUN_TOKEN"
DEFAULT_LEASE_SECONDS = 120
TOKEN_TEXT = re.compile(r"[0-9a-f]{32}")
_claims = itertools.count(1)


class RunLocked(RuntimeError):
    """Another queue reader holds the publication's run lock."""


@dataclass
class LockHolder:
    holder: str
    acquired_at: str
    invocation_id: str
    token: str | None = None
    renewals: int | None = None
    renewed_at: object = None
    lease_seconds: int | None = None
    lease_age_seconds: float | None = None

    @property
    def expired(self) -> bool:
        """The holder's lease was not renewed for lease_seconds (a lock without a lease never expires)."""
        return (self.lease_seconds is not None and self.lease_age_seconds is not None
                and self.lease_age_seconds > self.lease_seconds)

    def lease_text(self) -> str:
        if self.lease_seconds is None:
            return "no lease: a plain dbt run"
        return f"lease renewed {self.lease_age_seconds:.0f} s ago, expires after {self.lease_seconds} s"


def holder_text() -> str:
    """How `qrepl run` names itself in the lock (read by the dbt macro as QREPL_RUN_HOLDER)."""
    return f"qrepl run pid={os.getpid()} host={socket.gethostname()}"


def new_token() -> str:
    return uuid.uuid4().hex


def lease_seconds() -> int:
    """The lease `qrepl run` takes: QREPL_RUN_LOCK_LEASE_SECONDS, default 120."""
    text = os.environ.get(LEASE_ENV, "")
    return int(text) if text.isdigit() and int(text) > 0 else DEFAULT_LEASE_SECONDS


def _table_gone(exc: Exception) -> bool:
    text = str(exc)
    return "TABLE_OR_VIEW_NOT_FOUND" in text or "Table or view not found" in text or "NoSuchTable" in text


def current_holder(wh: Warehouse) -> LockHolder | None:
    if not wh.exists(LOCK_TABLE):
        return None
    from pyspark.sql.utils import AnalysisException

    try:
        props = {r[0]: r[1] for r in wh.spark.sql(f"show tblproperties {wh.table(LOCK_TABLE)}").collect()}
        lock = wh.spark.table(wh.table(LOCK_TABLE))
        holder = LockHolder(props.get("qrepl.holder", "unknown holder"), props.get("qrepl.acquired_at", "unknown time"),
                            props.get("qrepl.invocation_id", ""))
        if "token" not in lock.columns:  # a lock taken before leases existed: no lease
            return holder
        rows = wh.spark.sql(
            f"select token, renewals, renewed_at, lease_seconds, "
            f"unix_micros(current_timestamp()) / 1e6 - unix_micros(renewed_at) / 1e6 as lease_age_seconds "
            f"from {wh.table(LOCK_TABLE)}").collect()
    except AnalysisException as exc:  # released between the check and the read
        if _table_gone(exc):
            return None
        raise
    if rows:
        r = rows[0]
        holder.token, holder.renewals, holder.renewed_at = r["token"], r["renewals"], r["renewed_at"]
        holder.lease_seconds, holder.lease_age_seconds = r["lease_seconds"], r["lease_age_seconds"]
    return holder


def claim_and_drop(wh: Warehouse, judged: LockHolder) -> bool:
    """Compare-and-delete: drop the lock only if it is still exactly `judged` (same token, same
    renewal count); True when this call removed it. A lock without a lease row (taken before
    leases existed) has nothing to compare and is dropped as it is."""
    from pyspark.sql.utils import AnalysisException

    if judged.token is None:
        wh.spark.sql(f"drop table if exists {wh.table(LOCK_TABLE)} purge")
        return True
    claim = f"{judged.token}-claimed-{os.getpid()}-{next(_claims)}-{uuid.uuid4().hex[:8]}"
    view = wh._temp_view([(judged.token, judged.renewals, claim)], "token STRING, renewals BIGINT, claim STRING")
    try:
        wh.spark.sql(f"merge into {wh.table(LOCK_TABLE)} as lock using {view} as judged "
                     f"on lock.token = judged.token and lock.renewals = judged.renewals "
                     f"when matched then update set lock.token = judged.claim, lock.renewals = lock.renewals + 1, "
                     f"lock.renewed_at = current_timestamp()")
        mine = [r["token"] for r in wh.spark.table(wh.table(LOCK_TABLE)).select("token").collect()] == [claim]
    except AnalysisException as exc:
        if _table_gone(exc):
            return False
        raise
    except Exception as exc:  # noqa: BLE001 - a concurrent commit on the lock: someone else changed it
        if "CommitFailedException" in str(exc) or "ValidationException" in str(exc):
            return False
        raise
    if mine:
        wh.spark.sql(f"drop table if exists {wh.table(LOCK_TABLE)} purge")
    return mine


def renew(wh: Warehouse, token: str) -> bool:
    """Renew the lease of the lock `token` holds; False if that lock is not there (not taken
    yet, released, or claimed by another process after it expired)."""
    if not TOKEN_TEXT.fullmatch(token) or not wh.exists(LOCK_TABLE):
        return False
    view = wh._temp_view([(token,)], "token STRING")
    wh.spark.sql(f"merge into {wh.table(LOCK_TABLE)} as lock using {view} as mine on lock.token = mine.token "
                 f"when matched then update set lock.renewals = lock.renewals + 1, "
                 f"lock.renewed_at = current_timestamp()")
    holder = current_holder(wh)
    return holder is not None and holder.token == token


class LeaseKeeper:
    """Renews the lease of the run lock `token` every lease/4 seconds while `qrepl run`
    runs dbt in this process (a daemon thread; errors are kept, never raised into the run).

    Each time it also removes the metastore's abandoned table locks (remove_abandoned_locks).
    The run's start removes those old enough then; a lock left by a process killed inside a
    commit less than METASTORE_LOCK_TIMEOUT_SECONDS before the run started is not, and the
    run's commit to that table waits on it (Iceberg waits 3 min per attempt, and fails after
    about 15). Removed here once it is old enough, the waiting commit goes on."""

    def __init__(self, wh: Warehouse, token: str, lease: int) -> None:
        self.wh, self.token, self.interval = wh, token, max(lease / 4, 0.2)
        self.renewals = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="qrepl-run-lock-lease", daemon=True)

    def __enter__(self) -> "LeaseKeeper":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _loop(self) -> None:
        from .faults import uncounted

        with uncounted():
            self._renew_until_stopped()

    def _renew_until_stopped(self) -> None:
        from .spark import remove_abandoned_locks

        while not self._stop.wait(self.interval):
            try:
                if renew(self.wh, self.token):
                    self.renewals += 1
            except Exception as exc:  # noqa: BLE001 - a failed renewal is retried next time
                self.errors.append(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            try:
                remove_abandoned_locks(self.wh.spark)
            except Exception as exc:  # noqa: BLE001 - retried next time, as a renewal is
                self.errors.append(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def release(wh: Warehouse, force: bool = False) -> LockHolder | None:
    """`qrepl unlock`: remove the lock if its holder is gone, judged by its lease. A lock whose
    lease is live is refused (RunLocked) unless `force`; a lock without a lease (a plain dbt run,
    which nothing renews) is removed. Either way it is a compare-and-delete on the holder read,
    so a lock taken meanwhile by another run is never removed. Returns the holder removed."""
    holder = current_holder(wh)
    if holder is None:
        return None
    if holder.lease_seconds is not None and not holder.expired and not force:
        raise RunLocked(
            f"the run lock of schema {wh.schema} is held by a live queue reader ({holder.holder}, since "
            f"{holder.acquired_at}, {holder.lease_text()}); it is released when that run ends, or once its "
            f"lease expires if the process died; `qrepl unlock --force` removes it anyway")
    from .spark import METASTORE_LOCK_TIMEOUT_SECONDS, expire_abandoned_locks

    if expire_abandoned_locks(wh.spark, wh.schema, LOCK_TABLE):  # as in recover_dead_lock
        raise RunLocked(f"the metastore still holds a lock on {wh.table(LOCK_TABLE)}: a process committing to it, or "
                        f"one that died inside that commit, whose lock is removed {METASTORE_LOCK_TIMEOUT_SECONDS} s "
                        f"after its last heartbeat; try again then")
    if not claim_and_drop(wh, holder):
        raise RunLocked(f"the run lock of schema {wh.schema} changed hands while it was being removed; "
                        f"run `qrepl status` to see who holds it now")
    return holder


def release_if_mine(wh: Warehouse, token: str | None = None) -> LockHolder | None:
    """Remove the lock if this process's run holds it (`token`, else QREPL_RUN_TOKEN), after
    its run failed. dbt skips `on-run-end` when `on-run-start` fails after the lock was taken,
    and a process that goes on (a scheduler, a service) must not lock itself out; a run in
    another process is never touched."""
    token = token or os.environ.get(TOKEN_ENV)
    holder = current_holder(wh)
    if holder is None or not token or holder.token != token:
        return None
    return holder if claim_and_drop(wh, holder) else None


def recover_dead_lock(wh: Warehouse) -> LockHolder | None:
    """Remove a lock whose holder's lease has expired; returns it (None if there is none, its
    lease is live, it has no lease, or another process recovered or took it first)."""
    holder = current_holder(wh)
    if holder is None or not holder.expired:
        return None
    # a holder killed while its lease keeper was committing a renewal left the metastore's lock
    # on the lock table: the claim would wait for it and fail. Until that lock is old enough to
    # be removed (METASTORE_LOCK_TIMEOUT_SECONDS) the dead lock is not recovered yet
    from .spark import expire_abandoned_locks

    if expire_abandoned_locks(wh.spark, wh.schema, LOCK_TABLE):
        return None
    return holder if claim_and_drop(wh, holder) else None


def wait_until_free(wh: Warehouse, wait_seconds: float, echo: Callable[[str], None],
                    poll_seconds: float = 5.0) -> None:
    """Return once nobody holds the lock (recovering a dead holder's), or raise RunLocked
    naming the holder after `wait_seconds` (0: check once)."""
    from .spark import remove_abandoned_locks

    # the metastore's locks are per table and global to it: this also removes those a process
    # killed inside a commit left on the article tables, the queue or a replica, which the
    # run's own commits would otherwise wait on and fail (about 15 minutes each)
    remove_abandoned_locks(wh.spark)
    deadline = time.monotonic() + wait_seconds
    announced = False
    while True:
        recovered = recover_dead_lock(wh)
        if recovered is not None:
            echo(f"recovered the run lock left by a dead process ({recovered.holder}, since {recovered.acquired_at}; "
                 f"{recovered.lease_text()})")
        holder = current_holder(wh)
        if holder is None:
            return
        if time.monotonic() >= deadline:
            if holder.lease_seconds is None:
                hint = f"or if that process is dead run `qrepl unlock --schema {wh.schema}`"
            else:
                hint = (f"its lease expires {max(holder.lease_seconds - (holder.lease_age_seconds or 0), 0):.0f} s "
                        f"after its process stops renewing it, and the lock is then recovered")
            raise RunLocked(
                f"the queue reader of schema {wh.schema} is already running ({holder.holder}, since "
                f"{holder.acquired_at}); wait for it (qrepl run --wait SECONDS), {hint}")
        if not announced:
            echo(f"waiting for the queue reader that holds the lock ({holder.holder}) ...")
            announced = True
        time.sleep(min(poll_seconds, max(deadline - time.monotonic(), 0.1)))
