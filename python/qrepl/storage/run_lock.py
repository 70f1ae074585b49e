"""The queue reader's run lock, seen from the Python layer.

The lock itself is taken by the dbt project (`macros/lock/`, in `on-run-start`), so it holds
for `qrepl run`, `qrepl dbt run` and a plain `dbt run --target thrift` alike: it is the table
`<schema>.qrepl_run_lock`, whose properties name the holder and whose one row is its lease:
the holder's `token`, a renewal counter `renewals`, the time `renewed_at` and `lease_seconds`.

A holder is judged dead only by its lease, and only on the judge's own clock
(`lease_watch.LeaseWatch`): its lease row stayed unchanged for `lease_seconds` while the
judge watched. `renewed_at` is written by the holder's clock, which may differ from the
judge's, so a lease that reads expired by it is only worth watching. (Not by its process id
either: a live reader in another container may have the same host name and a pid that does
not exist here.) `qrepl run` renews its lease from a thread while it runs (`LeaseKeeper`), in
a Spark scheduler pool of its own so that a long stage of the run does not queue it; a plain
`dbt run` renews its own at each model it runs (`macros/lock/qrepl_renew_run_lock.sql`), with
a lease of QREPL_PLAIN_RUN_LEASE_SECONDS (default 900).

Removing a lock is a compare-and-delete on the exact holder (`claim_and_drop`): one Iceberg
MERGE replaces that row's token by a claim token, matching the judged token and renewal
count; the MERGE commits only against the row it read (a renewal or a concurrent claim in
between makes it match nothing or fail its commit), and only the process that reads its own
claim token back drops the table. Two processes recovering one dead lock therefore cannot
drop a lock one of them took meanwhile, and a run releasing its own lock (`release_if_mine`
after `qrepl run`'s lease keeper stopped; the macro's own MERGE in a plain run) never drops a
lock another run took after its own was removed.
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
_own_claims: set[str] = set()  # claim tokens this process wrote (release_if_mine finishes its own)


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
        """The lease reads expired by `renewed_at`, the holder's clock against the judge's: a hint
        to watch it (lease_watch), never enough to judge the holder dead. A lock without a
        lease never expires."""
        return (
            self.lease_seconds is not None
            and self.lease_age_seconds is not None
            and self.lease_age_seconds > self.lease_seconds
        )

    def lease_text(self) -> str:
        if self.lease_seconds is None:
            return "no lease: a lock taken before plain runs had one"
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
        holder = LockHolder(
            props.get("qrepl.holder", "unknown holder"),
            props.get("qrepl.acquired_at", "unknown time"),
            props.get("qrepl.invocation_id", ""),
        )
        if "token" not in lock.columns:  # a lock taken before leases existed: no lease
            return holder
        rows = wh.spark.sql(
            f"select token, renewals, renewed_at, lease_seconds, "
            f"unix_micros(current_timestamp()) / 1e6 - unix_micros(renewed_at) / 1e6 as lease_age_seconds "
            f"from {wh.table(LOCK_TABLE)}"
        ).collect()
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
    _own_claims.add(claim)
    view = wh._temp_view([(judged.token, judged.renewals, claim)], "token STRING, renewals BIGINT, claim STRING")
    try:
        wh.spark.sql(
            f"merge into {wh.table(LOCK_TABLE)} as lock using {view} as judged "
            f"on lock.token = judged.token and lock.renewals = judged.renewals "
            f"when matched then update set lock.token = judged.claim, lock.renewals = lock.renewals + 1, "
            f"lock.renewed_at = current_timestamp()"
        )
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
    wh.spark.sql(
        f"merge into {wh.table(LOCK_TABLE)} as lock using {view} as mine on lock.token = mine.token "
        f"when matched then update set lock.renewals = lock.renewals + 1, "
        f"lock.renewed_at = current_timestamp()"
    )
    holder = current_holder(wh)
    return holder is not None and holder.token == token


LEASE_POOL = "qrepl_run_lock_lease"


class LeaseKeeper:
    """Renews the lease of the run lock `token` every lease/4 seconds while `qrepl run`
    runs dbt in this process (a daemon thread; errors are kept, never raised into the run).
    Its Spark jobs run in a scheduler pool of their own (LEASE_POOL; the session schedules
    FAIR, spark.py), so a renewal gets a task slot as soon as one frees instead of queueing
    behind every task of a long stage of the run.

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

        self.wh.spark.sparkContext.setLocalProperty("spark.scheduler.pool", LEASE_POOL)
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


def release(
    wh: Warehouse, force: bool = False, poll_seconds: float = 5.0, echo: Callable[[str], None] = lambda _: None
) -> LockHolder | None:
    """`qrepl unlock`: remove the lock if its holder is gone, judged by its lease. A lock whose
    lease reads live is refused (RunLocked) unless `force`; one that reads expired is watched
    for its lease on this process's clock first (a holder whose clock is behind renews it, and
    is refused too); a lock without a lease (taken before plain runs had one) is removed.
    Either way it is a compare-and-delete on the holder read, so a lock taken meanwhile by
    another run is never removed. Returns the holder removed."""
    holder = current_holder(wh)
    if holder is None:
        return None
    if holder.lease_seconds is not None and not force:
        if holder.expired:
            echo(
                f"watching the lease of {holder.holder} for {holder.lease_seconds} s: it is removed if nothing "
                f"renews it meanwhile (`qrepl unlock --force` removes it now)"
            )
            holder = watch_until_dead(wh, holder, poll_seconds)
        if holder is None or not holder.expired:
            live = holder or current_holder(wh)
            if live is None:
                return None
            raise RunLocked(
                f"the run lock of schema {wh.schema} is held by a live queue reader ({live.holder}, since "
                f"{live.acquired_at}, {live.lease_text()}); it is released when that run ends, or once its "
                f"lease expires if the process died; `qrepl unlock --force` removes it anyway"
            )
    from .spark import METASTORE_LOCK_TIMEOUT_SECONDS, expire_abandoned_locks

    if expire_abandoned_locks(wh.spark, wh.schema, LOCK_TABLE):  # as in recover_dead_lock
        raise RunLocked(
            f"the metastore still holds a lock on {wh.table(LOCK_TABLE)}: a process committing to it, or "
            f"one that died inside that commit, whose lock is removed {METASTORE_LOCK_TIMEOUT_SECONDS} s "
            f"after its last heartbeat; try again then"
        )
    if not claim_and_drop(wh, holder):
        raise RunLocked(
            f"the run lock of schema {wh.schema} changed hands while it was being removed; "
            f"run `qrepl status` to see who holds it now"
        )
    return holder


