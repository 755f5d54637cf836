"""Child runs in the database: the reservation a child's creation takes on its parent
(one conditional statement, in the creating transaction), a run's unfinished
descendants (for cancel propagation)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, Integer, Numeric, bindparam, func, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.guards import status_in
from app.db.tables import run
from app.domain.lifecycle.moves import RUN_UNFINISHED
from app.domain.limits.budget import Reserved

#: A child reserved its grant on the run named by the payload.
RESERVED_CHANNEL = "toolgate_reserved"


def _left(limit: str, kind: Any, *spent: Any) -> Any:
    """`(limits ->> limit)::kind - (spent...)`: what the run has neither spent nor
    reserved of one budget, as the row stands."""
    total = spent[0]
    for column in spent[1:]:
        total = total + column
    return run.c.limits.op("->>")(limit).cast(kind) - total


_RESERVE = (
    update(run)
    .where(
        run.c.tenant_id == bindparam("tenant"),
        run.c.id == bindparam("parent"),
        status_in(run.c.status, RUN_UNFINISHED),
        run.c.cancel_requested_at.is_(None),
        _left(
            "max_tokens",
            BigInteger(),
            run.c.input_tokens,
            run.c.output_tokens,
            run.c.children_input_tokens,
            run.c.children_output_tokens,
            run.c.reserved_tokens,
        )
        >= bindparam("tokens", type_=BigInteger()),
        _left(
            "max_cost_usd",
            Numeric(),
            run.c.cost_usd,
            run.c.children_cost_usd,
            run.c.reserved_cost_usd,
        )
        >= bindparam("cost", type_=Numeric(18, 8)),
        _left(
            "max_tool_calls",
            Integer(),
            run.c.tool_calls,
            run.c.children_tool_calls,
            run.c.reserved_tool_calls,
        )
        >= bindparam("calls", type_=Integer()),
    )
    .values(
        reserved_tokens=run.c.reserved_tokens + bindparam("tokens", type_=BigInteger()),
        reserved_cost_usd=run.c.reserved_cost_usd + bindparam("cost", type_=Numeric(18, 8)),
        reserved_tool_calls=run.c.reserved_tool_calls + bindparam("calls", type_=Integer()),
    )
    # Its holder hears of it (the channel's payload is "tenant run"): a turn it would hold
    # back is written at once instead, so the next calls' room counts the reservation.
    .returning(func.pg_notify(RESERVED_CHANNEL, run.c.tenant_id.concat(" ").concat(run.c.id)))
)


async def reserve(
    session: AsyncSession, *, tenant_id: str, parent_id: str, grant: Reserved
) -> bool:
    """Reserves a child's grant on its parent when the parent, as its row stands now (a
    concurrent reservation waited for and counted), is unfinished, not being cancelled
    and has room for all of it; False (nothing written) otherwise. The parent's row stays
    locked until the creating transaction ends, so concurrent creations queue on it."""
    params = {
        "tenant": tenant_id,
        "parent": parent_id,
        "tokens": grant.tokens,
        "cost": grant.cost_usd,
        "calls": grant.tool_calls,
    }
    return (await session.execute(_RESERVE, params)).first() is not None


# A run's unfinished descendants, deepest first: a cancel marks them before their
# ancestors, in the order a finishing child's settlement locks them (child, then parent).
_DESCENDANTS = text("""
WITH RECURSIVE down(id, depth) AS (
    SELECT id, 1 FROM run WHERE tenant_id = :tenant AND parent_run_id = :run
    UNION ALL
    SELECT r.id, down.depth + 1
    FROM run r JOIN down ON r.tenant_id = :tenant AND r.parent_run_id = down.id
    WHERE down.depth < 100
)
SELECT down.id FROM down JOIN run r ON r.tenant_id = :tenant AND r.id = down.id
WHERE r.status <> 'finished'
ORDER BY down.depth DESC, down.id
""")


async def unfinished_descendants(session: AsyncSession, tenant_id: str, run_id: str) -> list[str]:
    rows = await session.execute(_DESCENDANTS, {"tenant": tenant_id, "run": run_id})
    return [row.id for row in rows]


# How deep a run is: its ancestors, counted up to the root (bounded, like the rest).
_DEPTH = text("""
WITH RECURSIVE up(id, parent, depth) AS (
    SELECT id, parent_run_id, 0 FROM run WHERE tenant_id = :tenant AND id = :run
    UNION ALL
    SELECT r.id, r.parent_run_id, up.depth + 1
    FROM run r JOIN up ON r.tenant_id = :tenant AND r.id = up.parent
    WHERE up.depth < 100
)
SELECT max(depth) FROM up
""")


async def depth_of(session: AsyncSession, tenant_id: str, run_id: str) -> int:
    """0 for a root run, 1 for its child, …"""
    found = await session.execute(_DEPTH, {"tenant": tenant_id, "run": run_id})
    return int(found.scalar_one() or 0)
