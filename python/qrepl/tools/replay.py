# over 400 lines: both replay backends beside the scenario parsing, queue rows and output writer they share
"""Scenario replay (docs/spec.md §7): one scenario file through the reference or the real pipeline.

Both modes share the scenario parsing, the queue-row building and the output writer, so the
only difference between `qrepl replay --reference` and `qrepl replay` is who reads the queue.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from ..core.partitions import ColumnLists, Partition, parse_columns, parse_filters, project
from ..core.publication import Publication, publication_from_dict
from ..core.rows import canonical_key, normalize_row
from ..core.values import dumps
from ..core.vocabulary import ConfigError, check_identifier, normalize_policy
from ..core.reference import ReferenceReader

SCENARIO_EPOCH = datetime(2026, 1, 1, 0, 0, 0)
OUTPUT_TABLES = ("conflicts", "compensating_commands", "transaction_outcomes", "subscriptions", "queue_rejects")

# Columns written per output file (docs/spec.md §4 contract columns); row images are parsed JSON.
OUTPUT_COLUMNS = {
    "conflicts": [
        "conflict_id",
        "batch_id",
        "publication",
        "article",
        "row_key",
        "subscriber",
        "tran_id",
        "command_seq",
        "conflict_type",
        "conflict_type_code",
        "reason_text",
        "policy",
        "winner",
        "publisher_row",
        "subscriber_row",
        "publisher_version",
        "old_version",
        "new_version",
        "detected_at",
    ],
    "compensating_commands": ["subscriber", "tran_id", "article", "row_key", "op", "row", "batch_id", "seq"],
    "transaction_outcomes": ["subscriber", "tran_id", "batch_id", "outcome", "policy"],
    "subscriptions": ["subscriber", "publication", "status", "generation", "reinit_requested_at", "reinit_reason"],
    "queue_rejects": [
        "subscriber",
        "generation",
        "tran_id",
        "tran_seq",
        "command_seq",
        "article",
        "op",
        "row_key",
        "old_version",
        "new_version",
        "reason",
        "batch_id",
    ],
}
SORT_KEYS = {
    "conflicts": ("batch_id", "subscriber", "tran_id", "command_seq"),
    "compensating_commands": ("batch_id", "subscriber", "seq"),
    "transaction_outcomes": ("batch_id", "subscriber", "tran_id"),
    "subscriptions": ("subscriber",),
    "queue_rejects": ("batch_id", "subscriber", "tran_id", "command_seq", "reason"),
}


@dataclass
class Scenario:
    name: str
    publication: Publication
    subscribers: list[str]
    steps: list[dict[str, Any]]
    # row filters (docs/spec.md §11): per subscriber, its partition from the start
    partitions: dict[str, Partition] = field(default_factory=dict)
    # column filters (§11): per subscriber, the columns it takes of an article
    column_lists: dict[str, ColumnLists] = field(default_factory=dict)


def load_scenario(path: Path, policy: str | None = None) -> Scenario:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read scenario {path}: {exc}") from exc
    return scenario_from_dict(data, Path(path).stem, policy)


def scenario_from_dict(data: dict, name: str, policy: str | None = None) -> Scenario:
    if not isinstance(data, dict):
        raise ConfigError(f"scenario {name}: must be a JSON object")
    pub = dict(data)
    if policy:
        pub["policy"] = normalize_policy(policy)
    publication = publication_from_dict(pub)
    subscribers = [check_identifier(s, "subscriber") for s in data.get("subscribers", [])]
    steps = data.get("steps", [])
    if not isinstance(steps, list):
        raise ConfigError(f"scenario {name}: steps must be a list")
    known = {
        "publisher_rows",
        "publisher_change",
        "outside_write",
        "enqueue",
        "commit",
        "run",
        "reinitialize",
        "advance_clock",
        "filter_change",
    }
    for i, step in enumerate(steps, 1):
        if not isinstance(step, dict) or len(step) != 1 or next(iter(step)) not in known:
            raise ConfigError(f"scenario {name}: step {i} must be one of {sorted(known)}")
        if "outside_write" in step:
            _check_outside_write(name, i, step["outside_write"], publication)
        if "filter_change" in step:
            body = step["filter_change"]
            if not isinstance(body, dict) or body.get("subscriber") not in subscribers:
                raise ConfigError(f"scenario {name}: step {i} (filter_change) needs one of the scenario's subscribers")
            _scenario_partition(name, publication, body.get("filters"))
    filters = data.get("filters") or {}
    if not isinstance(filters, dict) or any(s not in subscribers for s in filters):
        raise ConfigError(f"scenario {name}: filters must map the scenario's subscribers to their article filters")
    partitions = {s: _scenario_partition(name, publication, f) for s, f in filters.items()}
    columns = data.get("columns") or {}
    if not isinstance(columns, dict) or any(
        s not in subscribers or not isinstance(c, dict) for s, c in columns.items()
    ):
        raise ConfigError(f"scenario {name}: columns must map the scenario's subscribers to their article columns")
    try:
        column_lists = {
            s: parse_columns(
                publication, [f"{a}: {', '.join(map(str, c))}" for a, c in lists.items()], partitions.get(s, {})
            )
            for s, lists in columns.items()
        }
    except ConfigError as e:
        raise ConfigError(f"scenario {name}: {e}") from None
    return Scenario(name, publication, subscribers, steps, partitions, column_lists)


def _scenario_partition(name: str, publication: Publication, filters: Any) -> Partition:
    """A scenario's `{"article": "condition"}` as a partition (ConfigError in one line)."""
    if not isinstance(filters, dict):
        raise ConfigError(f'scenario {name}: filters are {{"article": "condition"}}')
    try:
        return parse_filters(publication, [f"{a}: {c}" for a, c in filters.items()])
    except ConfigError as e:
        raise ConfigError(f"scenario {name}: {e}") from None


