"""The soak's oracle (python/tests/e2e/soak_check.py): is every write of a publisher job either
still in the table or replaced by someone entitled to replace it? Pure Python over what the soak
recorded, so that it has unit tests of its own (python/tests/unit/test_soak_oracle.py).

Inputs, all plain data:

* `history`: per article, the publisher table's states in commit order, one per snapshot of its
  current lineage: `(snapshot_id, {key: (value, version)})`. `value` is the column every writer
  of the soak sets; a key missing from a state is an absent row.
* `job_writes`: `(article, key, value)` of every UPDATE the job committed; each value is unique.
* `commands`: what subscribers wrote, by the version they gave the row: `new_version ->
  {"article", "key", "old_value", "old_version", "tran_id"}` (a queued or an immediate command's
  before image and the version it read).
* `resolves`: `written_version -> conflict_id` of every conflict resolved by hand (keep
  subscriber) that wrote a row (conflict_reviews).
* `conflicts`: `conflict_id -> {"article", "key", "publisher_value", "publisher_version",
  "new_version", "winner"}` (the conflicts mart; publisher_value None when the conflict met no
  row).

A job write W of row k, value v, is kept when, after the last snapshot in which k holds v:

* there is none (W is in the final table), or
* (a) the row's next value is a later job write, or
* (b) the row's next state was written by a command or a hand resolution whose author had seen W:
  the command's before image holds v and the version it read is one W's row carried (the
  version the job kept, or one qrepl's trigger stamped onto W); a resolution's conflict
  recorded W (value v, such a version) as the publisher row it compared against, or
* (c) a conflict was logged for k that names W (value v, a version W's row carried) as the
  publisher row a winning subscriber's change met (subscriber_wins). That change need not be
  the one whose row the next snapshot shows: a batch folds the commands of a row into one
  write, and a later command of the batch may leave the row.

Anything else is a lost write: `check` returns one `Loss` per such write, with the snapshots.
The last appearance is the one judged: a value that disappears and comes back (an immediate
commit put back after a refused MERGE) was not lost in between.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

State = dict[Any, tuple[Any, Any]]


@dataclass(frozen=True)
class Loss:
    article: str
    key: Any
    value: Any
    written_in: int | None  # the first snapshot holding the job's value (None: never seen)
    last_seen_in: int | None
    replaced_in: int | None  # the snapshot whose row no longer holds it
    replaced_by: tuple[Any, Any] | None  # (value, version) that took its place, None: row absent
    why: str

    def __str__(self) -> str:
        return (
            f"LOST job write {self.article}[{self.key}] = {self.value!r}: written in snapshot {self.written_in}, "
            f"last seen in {self.last_seen_in}, replaced in {self.replaced_in} by {self.replaced_by}: {self.why}"
        )


@dataclass
class Verdict:
    losses: list[Loss]
    present: int = 0
    by_job: int = 0
    by_seen_command: int = 0
    by_resolve: int = 0
    by_conflict: int = 0

    def summary(self) -> dict[str, int]:
        return {
            "present": self.present,
            "replaced_by_a_later_job_write": self.by_job,
            "replaced_by_a_change_that_saw_it": self.by_seen_command,
            "replaced_by_a_hand_resolution_that_saw_it": self.by_resolve,
            "replaced_with_a_logged_conflict": self.by_conflict,
            "lost": len(self.losses),
        }


def check(
    history: dict[str, list[tuple[int, State]]],
    job_writes: list[tuple[str, Any, Any]],
    commands: dict[Any, dict],
    resolves: dict[Any, str],
    conflicts: dict[str, dict],
) -> Verdict:
    verdict = Verdict(losses=[])
    job_values = {(article, key): set() for article, key, _ in job_writes}
    for article, key, value in job_writes:
        job_values[(article, key)].add(value)
    for article, key, value in job_writes:
        states = history.get(article, [])
        seen = [i for i, (_, rows) in enumerate(states) if key in rows and rows[key][0] == value]
        if not seen:
            verdict.losses.append(
                Loss(
                    article,
                    key,
                    value,
                    None,
                    None,
                    None,
                    None,
                    "the committed write is in no snapshot of the table's history",
                )
            )
            continue
        first, last = seen[0], seen[-1]
        if last == len(states) - 1:
            verdict.present += 1
            continue
        carried = {states[i][1][key][1] for i in seen}  # the versions W's row carried
        replaced_sid, after = states[last + 1]
        replacement = after.get(key)
        loss = Loss(article, key, value, states[first][0], states[last][0], replaced_sid, replacement, "")
        if replacement is None:
            verdict.losses.append(_why(loss, "the row was deleted, and no delete was made by anyone"))
            continue
        new_value, new_version = replacement
        if new_value in job_values.get((article, key), ()):
            verdict.by_job += 1
            continue
        command = commands.get(new_version)
        if command is not None and (command["article"], command["key"]) == (article, key):
            if command["old_value"] == value and command["old_version"] in carried:
                verdict.by_seen_command += 1
                continue
        conflict_id = resolves.get(new_version)
        if conflict_id is not None:
            c = conflicts.get(conflict_id, {})
            if (
                (c.get("article"), c.get("key")) == (article, key)
                and c.get("publisher_value") == value
                and c.get("publisher_version") in carried
            ):
                verdict.by_resolve += 1
                continue
            verdict.losses.append(
                _why(
                    loss,
                    f"written by the hand resolution of conflict {conflict_id}, which "
                    f"compared against {c.get('publisher_value')!r} "
                    f"(version {c.get('publisher_version')}), not this write",
                )
            )
            continue
        # the conflict's own command need not be the one whose row the snapshot shows: a batch
        # folds every command of a row into one write, the first may have met W and a later
        # one (a conflict with the first's row, or none) leaves the row
        logged = [
            cid
            for cid, c in conflicts.items()
            if (c["article"], c["key"]) == (article, key)
            and c["publisher_value"] == value
            and c["publisher_version"] in carried
            and c.get("winner", "subscriber") == "subscriber"
        ]
        if logged:
            verdict.by_conflict += 1
            continue
        if command is not None:
            verdict.losses.append(
                _why(
                    loss,
                    f"written by {command['tran_id']}, whose before image held "
                    f"{command['old_value']!r} at version {command['old_version']} "
                    f"(this write's row carried {sorted(map(str, carried))}), "
                    "and no conflict names this write",
                )
            )
        else:
            verdict.losses.append(
                _why(
                    loss,
                    "written by no known writer (no job write, command or hand "
                    "resolution gave that value and version), and no conflict",
                )
            )
    return verdict


def _why(loss: Loss, why: str) -> Loss:
    return Loss(
        loss.article, loss.key, loss.value, loss.written_in, loss.last_seen_in, loss.replaced_in, loss.replaced_by, why
    )
