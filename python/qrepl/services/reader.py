"""The queue reader: run it (one `dbt run`), any dbt command on the embedded Spark, its run
lock, what it decided, and which queued commands it has not taken yet."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ..core.vocabulary import ConfigError, Progress, check_identifier
from ..storage.dbt_runner import (
    COMMIT_ATTEMPTS,
    DbtError,
    dbt_invoke,
    lost_to_a_concurrent_commit,
    run_queue_reader,
    run_was_idle,
)
from ..storage.open import default_schema, warehouse
from ..storage.run_lock import release, wait_until_free
from ..storage.table_formats import run_refusal
from ..storage.warehouse import QUEUE_COLUMNS


def run_dbt(schema: str | None, args: list[str], quiet: bool = True) -> None:
    """Any dbt command on the embedded Spark, on the publication in `schema` (`qrepl dbt`)."""
    dbt_invoke(args, check_identifier(schema or default_schema(), "schema"), quiet=quiet)


def unlock(schema: str | None, force: bool = False, echo: Progress = print):
    """Remove the queue reader's run lock left by a process that died; returns the holder
    removed (a run_lock.LockHolder), or None when no lock was held."""
    return release(warehouse(schema), force=force, echo=echo)


def transaction_outcomes(schema: str | None = None) -> list[dict]:
    """What the queue reader decided for each transaction, in processing order."""
    wh = warehouse(schema)
    if not wh.exists("transaction_outcomes"):
        return []
    return [r.asDict() for r in wh.spark.table(wh.table("transaction_outcomes")).orderBy("tran_pos").collect()]


def queued_commands_of(wh, subscriber: str) -> int:
    """How many of a subscriber's queued commands no finished queue-reader batch has taken: what
    a mode switch to immediate and a filter change wait for (docs/spec.md §7, §11)."""
    queue = unapplied_queue(wh)
    return queue.where(queue.subscriber == subscriber).count()


def unapplied_queue(wh):
    """The queued commands no finished queue-reader batch has taken (a DataFrame)."""
    from pyspark.sql import functions as F

    queue = wh.spark.table(wh.table("replication_queue"))
    if wh.exists("int_batch_commands") and wh.exists("queue_reader_history"):
        finished = wh.spark.table(wh.table("queue_reader_history")).select("batch_id")
        taken = (
            wh.spark.table(wh.table("int_batch_commands"))
            .join(finished, "batch_id", "left_semi")
            .select(*QUEUE_COLUMNS)
            .distinct()
            .alias("taken")
        )
        # a row is taken only if a batch took that very content (as staging reads it: op upper
        # case, versions lower case); a row with a taken command's identity but other content
        # is still to come (the next batch quarantines it)
        staged = {"op": F.upper, "old_version": F.lower, "new_version": F.lower}
        same = [
            staged.get(c, lambda col: col)(F.col(f"queued.{c}")).eqNullSafe(F.col(f"taken.{c}")) for c in QUEUE_COLUMNS
        ]
        queue = queue.alias("queued").join(taken, same, "left_anti")
    return queue


def reader_ran_since_init(wh, subscription: dict) -> bool:
    """Whether a finished queue-reader batch was cut with the subscription at its current
    generation (the queue reader has run once since its initialization)."""
    if not (wh.exists("int_batch_subscriptions") and wh.exists("queue_reader_history")):
        return False
    cut = wh.spark.table(wh.table("int_batch_subscriptions"))
    cut = cut.where((cut.subscriber == subscription["subscriber"]) & (cut.generation == subscription["generation"]))
    finished = wh.spark.table(wh.table("queue_reader_history")).select("batch_id")
    return not cut.join(finished, "batch_id", "left_semi").isEmpty()


# what run_reader gives as 0 for a run with nothing to do (the counts of a history row)
IDLE_COUNTS = (
    "transactions_processed",
    "commands_processed",
    "conflicts",
    "rejected",
    "quarantined",
    "publisher_rows_changed",
    "compensating_commands",
    "publisher_rows_kept",
    "stamped_rows",
)


def run_reader(schema: str | None = None, echo: Progress = print, wait_seconds: float = 0) -> dict[str, Any]:
    """One queue-reader run: its queue_reader_history row, with `idle` False and
    `stamped_rows`. Fails fast (RunLocked) while another reader holds the run lock, or waits up
    to `wait_seconds` for it; a lock whose holder's lease expired (a qrepl run that died) is
    recovered first. A run with nothing to do (macro qrepl_run_is_idle) writes no history row:
    it gives `idle` True, `batch_id` None, `last_batch_id` (the last finished batch) and every
    count 0."""
    wh = warehouse(schema)
    for article in wh.require_publication().articles:  # the trigger reads their files: fail in one line
        refusal = run_refusal(wh.spark, wh.article_table(article))
        if refusal:
            raise ConfigError(refusal)
    wait_until_free(wh, wait_seconds, echo)
    echo(f"queue reader: dbt run on schema {wh.schema} ...")
    started = datetime.now(timezone.utc).replace(tzinfo=None)
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        try:
            result = run_queue_reader(wh.schema, progress=echo)
            break
        except DbtError as exc:  # a failed run is finished by the next (docs/spec.md §10): run it again
            if attempt == COMMIT_ATTEMPTS or not lost_to_a_concurrent_commit(exc):
                raise
            echo(
                f"queue reader: another writer committed to a table while this run wrote it ({exc}); "
                f"the next run finishes the batch: attempt {attempt + 1} of {COMMIT_ATTEMPTS}"
            )
    last = wh.spark.table(wh.table("queue_reader_history")).orderBy("batch_id", ascending=False).limit(1).collect()[0]
    if run_was_idle(result):  # nothing to do: no batch, no history row (macro qrepl_run_is_idle)
        return {**{name: 0 for name in IDLE_COUNTS}, "batch_id": None, "last_batch_id": last["batch_id"], "idle": True}
    history = {**last.asDict(), "idle": False}
    # rows the publisher's trigger gave a version at this run's start (writers that set none);
    # not the stamps made since the last run by publication create, distribution or an
    # immediate commit, which are recorded under the same next batch id
    history["stamped_rows"] = 0
    if wh.exists("publisher_stamps"):
        stamps = wh.spark.table(wh.table("publisher_stamps"))
        mine = stamps.where((stamps["batch_id"] == last["batch_id"]) & (stamps["stamped_at"] >= started))
        history["stamped_rows"] = int(mine.agg({"stamped_rows": "sum"}).collect()[0][0] or 0)
    return history
