"""The queue reader's run lock, seen from the Python layer.

The lock itself is taken and released by the dbt project (`macros/qrepl_run_lock.sql`, in
`on-run-start` / `on-run-end`), so it holds for `qrepl run`, `qrepl dbt run` and a plain
`dbt run --target thrift` alike: it is the table `<schema>.qrepl_run_lock`, whose properties
name the holder. A process killed mid-run leaves it behind; this module reads it, recovers
it when its holder was a `qrepl` process on this host that no longer exists, waits for it,
and removes it on request (`qrepl unlock`).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from typing import Callable

from .warehouse import Warehouse

LOCK_TABLE = "qrepl_run_lock"


class RunLocked(RuntimeError):
    """Another queue reader holds the publication's run lock."""


@dataclass
class LockHolder:
    holder: str
    acquired_at: str
    invocation_id: str

    @property
    def pid_on_this_host(self) -> int | None:
        """The holder's process id when it is a qrepl process on this host."""
        fields = dict(part.split("=", 1) for part in self.holder.split() if "=" in part)
        if fields.get("host") != socket.gethostname() or not fields.get("pid", "").isdigit():
            return None
        return int(fields["pid"])


def holder_text() -> str:
    """How `qrepl run` names itself in the lock (read by the dbt macro as QREPL_RUN_HOLDER)."""
    return f"qrepl run pid={os.getpid()} host={socket.gethostname()}"


def current_holder(wh: Warehouse) -> LockHolder | None:
    if not wh.exists(LOCK_TABLE):
        return None
    props = {r[0]: r[1] for r in wh.spark.sql(f"show tblproperties {wh.table(LOCK_TABLE)}").collect()}
    return LockHolder(props.get("qrepl.holder", "unknown holder"), props.get("qrepl.acquired_at", "unknown time"),
                      props.get("qrepl.invocation_id", ""))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def release(wh: Warehouse) -> LockHolder | None:
    """Remove the lock whoever holds it; returns the holder it named (None if unlocked)."""
    holder = current_holder(wh)
    if holder is not None:
        wh.spark.sql(f"drop table if exists {wh.table(LOCK_TABLE)} purge")
    return holder


def release_if_mine(wh: Warehouse) -> LockHolder | None:
    """Remove the lock if this process holds it, after its run failed. dbt skips `on-run-end`
    when `on-run-start` fails after the lock was taken, and a process that goes on (a
    scheduler, a service) must not lock itself out; a run in another process is never touched."""
    holder = current_holder(wh)
    if holder is None or holder.holder != holder_text():
        return None
    return release(wh)


def recover_dead_lock(wh: Warehouse) -> LockHolder | None:
    """Remove a lock whose holder was a qrepl process on this host that has died; returns it."""
    holder = current_holder(wh)
    if holder is None or holder.pid_on_this_host is None or _alive(holder.pid_on_this_host):
        return None
    return release(wh)


def wait_until_free(wh: Warehouse, wait_seconds: float, echo: Callable[[str], None],
                    poll_seconds: float = 5.0) -> None:
    """Return once nobody holds the lock (recovering a dead holder's), or raise RunLocked
    naming the holder after `wait_seconds` (0: check once)."""
    deadline = time.monotonic() + wait_seconds
    announced = False
    while True:
        recovered = recover_dead_lock(wh)
        if recovered is not None:
            echo(f"recovered the run lock left by a dead process ({recovered.holder}, since {recovered.acquired_at})")
        holder = current_holder(wh)
        if holder is None:
            return
        if time.monotonic() >= deadline:
            raise RunLocked(
                f"the queue reader of schema {wh.schema} is already running ({holder.holder}, since "
                f"{holder.acquired_at}); wait for it (qrepl run --wait SECONDS), or if that process is dead "
                f"run `qrepl unlock --schema {wh.schema}`")
        if not announced:
            echo(f"waiting for the queue reader that holds the lock ({holder.holder}) ...")
            announced = True
        time.sleep(min(poll_seconds, max(deadline - time.monotonic(), 0.1)))