PublisherChange = tuple[str, str, dict, str | None]  # article, op, row (or key for D), new_version
OutsideWrite = tuple[str, str, dict]  # article, op, row (or key for D)

# Where in the next run an `outside_write` step with `during` commits: right after the run's
# write that the predicate names (its label, qrepl.storage.faults), and so, for the run:
# "before" its trigger examined the table, after that and before its MERGE ("cut"), or
# "after" its MERGE. Each of these writes happens in every run that takes a batch, except
# those of CONDITIONAL_POINTS: only when the batch has rows for them (a conflict, a publisher
# change), or only when the trigger has commits to examine (`publisher_trigger`: between its
# look at the table and its stamp, so the trigger looks again and the batch sees the write);
# the marts that are views over the batch log write nothing in a run. An outside write due at
# a point the run did not make fails the replay.
RUN_POINTS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "run_lock": (
        "before",
        lambda label: label.split()[:3] == ["python", "create", "table"] and ".qrepl_run_lock " in label,
    ),
    # the trigger's first write after it read the table's new commits (it drops its views of
    # an earlier stamp before it makes them): before its stamp MERGE
    "publisher_trigger": ("before", lambda label: "drop view if exists qrepl_stamp_" in label),
    **{
        node: ("cut", lambda label, node=node: label.startswith(f"model.qrepl.{node} "))
        for node in (
            "int_batch_subscriptions",
            "int_batch_commands",
            "int_queued_commands_judged",
            "conflicts",
            "publisher_changes",
        )
    },
    # the node's last write, its own table's: after every publisher MERGE and stamp record
    "batch_applied": (
        "after",
        lambda label: label.startswith("model.qrepl.batch_applied ")
        and ".batch_applied " in label.removeprefix("model.qrepl.batch_applied "),
    ),
    "queue_reader_history": ("after", lambda label: label.startswith("model.qrepl.queue_reader_history ")),
}

CONDITIONAL_POINTS = frozenset({"publisher_trigger", "conflicts", "publisher_changes"})