def release_if_mine(wh: Warehouse, token: str | None = None) -> LockHolder | None:
    """Remove the lock if this process's run holds it (`token`, else QREPL_RUN_TOKEN): after
    `qrepl run`'s dbt returned and its lease keeper stopped (the project's on-run-end leaves
    the lock of a run with a lease keeper to it, as two MERGEs on the lock's row at once make
    one fail its commit), and after a failed run. A run in another process is never touched:
    a compare-and-delete on this run's token, or on a claim this process wrote (a release that
    failed between its claim and its drop)."""
    token = token or os.environ.get(TOKEN_ENV)
    holder = current_holder(wh)
    if holder is None or not token or (holder.token != token and holder.token not in _own_claims):
        return None
    return holder if claim_and_drop(wh, holder) else None


def watch_until_dead(wh: Warehouse, holder: LockHolder, poll_seconds: float = 5.0) -> LockHolder | None:
    """Watch `holder`'s lease row on this process's clock: the holder (re-read) once it stayed
    unchanged for its lease_seconds, None as soon as it changes (renewed, released, taken)."""
    from .lease_watch import LeaseWatch

    watch = LeaseWatch()
    watch.observe(holder)
    while True:
        time.sleep(min(poll_seconds, max(watch.remaining(holder), 0.05)))
        now = current_holder(wh)
        if now is None or not watch.observe(now):
            return None
        if watch.dead(now):
            return now


def _recover(wh: Warehouse, holder: LockHolder) -> bool:
    """Claim and drop the lock of `holder`, judged dead; False if the metastore still holds a
    commit lock on the lock table or another process changed or recovered it first."""
    # a holder killed while its lease keeper was committing a renewal left the metastore's lock
    # on the lock table: the claim would wait for it and fail. Until that lock is old enough to
    # be removed (METASTORE_LOCK_TIMEOUT_SECONDS) the dead lock is not recovered yet
    from .spark import expire_abandoned_locks

    if expire_abandoned_locks(wh.spark, wh.schema, LOCK_TABLE):
        return False
    return claim_and_drop(wh, holder)


def recover_dead_lock(wh: Warehouse, poll_seconds: float = 5.0) -> LockHolder | None:
    """Remove a lock whose holder is dead: its lease reads expired, and its lease row then
    stays unchanged for its lease_seconds on this process's clock. Returns it (None if there is
    none, its lease reads live, it has no lease, it was renewed while watched, or another
    process recovered or took it first)."""
    holder = current_holder(wh)
    if holder is None or not holder.expired:
        return None
    dead = watch_until_dead(wh, holder, poll_seconds)
    return dead if dead is not None and _recover(wh, dead) else None


def wait_until_free(wh: Warehouse, wait_seconds: float, echo: Callable[[str], None], poll_seconds: float = 5.0) -> None:
    """Return once nobody holds the lock (recovering a dead holder's), or raise RunLocked
    naming the holder after `wait_seconds` (0: check once). A holder is dead once its lease row
    stayed unchanged for its lease_seconds while this process watched; a lease that reads
    expired (by the holder's clock) is watched that long even past `wait_seconds`."""
    from .lease_watch import LeaseWatch
    from .spark import remove_abandoned_locks

    # the metastore's locks are per table and global to it: this also removes those a process
    # killed inside a commit left on the article tables, the queue or a replica, which the
    # run's own commits would otherwise wait on, then fail
    remove_abandoned_locks(wh.spark)
    deadline = time.monotonic() + wait_seconds
    watch = LeaseWatch()
    announced, watched_until = False, 0.0
    while True:
        holder = current_holder(wh)
        if holder is None:
            return
        if watch.dead(holder):
            if _recover(wh, holder):
                echo(
                    f"recovered the run lock left by a dead process ({holder.holder}, since {holder.acquired_at}; "
                    f"not renewed for {watch.unchanged_for():.0f} s, its lease is {holder.lease_seconds} s)"
                )
                continue
        if holder.expired and not watched_until:  # worth watching for one lease, even past the deadline
            watched_until = time.monotonic() + watch.remaining(holder)
        limit = max(deadline, watched_until)
        if time.monotonic() >= limit:
            if holder.lease_seconds is None:
                hint = f"or if that process is dead run `qrepl unlock --schema {wh.schema}`"
            else:
                hint = (
                    f"if that process is dead its lease expires once it stays unrenewed for {holder.lease_seconds} s "
                    f"and the lock is then recovered (qrepl run --wait {holder.lease_seconds * 2})"
                )
            raise RunLocked(
                f"the queue reader of schema {wh.schema} is already running ({holder.holder}, since "
                f"{holder.acquired_at}); wait for it (qrepl run --wait SECONDS), {hint}"
            )
        if not announced:
            echo(f"waiting for the queue reader that holds the lock ({holder.holder}) ...")
            announced = True
        time.sleep(min(poll_seconds, max(limit - time.monotonic(), 0.1)))
