"""When the run lock's holder is dead: judged on the judge's own clock, never by comparing
two hosts' clocks.

The holder's lease row carries the time of its last renewal (`renewed_at`), written by the
holder's clock. The judge's clock may differ from it (hosts whose clocks disagree, a clock
that steps), so that time is only a hint: a lease whose `renewed_at` reads older than
`lease_seconds` is worth watching, nothing more. A holder is dead when the judge has seen its
lease row unchanged (same token, same renewal count) for `lease_seconds` of the judge's own
monotonic clock: a live holder renews every lease/4 seconds, whatever its clock says.
"""

from __future__ import annotations

import time
from typing import Callable


def lease_key(holder) -> tuple:
    """What a renewal (or another process's claim, or a new lock) changes."""
    return (holder.invocation_id, holder.acquired_at, holder.token, holder.renewals, holder.lease_seconds)


class LeaseWatch:
    """Watches one lock's lease row on this process's monotonic clock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._key: tuple | None = None
        self._since = 0.0

    def observe(self, holder) -> bool:
        """Record what the lease row holds now; True when it is what was seen before."""
        key, now = lease_key(holder), self._clock()
        if key != self._key:
            self._key, self._since = key, now
            return False
        return True

    def unchanged_for(self) -> float:
        return self._clock() - self._since if self._key is not None else 0.0

    def dead(self, holder) -> bool:
        """Observe `holder`; True when its lease row stayed unchanged for its lease_seconds (a
        lock without a lease never dies: nothing renews it, so nothing tells)."""
        self.observe(holder)
        return holder.lease_seconds is not None and self.unchanged_for() >= holder.lease_seconds

    def remaining(self, holder) -> float:
        """Seconds of watching left before `holder` (as last observed) is judged dead."""
        if holder.lease_seconds is None:
            return float("inf")
        return max(holder.lease_seconds - self.unchanged_for(), 0.0)
