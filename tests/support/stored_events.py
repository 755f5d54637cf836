"""A tenant's events as the database holds them, one per row, whatever the storage (a row
of `event` holds one write's events): for tests that check what was written, beside the
API that reads it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

_UNPACKED = text(
    """
    SELECT e.run_id, e.seq + i.ord - 1 AS seq, i.item ->> 0 AS type, i.item -> 1 AS data, e.xid
    FROM event e
    CROSS JOIN LATERAL json_array_elements(e.events) WITH ORDINALITY AS i(item, ord)
    WHERE e.tenant_id = :tenant
    ORDER BY e.run_id, seq
    """
)


async def stored_events(session: AsyncSession, tenant: str = "acme") -> list[Any]:
    """Rows of (run_id, seq, type, data, xid), by run and seq."""
    return list((await session.execute(_UNPACKED, {"tenant": tenant})).all())