def _check_outside_write(name: str, i: int, body: Any, publication: Publication) -> None:
    where = f"scenario {name}: step {i} (outside_write)"
    if not isinstance(body, dict) or body.get("op") not in ("U", "I", "D"):
        raise ConfigError(f"{where}: needs op U, I or D")
    if publication.article(body.get("article")) is None:
        raise ConfigError(f"{where}: unknown article {body.get('article')!r}")
    if not isinstance(body.get("key" if body["op"] == "D" else "row"), dict):
        raise ConfigError(f"{where}: op {body['op']} needs {'key' if body['op'] == 'D' else 'row'}")
    if body.get("during") is not None and body["during"] not in RUN_POINTS:
        raise ConfigError(f"{where}: during must be one of {', '.join(RUN_POINTS)}")


class Backend(Protocol):
    """What a replay needs from a queue-reader implementation."""

    def put_publisher_rows(self, article: str, rows: list[dict]) -> None: ...
    def publisher_changes(self, changes: list[PublisherChange]) -> None: ...
    def outside_write(self, write: OutsideWrite, during: str | None) -> None: ...
    def enqueue(self, queue_rows: list[dict]) -> None: ...
    def run(self, batch_time: datetime) -> None: ...
    def reinitialize(self, subscriber: str) -> None: ...
    def drop_subscription(self, subscriber: str) -> None: ...
    def change_partition(self, subscriber: str, partition: Partition, force: bool) -> None: ...

    def add_subscription(self, subscriber: str) -> None: ...
    def deliver_conflicts(self, subscriber: str) -> None: ...
    def generation_of(self, subscriber: str) -> int: ...
    def outputs(self) -> dict[str, Any]: ...


def _has_outside_writes(scenario: Scenario) -> bool:
    return any("outside_write" in step for step in scenario.steps)


def _no_such_write(pending: list[tuple[str, OutsideWrite]]) -> str:
    return (
        f"outside writes during {', '.join(sorted({p for p, _ in pending}))}: the run made no such write "
        f"(a run that takes no batch makes fewer, and a run with nothing to do none: docs/spec.md 5.10)"
    )


class ReferenceBackend:
    def __init__(self, scenario: Scenario) -> None:
        self.reader = ReferenceReader(scenario.publication)
        for s in scenario.subscribers:
            self.reader.add_subscription(s, partition=scenario.partitions.get(s), columns=scenario.column_lists.get(s))
        self.during_next_run: list[tuple[str, OutsideWrite]] = []

    def put_publisher_rows(self, article: str, rows: list[dict]) -> None:
        for row in rows:
            self.reader.put_row(article, row)

    def publisher_changes(self, changes: list[PublisherChange]) -> None:
        for article, op, row, new_version in changes:
            if op == "D":
                self.reader.delete_row(article, row)
            else:
                self.reader.put_row(article, {**row, "msrepl_tran_version": new_version})

    def outside_write(self, write: OutsideWrite, during: str | None) -> None:
        if during is None:
            self.reader.apply_outside_effect(self.reader.outside_effect(*write))
        else:
            self.during_next_run.append((during, write))

    def enqueue(self, queue_rows: list[dict]) -> None:
        self.reader.append_queue(queue_rows)

    def run(self, batch_time: datetime) -> None:
        order = list(RUN_POINTS)
        writes = sorted(self.during_next_run, key=lambda w: order.index(w[0]))  # stable: scenario order within a point
        self.during_next_run = []
        if writes and self.reader.nothing_to_do(batch_time):  # as SparkBackend.run finds it
            raise ConfigError(_no_such_write(writes))
        when = {kind: [w for point, w in writes if RUN_POINTS[point][0] == kind] for kind in ("before", "cut", "after")}
        self.reader.run_with_outside_writes(batch_time, when["before"], when["cut"], when["after"])

    def reinitialize(self, subscriber: str) -> None:
        self.reader.reinitialize(subscriber)

    def drop_subscription(self, subscriber: str) -> None:
        self.reader.drop_subscription(subscriber)

    def change_partition(self, subscriber: str, partition: Partition, force: bool) -> None:
        self.reader.change_partition(subscriber, partition, force)

    def add_subscription(self, subscriber: str) -> None:
        self.reader.add_subscription(subscriber)

    def deliver_conflicts(self, subscriber: str) -> None:
        self.reader.deliver_conflicts(subscriber)

    def generation_of(self, subscriber: str) -> int:
        sub = self.reader.subscriptions.get(subscriber)
        return sub.generation if sub else 0

    def outputs(self) -> dict[str, Any]:
        r = self.reader
        return {
            "publisher": {a: list(rows.values()) for a, rows in r.publisher.items()},
            "conflicts": r.conflicts,
            "compensating_commands": r.compensating_commands,
            "transaction_outcomes": r.transaction_outcomes,
            "subscriptions": [s.as_row() for s in r.subscriptions.values()],
            "queue_rejects": r.queue_rejects,
        }


