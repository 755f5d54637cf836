"""The audit chain's use cases (SPEC §3.10): `record` an operator's action in the
transaction that makes it, page through a tenant's chain, and verify every chain."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.audit import entries
from app.db.session import retrying
from app.domain.audit.chain import Action, Break, Chained, Entry, Walk
from app.domain.errors import DomainError, ErrorCode, FieldError
from app.domain.guardrails.sensitive import redact_value
from app.domain.tools.specs import Principal

if TYPE_CHECKING:  # the runtime's own modules record actions: no cycle at run time
    from app.engine.runner import Runtime

#: The actor of what the command line does (`python -m app keys create`): the operator.
COMMAND_LINE = "operator (command line)"


async def record(
    session: AsyncSession,
    tenant_id: str,
    actor: str,
    action: Action,
    target: str,
    now: datetime,
    **data: Any,
) -> None:
    """One entry on the tenant's chain, in `session`'s transaction; call it last there,
    after the change it records (the chain's head is the last lock taken)."""
    entry = Entry(actor, action, target, now, redact_value(data))
    await entries.append(session, tenant_id, [entry])


async def page(
    rt: Runtime, *, principal: Principal, cursor: str | None, limit: int
) -> tuple[list[Chained], str | None]:
    """The tenant's entries, oldest first, after the cursor (the last seq seen)."""
    after = 0
    if cursor is not None:
        if not re.fullmatch(r"[0-9]{1,18}", cursor):
            message = "not a cursor this API gave"
            raise DomainError(ErrorCode.VALIDATION, message, [FieldError("cursor", message)])
        after = int(cursor)
    rows = await retrying(
        rt.reads, entries.page, tenant_id=principal.tenant_id, after=after, limit=limit + 1
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (str(rows[-1].seq) if more and rows else None)


@dataclass(frozen=True)
class Verdict:
    tenant_id: str
    entries: int
    broken: Break | None


async def verify_chains(
    sessions: async_sessionmaker[AsyncSession], tenant_id: str | None = None
) -> list[Verdict]:
    """Every chain (or one tenant's) walked in seq order against its head."""
    async with sessions() as session:
        heads = await entries.heads(session, tenant_id)
        names = [tenant_id] if tenant_id is not None else await entries.tenants(session)
        verdicts = []
        for name in names:
            verdicts.append(await _walked(session, name, heads.get(name)))
    return verdicts


async def _walked(session: AsyncSession, tenant_id: str, head: tuple[int, str] | None) -> Verdict:
    # Up to the head as read first: entries appended while the chain is walked are not
    # the chain that head closes (they are checked the next time).
    walk, count = Walk(), 0
    up_to = None if head is None else head[0]
    async for item in entries.chain(session, tenant_id, up_to=up_to):
        count += 1
        broken = walk.step(item)
        if broken is not None:
            return Verdict(tenant_id, count, broken)
    return Verdict(tenant_id, count, walk.end(head))
