"""A tenant's audit chain (SPEC §3.10): one entry per decision and operator action, each
hashed over the previous entry's hash and its own canonical JSON, so that a changed,
removed or reordered entry breaks every hash after it. Pure: `db.audit` stores entries,
`verify` walks a stored chain."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from app.domain.tools.specs import SHA256_TAG, canonical_json

#: The `prev_hash` of a chain's first entry.
GENESIS = SHA256_TAG + "0" * 64


class Action(StrEnum):
    """What an entry records: a decision on a preview, or an operator's action."""

    APPROVE = "approve"
    REJECT = "reject"
    REVISE = "revise"
    COMMIT = "commit"
    REFUSE_COMMIT = "refuse_commit"
    DISABLE_TOOL = "disable_tool"
    ENABLE_TOOL = "enable_tool"
    CREATE_KEY = "create_key"
    REVOKE_KEY = "revoke_key"
    REGISTER_WEBHOOK = "register_webhook"
    DELETE_WEBHOOK = "delete_webhook"
    ROTATE_WEBHOOK_SECRET = "rotate_webhook_secret"
    ACCEPT_MCP_DECLARATION = "accept_mcp_declaration"


@dataclass(frozen=True)
class Entry:
    """What happened, before it has a place in the chain: who (`actor`, a subject), what
    (`action`), to what (`target`, an id) and its details (`data`, no secret)."""

    actor: str
    action: Action
    target: str
    at: datetime
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chained:
    """An entry in its place: its `seq` in the tenant's chain, and the hashes."""

    seq: int
    entry: Entry
    prev_hash: str
    hash: str

    def as_dict(self) -> dict[str, Any]:
        return {**body(self.seq, self.entry), "prev_hash": self.prev_hash, "hash": self.hash}


def body(seq: int, entry: Entry) -> dict[str, Any]:
    """What an entry's hash covers, besides the previous hash."""
    return {
        "seq": seq,
        "at": entry.at.isoformat(),
        "actor": entry.actor,
        "action": str(entry.action),
        "target": entry.target,
        "data": dict(entry.data),
    }


def entry_hash(prev_hash: str, seq: int, entry: Entry) -> str:
    """SHA-256 over the previous entry's hash and this entry's canonical JSON."""
    text = prev_hash + "\n" + canonical_json(body(seq, entry))
    return SHA256_TAG + hashlib.sha256(text.encode()).hexdigest()


def extend(head_seq: int, head_hash: str, entries: Iterable[Entry]) -> list[Chained]:
    """`entries` placed after the chain's head, in order."""
    chained = []
    seq, prev = head_seq, head_hash
    for entry in entries:
        seq += 1
        made = entry_hash(prev, seq, entry)
        chained.append(Chained(seq, entry, prev, made))
        prev = made
    return chained


@dataclass(frozen=True)
class Break:
    """The first entry that does not hold, and why."""

    seq: int
    why: str


class Walk:
    """A chain checked entry by entry as it is read (no copy of it kept): `step` each one
    in `seq` order, then `end` with the chain's head."""

    def __init__(self) -> None:
        self.seq, self.prev = 0, GENESIS

    def step(self, item: Chained) -> Break | None:
        """A changed entry no longer has its hash; a removed one leaves a gap; a moved
        one no longer follows its predecessor's hash."""
        if item.seq != self.seq + 1:
            return Break(self.seq + 1, f"entry {self.seq + 1} is missing (next: {item.seq})")
        if item.prev_hash != self.prev:
            return Break(item.seq, "its prev_hash is not the previous entry's hash")
        if entry_hash(item.prev_hash, item.seq, item.entry) != item.hash:
            return Break(item.seq, "its hash does not match its content")
        self.seq, self.prev = item.seq, item.hash
        return None

    def end(self, head: tuple[int, str] | None) -> Break | None:
        """Entries removed from the end leave a chain shorter than its head says."""
        if head is not None and head != (self.seq, self.prev):
            return Break(self.seq + 1, f"the chain ends at entry {self.seq}, its head at {head[0]}")
        return None


def verify(stored: Iterable[Chained], *, head: tuple[int, str] | None = None) -> Break | None:
    """A chain as stored, in `seq` order: None when it holds, else its first break."""
    walk = Walk()
    for item in stored:
        broken = walk.step(item)
        if broken is not None:
            return broken
    return walk.end(head)