def queue_rows_for(
    scenario: Scenario,
    transactions: list[dict],
    clock: datetime,
    tran_seqs: dict[str, int],
    generation_of: Callable[[str], int],
) -> list[dict]:
    """Turn an `enqueue` step into queue rows, exactly as the capture trigger would write them.

    Fields are taken as given (a scenario may hold malformed commands on purpose): only the
    row_key is derived, from `key` (D) or `row` (I/U), when the article is known. A transaction
    may say what its capturing host's clock made of it: `host_clock_seconds` shifts its
    enqueued_at from the scenario's clock (a clock that stepped back, a skewed host), and
    `tran_seq` replaces the subscriber's running number (a capture process on another host
    numbers its own transactions).
    """
    rows: list[dict] = []
    for n, tran in enumerate(transactions):
        sub = tran.get("subscriber")
        tran_seqs[sub] = tran_seqs.get(sub, 0) + 1
        tran_seq = tran.get("tran_seq", tran_seqs[sub])
        enqueued_at = clock + timedelta(microseconds=n) + timedelta(seconds=tran.get("host_clock_seconds", 0))
        generation = tran.get("generation", generation_of(sub))
        for seq, cmd in enumerate(tran.get("commands", []), 1):
            article = scenario.publication.article(cmd.get("article"))
            row = cmd.get("row")
            key_source = cmd.get("key") if cmd.get("key") is not None else row
            row_key = cmd.get("row_key")
            if row_key is None and article is not None and isinstance(key_source, dict):
                row_key = canonical_key(article, key_source)
            new_row = cmd.get("new_row_text")
            if new_row is None and row is not None:
                new_row = dumps(row)
            rows.append(
                {
                    "subscriber": sub,
                    "generation": generation,
                    "tran_id": tran.get("tran_id"),
                    "tran_seq": tran_seq,
                    "command_seq": seq,
                    "article": cmd.get("article"),
                    "op": cmd.get("op"),
                    "row_key": row_key,
                    "old_version": cmd.get("old_version"),
                    "new_version": cmd.get("new_version"),
                    "new_row": new_row,
                    "old_row": None,
                    "enqueued_at": enqueued_at,
                }
            )
    return rows


