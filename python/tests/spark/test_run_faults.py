"""A queue-reader run that fails after any of its writes, with or without something happening
before the next run, is finished by the next ordinary run exactly as if it had never failed
(docs/spec.md, failure contract).

The real pipeline replays `scenarios/publisher_wins_basic.json`; its first run raises right
after write K (every write the run makes is a fault point: lock, batch cut, frozen decisions,
the resolution's work tables, each mart, the publisher MERGEs, the subscription marks, the
history row). Then an optional event happens, then the next run. The result must equal the
sequential reference of the same scenario with the event placed where the interrupted run
had already fixed it: before the batch if the batch had not yet frozen what the event
changes, after it otherwise.

CI runs a handful of write points (`QREPL_FAULT_POINTS`, default below); `make faults` runs
every write point under every event.
"""

from __future__ import annotations

import functools
import os
from datetime import timedelta
from pathlib import Path

import pytest

from qrepl.storage import faults
from qrepl.storage.dbt_runner import DbtError
from qrepl.tools.replay import ReferenceBackend, SparkBackend, load_scenario, normalized_outputs, play, queue_rows_for
from qrepl.services.service import list_conflicts, remove_conflicts

pytestmark = pytest.mark.spark

PROJECT = Path(__file__).resolve().parents[3]
SCENARIO = PROJECT / "scenarios" / "publisher_wins_basic.json"
SCHEMA = "qrepl_faults"
CRASHED_RUN = 1  # the scenario's first run: a multi-row transaction, conflicts, a quarantine

EVENTS = {
    # what happens between the failure and the next run, and which frozen table decides
    # whether the batch already saw it
    None: (None, None),
    "publisher_write": (
        {
            "publisher_change": {
                "article": "customers",
                "op": "U",
                "row": {"customer_id": 1, "name": "Ada", "city": "Oslo"},
                "new_version": "99000000-0000-4000-8000-000000000001",
            }
        },
        "model.qrepl.int_batch_commands",
    ),
    "enqueue": (
        {
            "enqueue": [
                {
                    "subscriber": "s3",
                    "tran_id": "s3-late",
                    "commands": [
                        {
                            "article": "customers",
                            "op": "U",
                            "row": {"customer_id": 3, "name": "Alan", "city": "Wilmslow"},
                            "old_version": "00000000-0000-4000-8000-000000000003",
                            "new_version": "33000000-0000-4000-8000-000000000003",
                        }
                    ],
                }
            ]
        },
        "model.qrepl.int_batch_commands",
    ),
    "drop_subscription": ({"drop_subscription": {"subscriber": "s3"}}, "model.qrepl.int_batch_subscriptions"),
    "reinitialize": ({"reinitialize": {"subscriber": "s2"}}, "model.qrepl.int_batch_subscriptions"),
    # the user removes every conflict listed, those of the unfinished batch too: a removal is a
    # review (conflict_reviews), so the finishing run neither writes them again nor loses them
    "remove_conflicts": ({"remove_conflicts": {}}, None),
}
POLICY_OF_EVENT = {"reinitialize": "publisher_wins_reinit"}
APPLY_STEP = "model.qrepl.batch_applied"  # the only writes outside the batch's own tables


def _expected(event: str | None, event_after_batch: bool) -> dict:
    """The sequential reference with the event before or after the crashed run; the clock
    steps are compensated so every other step keeps its time."""
    scenario = load_scenario(SCENARIO, POLICY_OF_EVENT.get(event))
    step, _ = EVENTS[event]
    if step is not None and "remove_conflicts" not in step:
        runs = [i for i, s in enumerate(scenario.steps) if "run" in s]
        at = runs[CRASHED_RUN - 1] + (1 if event_after_batch else 0)
        scenario.steps[at:at] = [step, {"advance_clock": {"seconds": -2}}]
    return normalized_outputs(scenario, play(scenario, ReferenceBackend(scenario)))


class InterruptedRun(SparkBackend):
    """The real pipeline whose CRASHED_RUN-th run raises after write `k`; then `event`, then
    the next ordinary run (only if the batch is unfinished, as a scheduler would see it)."""

    def __init__(self, scenario, k: int, event: str | None) -> None:
        super().__init__(scenario, SCHEMA)
        self.k, self.event, self.runs = k, event, 0
        self.labels: list[str] = []
        self.failed = False
        self.untouched_before_apply: bool | None = None  # set when the failure came before the apply step

    def applied_state(self) -> dict:
        """What the run may change only in its apply step: the article tables and the subscriptions."""
        state = {a.name: sorted(map(repr, self.wh.publisher_rows(a.name))) for a in self.scenario.publication.articles}
        state["subscriptions"] = sorted(map(repr, self.wh.rows_of("subscriptions")))
        return state

    def run(self, batch_time) -> None:
        self.runs += 1
        if self.runs != CRASHED_RUN:
            return super().run(batch_time)
        batches_before = len(self.wh.rows_of("queue_reader_history"))
        seen_before = self.applied_state()
        faults.arm(self.k, faults.raise_fault)
        try:
            super().run(batch_time)
        except (DbtError, faults.InjectedFault):
            self.failed = True
        finally:
            faults.disarm()
            self.labels = faults.labels()
        if not any(label.startswith(APPLY_STEP) for label in self.labels):
            # failed before the apply step: nothing a subscriber or publisher reader sees moved
            self.untouched_before_apply = self.applied_state() == seen_before
        step, _ = EVENTS[self.event]
        if step is not None:
            ((kind, body),) = step.items()
            if kind == "publisher_change":
                self.publisher_changes([(body["article"], body["op"], body["row"], body["new_version"])])
            elif kind == "enqueue":
                self.enqueue(queue_rows_for(self.scenario, body, batch_time, {}, self.generation_of))
            elif kind == "drop_subscription":
                self.drop_subscription(body["subscriber"])
            elif kind == "reinitialize":
                self.reinitialize(body["subscriber"])
            elif kind == "remove_conflicts":
                listed = [c["conflict_id"] for c in self.wh.rows_of("conflicts")] if self.wh.exists("conflicts") else []
                self.removed = (listed, remove_conflicts(SCHEMA, listed) if listed else 0)
        if len(self.wh.rows_of("queue_reader_history")) == batches_before:
            super().run(batch_time + timedelta(0))  # the next ordinary run finishes the batch


