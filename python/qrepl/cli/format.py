"""Text for people: services return data, the commands print it with these."""

from __future__ import annotations

from typing import Any


def conflict_detail(c: dict) -> list[str]:
    """A conflict's detail: the winning and losing rows side by side, differing columns marked '*'."""
    publisher, subscriber = c.get("publisher_row"), c.get("subscriber_row")
    winner_is_publisher = c.get("winner") == "publisher"
    left = f"publisher ({'winner' if winner_is_publisher else 'loser'})"
    right = f"subscriber ({'loser' if winner_is_publisher else 'winner'})"
    columns = list(dict.fromkeys([*(publisher or {}), *(subscriber or {})]))
    cells = [("", "column", left, right)]
    for col in columns:
        pv = "(absent)" if publisher is None else cell(publisher.get(col))
        sv = (
            ("(deleted)" if c["conflict_type"].startswith("delete") else "(absent)")
            if subscriber is None
            else cell(subscriber.get(col))
        )
        cells.append(("*" if pv != sv else "", col, pv, sv))
    if not columns:
        cells.append(("*", "(row)", "(absent)", "(absent)"))
    widths = [max(len(row[i]) for row in cells) for i in range(4)]
    lines = [
        f"conflict {c['conflict_id']}: {c['conflict_type']} (code {c['conflict_type_code']}), winner {c['winner']}",
        f"  {c['reason_text']}",
        f"  article {c['article']} row {c['row_key']}; subscriber {c['subscriber']} transaction {c['tran_id']} "
        f"command {c['command_seq']}; batch {c['batch_id']} at {c['detected_at']}; policy {c['policy']}",
        *([f"  partition (the subscriber's, when the batch was cut): {c['partition']}"] if c.get("partition") else []),
        f"  versions: publisher {c['publisher_version']}, subscriber saw {c['old_version']}, "
        f"subscriber wrote {c['new_version'] or '(a delete)'}",
    ]
    review = c.get("review")
    lines.append(
        f"  resolved: keep {review['keep']}: {review['outcome']} (by {review['resolved_by']} at "
        f"{review['resolved_at']})"
        if review
        else f"  not resolved: qrepl conflicts resolve {c['conflict_id']} --keep subscriber|publisher"
    )
    lines.append("")
    for row in cells:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    return lines


def mode_text(s: dict) -> str:
    """`mode queued`, or for a failover subscription `mode failover (now queued)`."""
    now = f" (now {s['current_mode']})" if s["update_mode"] in ("failover", "queued_failover") else ""
    return f"mode {s['update_mode']}{now}"


def cell(value: Any) -> str:
    return "null" if value is None else str(value)


def status_lines(report: dict) -> list[str]:
    pub = report["publication"]
    lines = [f"publication {pub.name}: policy {pub.policy}, articles {', '.join(a.name for a in pub.articles)}"]
    for s in report["subscriptions"]:
        per_article = ", ".join(f"{a}: {n}" for a, n in s["conflicts"].items())
        lines.append(
            f"  {s['subscriber']:<12} {s['status']:<15} generation {s['generation']}  {mode_text(s)}  "
            f"queued commands {s['queued_commands']}  conflicts {per_article or 0}"
        )
        imm = s.get("immediate")
        if imm and imm["last_fallback_at"] and s["current_mode"] == "queued":
            lines.append(
                f"  {'':<12} fell back to queued automatically at {imm['last_fallback_at']} (publisher "
                f"unreachable); after a run: qrepl subscription set-mode {s['subscriber']} immediate"
            )
        if imm and imm["transactions"]:
            lines.append(
                f"  {'':<12} immediate transactions {imm['transactions']}, rejected {imm['rejected']} "
                f"({imm['rejected_rate']:.0%})"
                + (f", last at {imm['last_rejected_at']}" if imm["last_rejected_at"] else "")
            )
    h = report["last_run"]
    if h is not None:
        kept = h.get("publisher_rows_kept") or 0
        lines.append(
            f"last batch: {h['batch_id']} at {h['started_at']}: {h['transactions_processed']} transactions, "
            f"{h['conflicts']} conflicts, {h['rejected']} rejected, {h['quarantined']} quarantined"
            + (f", {kept} publisher row(s) kept (changed at the publisher during the run)" if kept else "")
        )
    if report.get("partition_overlap") is not None:
        lines.append(
            f"partitions: {report['partition_overlap']} row(s) shared by a pair of subscriptions (summed over the "
            "pairs), where their changes can conflict (qrepl publication check: per article and pair)"
        )
    for r in report.get("identity_ranges", []):
        lines.append(
            f"identity {r['article']}: {r['owner']} range {r['range_start']}..{r['range_end']}, "
            f"{r['left']} value(s) left"
            + (
                ""
                if r["left"]
                else "; used up: run `"
                + (
                    f"qrepl publication range --article {r['article']}"
                    if r["owner"] == "publisher"
                    else f"qrepl subscription range {r['owner']} --article {r['article']}"
                )
                + "`"
            )
        )
    holder = report["run_lock"]
    if holder is not None:
        lines.append(f"run lock: held by {holder.holder} since {holder.acquired_at} ({holder.lease_text()})")
    return lines