def play(scenario: Scenario, backend: Backend) -> dict[str, Any]:
    """Run the scenario's steps against a backend and return its outputs."""
    clock = SCENARIO_EPOCH
    tran_seqs: dict[str, int] = {}
    pending_changes: list[PublisherChange] = []  # consecutive publisher_change steps, applied together
    # consecutive enqueue steps: one append of all their rows (a subscription cannot change
    # between them, so each subscriber's generation is read once)
    pending_queue: list[dict] = []
    generations: dict[str, int] = {}

    def generation_of(subscriber: str) -> int:
        if not isinstance(subscriber, str):  # a malformed scenario's subscriber: not cached
            return backend.generation_of(subscriber)
        if subscriber not in generations:
            generations[subscriber] = backend.generation_of(subscriber)
        return generations[subscriber]

    for step in scenario.steps:
        ((kind, body),) = step.items()
        clock += timedelta(seconds=1)
        if kind != "publisher_change" and pending_changes:
            backend.publisher_changes(pending_changes)
            pending_changes = []
        if kind not in ("enqueue", "advance_clock") and pending_queue:  # `commit` ends the queue append too
            backend.enqueue(pending_queue)
            pending_queue, generations = [], {}
        if kind == "publisher_rows":
            for article, rows in body.items():
                backend.put_publisher_rows(article, rows)
        elif kind == "publisher_change":
            row = body.get("row") or body.get("key")
            pending_changes.append((body["article"], body["op"], row, body.get("new_version")))
        elif kind == "outside_write":
            row = body["key"] if body["op"] == "D" else body["row"]
            backend.outside_write((body["article"], body["op"], row), body.get("during"))
        elif kind == "enqueue":
            pending_queue.extend(queue_rows_for(scenario, body, clock, tran_seqs, generation_of))
        elif kind == "run":
            backend.run(clock)
        elif kind == "reinitialize":
            backend.reinitialize(body["subscriber"])
        elif kind == "drop_subscription":
            backend.drop_subscription(body["subscriber"])
        elif kind == "filter_change":
            partition = _scenario_partition(scenario.name, scenario.publication, body["filters"])
            backend.change_partition(body["subscriber"], partition, bool(body.get("force")))
            generations = {}
        elif kind == "advance_clock":
            clock += timedelta(days=body.get("days", 0), seconds=body.get("seconds", 0))
    if pending_changes:
        backend.publisher_changes(pending_changes)
    if pending_queue:
        backend.enqueue(pending_queue)
    return backend.outputs()


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    return value


STAMPED = "(stamped)"


