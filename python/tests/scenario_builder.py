"""Small helpers to write scenarios in tests (pure Python)."""

from __future__ import annotations

import itertools
import uuid

_counter = itertools.count(1)


def v() -> str:
    """A fresh version GUID."""
    return str(uuid.UUID(int=next(_counter) + (1 << 120)))


CUSTOMERS = {
    "name": "customers",
    "key": ["customer_id"],
    "columns": {"customer_id": "int", "name": "string", "city": "string"},
}


def scenario(policy: str, steps: list[dict], subscribers=("s1", "s2", "s3"), articles=(CUSTOMERS,)) -> dict:
    return {
        "publication": "sales",
        "policy": policy,
        "articles": list(articles),
        "subscribers": list(subscribers),
        "steps": steps,
    }


def row(cid: int, city: str, version: str | None = None) -> dict:
    r = {"customer_id": cid, "name": f"c{cid}", "city": city}
    if version:
        r["msrepl_tran_version"] = version
    return r


def tran(sub: str, tid: str, *commands: dict) -> dict:
    return {"subscriber": sub, "tran_id": tid, "commands": list(commands)}


def upd(cid: int, city: str, old: str, new: str) -> dict:
    return {"article": "customers", "op": "U", "row": row(cid, city), "old_version": old, "new_version": new}


def ins(cid: int, city: str, new: str) -> dict:
    return {"article": "customers", "op": "I", "row": row(cid, city), "new_version": new}


def dele(cid: int, old: str) -> dict:
    return {"article": "customers", "op": "D", "key": {"customer_id": cid}, "old_version": old}
