"""Issue 39's queue cases as test data, played the same way on the reference (unit/) and on
Spark + dbt (spark/): a backend of qrepl.tools.replay (ReferenceBackend or SparkBackend) goes
through the steps, and the outputs are compared with what the case expects."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

PUBLICATION = {
    "publication": "sales",
    "policy": "publisher_wins",
    "articles": [
        {"name": "customers", "key": ["customer_id"], "columns": {"customer_id": "int", "city": "string"}},
        {"name": "tags", "key": ["tag"], "columns": {"tag": "string", "note": "string"}},
    ],
}
SUBSCRIBERS = ["s1"]
T0 = datetime(2026, 3, 1, 12, 0, 0)


def version(n: int) -> str:
    return f"{n:08x}-abcd-4ef0-8abc-{n:012x}"


def command(
    tran_id: str,
    op: str,
    cid: int,
    city: str | None,
    *,
    old: str | None,
    new: str | None,
    enqueued_at: datetime,
    subscriber: str = "s1",
    generation: int = 0,
    tran_seq: int = 1,
    command_seq: int = 1,
    row_key: str | None = None,
) -> dict:
    return {
        "subscriber": subscriber,
        "generation": generation,
        "tran_id": tran_id,
        "tran_seq": tran_seq,
        "command_seq": command_seq,
        "article": "customers",
        "op": op,
        "row_key": row_key if row_key is not None else json.dumps({"customer_id": cid}, separators=(",", ":")),
        "old_version": old,
        "new_version": new,
        "new_row": json.dumps({"customer_id": cid, "city": city}, separators=(",", ":")) if op != "D" else None,
        "old_row": None,
        "enqueued_at": enqueued_at,
    }


def publisher(backend) -> None:
    backend.put_publisher_rows(
        "customers", [{"customer_id": n, "city": "x", "msrepl_tran_version": version(n)} for n in (1, 2, 3)]
    )


def cities(outputs: dict) -> dict[int, str]:
    return {r["customer_id"]: r["city"] for r in outputs["publisher"]["customers"]}


def rejects(outputs: dict) -> list[tuple]:
    return sorted(
        (r["subscriber"], r["tran_id"], r["new_version"] or "", r["reason"]) for r in outputs["queue_rejects"]
    )


def outcomes(outputs: dict) -> list[tuple]:
    return sorted((o["tran_id"], o["batch_id"], o["outcome"]) for o in outputs["transaction_outcomes"])


# -- item 3: a queued command with the identity of one already batched, other content ---------


def duplicate_identity_with_other_content(backend) -> dict:
    """Batch 1 applies t1. Then a row with t1's identity (subscriber, tran_id, command_seq,
    enqueued_at) but another image arrives beside a good t2; a third run has nothing new."""
    publisher(backend)
    first = command("t1", "U", 1, "a", old=version(1), new=version(101), enqueued_at=T0)
    backend.enqueue([first])
    backend.run(T0 + timedelta(hours=1))
    other = {**first, "new_row": '{"customer_id":1,"city":"b"}', "new_version": version(102)}
    good = command("t2", "U", 2, "c", old=version(2), new=version(103), enqueued_at=T0 + timedelta(hours=1), tran_seq=2)
    backend.enqueue([other, good])
    backend.run(T0 + timedelta(hours=2))
    backend.run(T0 + timedelta(hours=3))
    return backend.outputs()


DUPLICATE_IDENTITY_EXPECTED = {
    "rejects": [("s1", "t1", version(102), "duplicate command with other content")],
    "outcomes": [("t1", 1, "applied"), ("t2", 2, "applied")],
    "cities": {1: "a", 2: "c", 3: "x"},
}


# -- item 4: `subscription drop` then `add` of the same name, before a run ---------------------


def drop_then_add_before_a_run(backend) -> dict:
    """s1 queues t_old, is dropped and added again before any run, then queues t_new at the
    generation its new subscription has: t_old belongs to the dropped incarnation."""
    publisher(backend)
    backend.enqueue(
        [
            command(
                "t_old",
                "U",
                1,
                "old",
                old=version(1),
                new=version(201),
                enqueued_at=T0,
                generation=backend.generation_of("s1"),
            )
        ]
    )
    backend.drop_subscription("s1")
    backend.add_subscription("s1")
    backend.enqueue(
        [
            command(
                "t_new",
                "U",
                2,
                "new",
                old=version(2),
                new=version(202),
                enqueued_at=T0 + timedelta(minutes=1),
                tran_seq=2,
                generation=backend.generation_of("s1"),
            )
        ]
    )
    backend.run(T0 + timedelta(hours=1))
    return backend.outputs()


DROP_THEN_ADD_EXPECTED = {
    "generation": 1,
    "outcomes": [("t_new", 1, "applied"), ("t_old", 1, "rejected_reinit")],
    "cities": {1: "x", 2: "new", 3: "x"},
}


# -- item 5: a D command's row_key is bounded like a row ---------------------------------------


def oversize_delete_key(backend) -> dict:
    """A D command whose (canonical) key is over 64 KiB, beside a good transaction."""
    from qrepl.core.model import MAX_KEY_BYTES

    publisher(backend)
    big = json.dumps({"tag": "k" * MAX_KEY_BYTES}, separators=(",", ":"))
    delete = {
        **command("t_big", "D", 0, None, old=version(301), new=None, enqueued_at=T0),
        "article": "tags",
        "row_key": big,
    }
    good = command("t_good", "U", 1, "a", old=version(1), new=version(302), enqueued_at=T0, tran_seq=2)
    backend.enqueue([delete, good])
    backend.run(T0 + timedelta(hours=1))
    return backend.outputs()


OVERSIZE_KEY_EXPECTED = {
    "rejects": [("s1", "t_big", "", "oversize key")],
    "outcomes": [("t_good", 1, "applied")],
    "cities": {1: "a", 2: "x", 3: "x"},
}


# -- found by reading: retention and conflicts not yet delivered -------------------------------

RETENTION_PUBLICATION = {**PUBLICATION, "centralized_conflicts": False, "conflict_retention_days": 1}
RETENTION_SUBSCRIBERS = ["s1", "s2"]


def retention_keeps_undelivered_conflicts(backend) -> dict:
    """Conflicts delivered to their subscribers (not centralized), kept 1 day. s1 and s2 each
    lose a conflict in batch 1; s2 is dropped; s1 stays offline for 3 days: a run then keeps
    s1's conflict (not delivered yet) and purges s2's. After s1's delivery the next run
    purges s1's too."""
    publisher(backend)
    backend.publisher_changes([("customers", "U", {"customer_id": n, "city": "pub"}, version(500 + n)) for n in (1, 2)])
    backend.enqueue(
        [
            command("t1", "U", 1, "s1", old=version(1), new=version(601), enqueued_at=T0),
            command("t2", "U", 2, "s2", old=version(2), new=version(602), enqueued_at=T0, subscriber="s2", tran_seq=2),
        ]
    )
    backend.run(T0 + timedelta(hours=1))
    backend.drop_subscription("s2")
    backend.run(T0 + timedelta(days=3))
    offline = backend.outputs()
    backend.deliver_conflicts("s1")
    backend.run(T0 + timedelta(days=4))
    return {"offline": offline, "delivered": backend.outputs()}


def conflicted(outputs: dict) -> list[tuple]:
    return sorted((c["subscriber"], c["tran_id"]) for c in outputs["conflicts"])


RETENTION_EXPECTED = {"offline": [("s1", "t1")], "delivered": []}
