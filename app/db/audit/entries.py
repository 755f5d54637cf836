"""The audit chain's reads and its one write: `append` chains entries after their tenant's
head in the caller's transaction — the decision's or the operator action's own — locking
the head, so a tenant's appends follow one another and never fork the chain."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.dialects.postgresql import insert as upsert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.audit.tables import audit_entry, audit_head
from app.domain.audit.chain import GENESIS, Action, Chained, Entry, extend


async def append(session: AsyncSession, tenant_id: str, entries: Sequence[Entry]) -> list[Chained]:
    """Three statements, taken last in the transaction (after the run, preview and call
    it changes), so the head's lock is never held while waiting for another."""
    if not entries:
        return []
    # The head, created empty when the tenant has none yet, and locked either way.
    head = await session.execute(
        upsert(audit_head)
        .values(tenant_id=tenant_id, seq=0, hash=GENESIS)
        .on_conflict_do_update(index_elements=["tenant_id"], set_={"seq": audit_head.c.seq})
        .returning(audit_head.c.seq, audit_head.c.hash)
    )
    seq, last = head.one()
    chained = extend(seq, last, entries)
    await session.execute(insert(audit_entry), [_row(tenant_id, c) for c in chained])
    await session.execute(
        update(audit_head)
        .where(audit_head.c.tenant_id == tenant_id)
        .values(seq=chained[-1].seq, hash=chained[-1].hash)
    )
    return chained


def _row(tenant_id: str, item: Chained) -> dict[str, Any]:
    entry = item.entry
    return {
        "tenant_id": tenant_id,
        "seq": item.seq,
        "at": entry.at,
        "actor": entry.actor,
        "action": str(entry.action),
        "target": entry.target,
        "data": dict(entry.data),
        "prev_hash": item.prev_hash,
        "hash": item.hash,
    }


def to_chained(row: Mapping[str, Any]) -> Chained:
    # An action this code does not know (a newer replica's) is kept as its text: the hash
    # covers the text, and a verifier must not refuse what it cannot name.
    action = row["action"]
    known = action in Action._value2member_map_
    entry = Entry(
        actor=row["actor"],
        action=Action(action) if known else action,
        target=row["target"],
        at=row["at"],
        data=row["data"],
    )
    return Chained(row["seq"], entry, row["prev_hash"], row["hash"])


async def page(
    session: AsyncSession, *, tenant_id: str, after: int, limit: int, up_to: int | None = None
) -> list[Chained]:
    """The tenant's entries after `seq` `after` (and, with `up_to`, not past it), oldest
    first."""
    query = select(audit_entry).where(
        audit_entry.c.tenant_id == tenant_id, audit_entry.c.seq > after
    )
    if up_to is not None:
        query = query.where(audit_entry.c.seq <= up_to)
    result = await session.execute(query.order_by(audit_entry.c.seq).limit(limit))
    return [to_chained(r) for r in result.mappings()]


async def heads(session: AsyncSession, tenant_id: str | None = None) -> dict[str, tuple[int, str]]:
    """Each chain's head (one tenant's, with `tenant_id`)."""
    query = select(audit_head)
    if tenant_id is not None:
        query = query.where(audit_head.c.tenant_id == tenant_id)
    result = await session.execute(query)
    return {r["tenant_id"]: (r["seq"], r["hash"]) for r in result.mappings()}


async def tenants(session: AsyncSession) -> list[str]:
    """Every tenant with an entry (or a head): what `audit verify` walks."""
    entries = select(audit_entry.c.tenant_id).distinct()
    result = await session.execute(entries.union(select(audit_head.c.tenant_id)))
    return sorted(r[0] for r in result)


async def chain(
    session: AsyncSession, tenant_id: str, *, up_to: int | None = None, batch: int = 1000
) -> AsyncIterator[Chained]:
    """A tenant's whole chain (to `up_to`) in `seq` order, read `batch` entries at a time."""
    after = 0
    while True:
        rows = await page(session, tenant_id=tenant_id, after=after, limit=batch, up_to=up_to)
        for item in rows:
            yield item
        if len(rows) < batch:
            return
        after = rows[-1].seq