def _scenario_versions(value: Any, found: set[str]) -> set[str]:
    """Every version a scenario names (msrepl_tran_version, old_version, new_version)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("msrepl_tran_version", "old_version", "new_version") and isinstance(v, str):
                found.add(v)
            else:
                _scenario_versions(v, found)
    elif isinstance(value, list):
        for v in value:
            _scenario_versions(v, found)
    return found


def normalized_outputs(scenario: Scenario, outputs: dict[str, Any]) -> dict[str, list[dict]]:
    """Contract columns only, row images parsed and typed, rows sorted: what replay writes.

    In a scenario with outside writes, a version the scenario does not name is one the
    publisher's trigger gave an outside write (a new uuid on Spark): it is written as
    `(stamped)`, so the two outputs compare."""
    pub = scenario.publication
    known = _scenario_versions(scenario.steps, set()) if _has_outside_writes(scenario) else None

    def version(v: Any) -> Any:
        return STAMPED if known is not None and isinstance(v, str) and v not in known else v

    def image(row: dict | None) -> dict | None:
        if isinstance(row, dict) and "msrepl_tran_version" in row:
            return {**row, "msrepl_tran_version": version(row["msrepl_tran_version"])}
        return row

    result: dict[str, list[dict]] = {}
    for article in pub.articles:
        rows = [image(normalize_row(article, r)) for r in outputs["publisher"].get(article.name, [])]
        result[f"publisher/{article.name}"] = sorted(
            rows, key=lambda r: tuple((v is None, v) for v in (r[k] for k in article.key))
        )
    for table in OUTPUT_TABLES:
        rows = []
        for raw in outputs[table]:
            row = {c: _plain(raw.get(c)) for c in OUTPUT_COLUMNS[table]}
            art = pub.article(row.get("article")) if "article" in row else None
            for column in ("publisher_row", "subscriber_row", "row"):
                if column in row:
                    value = row[column]
                    if isinstance(value, str):
                        value = json.loads(value, parse_float=Decimal)
                    if art and value is not None:  # a column-filtered subscriber's images hold its columns (§11)
                        value = project(
                            scenario.column_lists.get(row.get("subscriber"), {}), art, normalize_row(art, value)
                        )
                    row[column] = image(value)
            if "publisher_version" in row:
                row["publisher_version"] = version(row["publisher_version"])
            rows.append(row)
        keys = SORT_KEYS[table]
        result[table] = sorted(
            rows,
            key=lambda r: tuple(
                (r[k] is None, str(r[k]) if r[k] is not None else "") if not isinstance(r[k], int) else (False, r[k])
                for k in keys
            ),
        )
    return result


def write_outputs(out_dir: Path, tables: dict[str, list[dict]]) -> None:
    for name, rows in tables.items():
        path = Path(out_dir) / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in rows))


REPLAY_SCHEMA = "qrepl_replay"


class SparkBackend:
    """The real pipeline: Iceberg tables in a fresh schema, the dbt models as queue reader."""

    def __init__(self, scenario: Scenario, schema: str = REPLAY_SCHEMA) -> None:
        from ..services.publication import drop_publication
        from ..storage.open import warehouse

        self.scenario = scenario
        # with the replicas of its subscribers: conflicts delivered by an earlier replay
        drop_publication(schema, tuple(scenario.subscribers))
        self.wh = warehouse(schema)
        self.wh.write_publication(scenario.publication)
        if scenario.subscribers:
            self.wh.add_subscriptions(
                scenario.subscribers, partitions=scenario.partitions, columns=scenario.column_lists
            )
        self.during_next_run: list[tuple[str, OutsideWrite]] = []
        self.examined = False  # by the publisher's trigger, once (a run, or _baseline)

    @classmethod
    def attach(cls, scenario: Scenario, schema: str) -> "SparkBackend":
        """A backend over tables that already exist (e.g. written through the Thrift server)."""
        from ..storage.spark import get_spark
        from ..storage.warehouse import Warehouse

        backend = cls.__new__(cls)
        backend.scenario, backend.wh = scenario, Warehouse(get_spark(), schema)
        backend.during_next_run, backend.examined = [], True
        return backend

    def put_publisher_rows(self, article: str, rows: list[dict]) -> None:
        self.wh.upsert_rows(article, rows)

    def publisher_changes(self, changes: list[PublisherChange]) -> None:
        """Consecutive publisher-local changes: the last one per row, one delete and one upsert
        per article (what applying them one by one leaves)."""
        last: dict[tuple[str, str | None], tuple[str, dict, str | None]] = {}
        for article, op, row, new_version in changes:
            last[(article, canonical_key(self.scenario.publication.article(article), row))] = (op, row, new_version)
        for a in self.scenario.publication.articles:
            mine = [v for (article, _), v in last.items() if article == a.name]
            self.wh.delete_rows(a.name, [row for op, row, _ in mine if op == "D"])
            self.wh.upsert_rows(a.name, [{**row, "msrepl_tran_version": nv} for op, row, nv in mine if op != "D"])

    def outside_write(self, write: OutsideWrite, during: str | None) -> None:
        self._baseline()
        if during is None:
            self.wh.outside_write(*write)
        else:
            self.during_next_run.append((during, write))

    def _baseline(self) -> None:
        """Before the first outside write, the publisher's trigger examines the tables once, as
        the subscribers' snapshots would have (the versions they hold are the trigger's)."""
        if not self.examined:
            from ..storage.dbt_runner import stamp_publisher

            stamp_publisher(self.wh)
            self.examined = True

    def enqueue(self, queue_rows: list[dict]) -> None:
        self.wh.append_queue(queue_rows)

    def run(self, batch_time: datetime) -> None:
        from ..storage.dbt_runner import run_queue_reader

        self.examined = True  # the run's trigger
        if not self.during_next_run:
            return run_queue_reader(self.wh.schema, batch_time)
        from ..storage import faults

        pending, self.during_next_run = self.during_next_run, []

        def commit_due(k: int, label: str) -> None:
            """Right after the run's write `label`: the outside writes due there, in this
            process, as another writer's commits would interleave."""
            due = [w for point, w in pending if RUN_POINTS[point][1](label)]
            pending[:] = [(point, w) for point, w in pending if not RUN_POINTS[point][1](label)]
            with faults.uncounted():
                for write in due:
                    self.wh.outside_write(*write)

        faults.arm_each(commit_due)
        try:
            run_queue_reader(self.wh.schema, batch_time)
        finally:
            faults.disarm()
        if pending:
            raise ConfigError(_no_such_write(pending))

    def reinitialize(self, subscriber: str) -> None:
        sub = self.wh.subscription(subscriber)
        self.wh.update_subscription(subscriber, "active", sub["generation"] + 1, None, None)

    def drop_subscription(self, subscriber: str) -> None:
        self.wh.drop_subscription(subscriber)

    def change_partition(self, subscriber: str, partition: Partition, force: bool) -> None:
        """A filter change as `qrepl subscription filter` makes it, without a replica: refused
        while commands wait (unless forced), generation + 1, the new partition recorded."""
        from ..services.reader import queued_commands_of

        pending = queued_commands_of(self.wh, subscriber)
        if pending and not force:
            raise ConfigError(f"subscription {subscriber} has {pending} queued command(s) the reader has not taken")
        sub = self.wh.subscription(subscriber)
        self.wh.update_subscription(subscriber, "active", sub["generation"] + 1, None, None)
        self.wh.set_partition(subscriber, partition, self.scenario.column_lists.get(subscriber))

    def add_subscription(self, subscriber: str) -> None:
        self.wh.add_subscription(subscriber)

    def deliver_conflicts(self, subscriber: str) -> None:
        """Distribution's conflict delivery alone (the replay has no replicas: the replica
        schema holds only the delivered conflicts)."""
        from ..services.distribution import deliver_conflicts
        from ..storage.replica import replica_schema

        if not self.scenario.publication.centralized_conflicts:
            self.wh.spark.sql(f"create database if not exists {replica_schema(self.wh, subscriber)}")
            deliver_conflicts(self.wh.schema, subscriber)

    def generation_of(self, subscriber: str) -> int:
        sub = self.wh.subscription(subscriber) if isinstance(subscriber, str) and subscriber.isidentifier() else None
        return sub["generation"] if sub else 0

    def outputs(self) -> dict[str, Any]:
        """The tables the scenario compares, read as anything that compares versions reads the
        publisher: after its trigger stamped what writers that set no version wrote (a run
        with nothing to do leaves that to the next reader of versions: docs/spec.md 5.10)."""
        from ..storage.dbt_runner import stamp_publisher

        wh = self.wh
        if _has_outside_writes(self.scenario):
            stamp_publisher(wh)
        return {
            "publisher": {a.name: wh.publisher_rows(a.name) for a in self.scenario.publication.articles},
            "conflicts": wh.rows_of("conflicts"),
            "compensating_commands": wh.rows_of("compensating_commands"),
            "transaction_outcomes": wh.rows_of("transaction_outcomes"),
            "subscriptions": wh.subscriptions(),
            "queue_rejects": wh.rows_of("queue_rejects"),
        }


def replay(
    paths: Iterable[Path],
    out_dir: Path,
    policy: str | None = None,
    reference: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """Replay scenario files into out_dir/<stem>/; all Spark scenarios share one session."""
    written = []
    for path in paths:
        scenario = load_scenario(path, policy)
        if progress:
            progress(f"replaying {path} ({'reference' if reference else 'spark + dbt'})")
        backend = ReferenceBackend(scenario) if reference else SparkBackend(scenario)
        tables = normalized_outputs(scenario, play(scenario, backend))
        target = Path(out_dir) / scenario.name
        write_outputs(target, tables)
        written.append(target)
    return written