@functools.lru_cache(maxsize=None)
def _write_labels(policy: str | None) -> tuple[str, ...]:
    """The writes the crashed run makes, uninterrupted, in order (k beyond them never fires)."""
    backend = InterruptedRun(load_scenario(SCENARIO, policy), k=10**9, event=None)
    play(backend.scenario, backend)
    return tuple(backend.labels)


def _points(labels: tuple[str, ...], event: str | None) -> list[int]:
    """Every write point for `make faults` (QREPL_FAULT_POINTS=all); in CI, the points that
    matter most: judging failed (nothing may reach the publisher), and for an event the first
    write of the apply step (decisions frozen, nothing applied yet); for a dropped subscription
    instead the write that froze the batch's subscriptions. Inside the apply step (the first
    publisher MERGE done, the rest must follow once) CI kills instead: test_crash_kill.py."""

    def first(node: str, words: str = "") -> int:
        return next(i for i, label in enumerate(labels, 1) if label.startswith(node) and words in label)

    sweep = os.environ.get("QREPL_FAULT_POINTS", "")
    if sweep == "all" and event is None:
        return list(range(1, len(labels) + 1))
    if sweep == "all" and EVENTS[event][1] is None:  # the batch unfinished, its conflicts written:
        # right after them, at the start of the apply step, and right before the history row
        return [
            first("model.qrepl.conflicts"),
            first("model.qrepl.batch_applied"),
            first("model.qrepl.queue_reader_history") - 1,
        ]
    if sweep == "all":  # an event only matters relative to the write that freezes what it changes
        frozen = first(EVENTS[event][1])
        return sorted(
            {1, frozen - 1, frozen, first("model.qrepl.batch_applied"), first("model.qrepl.queue_reader_history")} - {0}
        )
    if sweep:
        return [int(k) for k in sweep.split(",")]
    if event == "drop_subscription":  # right after the batch froze its subscriptions: a retry that
        # re-read the current ones would shift the batch's positions (the apply-step point is
        # the other events' in CI, and this event's in `make faults`)
        return [first(EVENTS[event][1])]
    if event is not None:
        return [first("model.qrepl.batch_applied")]
    return [first("model.qrepl.int_queued_commands_judged")]


def _check_converged(spark, backend: InterruptedRun, event: str | None) -> None:
    scenario = backend.scenario
    _, frozen_by = EVENTS[event]
    fired = backend.labels[: backend.k]
    after = frozen_by is not None and any(label.startswith(frozen_by + " ") for label in fired)
    actual = normalized_outputs(scenario, backend.outputs())
    expected = _expected(event, after)
    for table in expected:
        assert actual[table] == expected[table], (
            f"{table} differs after a failure at write {backend.k} ({fired[-1] if fired else '-'}), event {event}"
        )
    history = backend.wh.rows_of("queue_reader_history", "batch_id")
    assert [h["batch_id"] for h in history] == list(range(1, len(history) + 1))
    leftovers = [
        t.name
        for t in spark.catalog.listTables(SCHEMA)
        if t.name.startswith("qrepl_resolve_") or t.name == "qrepl_run_lock"
    ]
    assert leftovers == []


CI_EVENTS = [None, "publisher_write", "drop_subscription", "reinitialize"]  # QREPL_FAULT_POINTS set: all of EVENTS
# `make faults` splits the long sweep (every write point, no event) into parts, so its pytest-xdist
# workers share it; each part takes every SWEEP_PARTS-th point
SWEEP_PARTS = max(1, int(os.environ.get("QREPL_SWEEP_PARTS", "1")))
CASES = [
    (event, part)
    for event in (list(EVENTS) if os.environ.get("QREPL_FAULT_POINTS") else CI_EVENTS)
    for part in (range(SWEEP_PARTS) if event is None else [0])
]


@pytest.mark.parametrize("event, part", CASES, ids=[f"{e}-part{p}" for e, p in CASES])
def test_a_failed_run_is_finished_by_the_next_one(spark, event, part):
    labels = _write_labels(POLICY_OF_EVENT.get(event))
    points = _points(labels, event)
    if event is None:
        points = points[part::SWEEP_PARTS]
    assert points, f"no write point for event {event}, part {part}"
    for k in points:
        scenario = load_scenario(SCENARIO, POLICY_OF_EVENT.get(event))
        backend = InterruptedRun(scenario, k, event)
        play(scenario, backend)
        assert backend.failed, f"write {k} of {len(labels)} ({labels[k - 1]}) did not fail the run"
        assert backend.untouched_before_apply is not False, (
            f"a failure at write {k} ({labels[k - 1]}), before the apply step, left publisher tables or "
            f"subscriptions changed"
        )
        _check_converged(spark, backend, event)
        if event == "remove_conflicts":  # each conflict listed then is removed, and stays out of the lists
            listed, removed = backend.removed
            assert removed == len(set(listed)), backend.removed
            assert not {c["conflict_id"] for c in list_conflicts(SCHEMA)} & set(listed)
        print(f"run failed at write {k}/{len(labels)} ({labels[k - 1]}), event {event}: converged", flush=True)
