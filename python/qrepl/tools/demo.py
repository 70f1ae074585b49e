"""`qrepl demo`: the whole queued-update loop on the embedded stack, with a readable summary."""

from __future__ import annotations

from ..core.modes import ConflictError
from ..core.vocabulary import Progress
from ..services.capture import Subscriber
from ..services.conflicts import list_conflicts, write_conflict_viewer
from ..services.distribution import distribute
from ..services.paths import output_dir, project_file
from ..services.publication import create_publication, drop_publication
from ..services.reader import run_reader, transaction_outcomes
from ..services.subscriptions import add_subscription

SUBSCRIBERS = ("north", "south", "east")
IMMEDIATE = "west"  # an immediate updating subscriber (docs/update-modes.md)


def run_demo(schema: str = "qrepl_demo", echo: Progress = print) -> dict:
    echo(f"[1/6] resetting schema {schema} and creating publication 'sales' (publications/sales.yml)")
    drop_publication(schema, (*SUBSCRIBERS, IMMEDIATE))
    create_publication(project_file("publications", "sales.yml"), schema, seed=True, echo=echo)

    echo(
        f"[2/6] subscribing {', '.join(SUBSCRIBERS)} (queued) and {IMMEDIATE} (immediate), "
        f"delivering their initial snapshots"
    )
    subs = {}
    for name in (*SUBSCRIBERS, IMMEDIATE):
        add_subscription(
            schema, name, echo=lambda line: None, update_mode="immediate" if name == IMMEDIATE else "queued"
        )
        subs[name] = Subscriber(schema, name)
    north, south, east, west = (subs[n] for n in (*SUBSCRIBERS, IMMEDIATE))

    echo("[3/6] subscribers change their replicas offline; each change is captured into the queue")
    with north.transaction("north-move-ada") as t:  # clean update
        t.update("customers", {"customer_id": 1}, {"city": "Paris"})
    with north.transaction("north-raise-grace") as t:  # wins the race on customer 2
        t.update("customers", {"customer_id": 2}, {"credit_limit": 9000})
    with south.transaction("south-raise-grace") as t:  # same row, stale version: conflict
        t.update("customers", {"customer_id": 2}, {"credit_limit": 8000})
    with south.transaction("south-move-alan") as t:  # clean update of customer 3
        t.update("customers", {"customer_id": 3}, {"city": "Wilmslow"})
    with east.transaction("east-drop-alan") as t:  # delete of a row changed elsewhere
        t.delete("customers", {"customer_id": 3})
    with north.transaction("north-new-customer") as t:  # a new customer ...
        t.insert("customers", {"customer_id": 7, "name": "Niklaus Wirth", "city": "Zurich", "credit_limit": 1000})
    with east.transaction("east-new-customer") as t:  # ... that east inserts too: key exists
        t.insert("customers", {"customer_id": 7, "name": "N. Wirth", "city": "Bern", "credit_limit": 900})
    with east.transaction("east-order-100") as t:  # multi-row: one stale row rolls back all
        t.update("order_lines", {"order_id": 100, "line_no": 1}, {"quantity": 5})
        t.update("order_lines", {"order_id": 100, "line_no": 2}, {"quantity": 3})
        t.update("customers", {"customer_id": 1}, {"credit_limit": 6000})

    with west.transaction("west-new-customer") as t:  # immediate: at the publisher now
        t.insert("customers", {"customer_id": 8, "name": "Barbara Liskov", "city": "Boston", "credit_limit": 500})

    echo("[4/6] running the queue reader (dbt models on the embedded Spark)")
    history = run_reader(schema, echo=echo)

    echo(f"      {IMMEDIATE} (immediate) changes customer 1, which the run just changed at the publisher:")
    rejection = None
    try:
        with west.transaction("west-move-ada") as t:
            t.update("customers", {"customer_id": 1}, {"city": "Lyon"})
    except ConflictError as exc:
        rejection = str(exc)
        for line in rejection.splitlines():
            echo(f"      {line}")

    echo("[5/6] distributing compensating commands and publisher changes to the subscribers")
    delivered = distribute(schema, progress=echo)
    with west.transaction("west-move-ada-again") as t:  # its replica is current now: applied
        t.update("customers", {"customer_id": 1}, {"city": "Lyon"})
    echo(f"      {IMMEDIATE} retries after the delivery: applied at the publisher")

    echo("[6/6] summary")
    outcomes = transaction_outcomes(schema)
    echo("")
    echo("Transactions")
    for o in outcomes:
        echo(f"  {o['subscriber']:<6} {o['tran_id']:<20} {o['outcome']}")
    conflicts = list_conflicts(schema)
    echo("")
    echo(f"Conflicts ({len(conflicts)})")
    for c in conflicts:
        echo(
            f"  {c['conflict_type']:<15} {c['article']} {c['row_key']}  subscriber {c['subscriber']} "
            f"transaction {c['tran_id']}  winner: {c['winner']}"
        )
        echo(f"      publisher row : {_row_text(c['publisher_row'])}")
        echo(f"      subscriber row: {_row_text(c['subscriber_row'])}")
    echo("")
    echo("Delivered to subscribers")
    for name, counts in delivered.items():
        echo(f"  {name:<6} {counts['rows_delivered']} rows delivered ({counts['compensations']} compensating commands)")
    echo(
        f"Run: {history['transactions_processed']} transactions, {history['commands_processed']} commands, "
        f"{history['conflicts']} conflicts, {history['rejected']} rejected"
    )
    page = write_conflict_viewer(schema, output_dir("out", "demo-viewer"), title="qrepl demo conflicts")
    echo(f"Conflict viewer: {page}")
    echo(
        f"Next: export QREPL_SCHEMA={schema}; then .venv/bin/qrepl conflicts, "
        f".venv/bin/qrepl conflicts show CONFLICT_ID, .venv/bin/qrepl status"
    )
    return {
        "outcomes": outcomes,
        "conflicts": conflicts,
        "history": history,
        "delivered": delivered,
        "immediate_rejection": rejection,
    }


def _row_text(row: dict | None) -> str:
    if row is None:
        return "(row absent)"
    return ", ".join(f"{k}={v}" for k, v in row.items() if k != "msrepl_tran_version")
