"""The purges of `retention`, each a bounded batch in one statement, taking only rows no
other purger holds (`SKIP LOCKED`), so that several processes share the work; and the
counts a dry run shows. Only finished runs are touched: a run in flight or awaiting
approval is never selected, whatever its age."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import idempotency_repo
from app.db.clock import DbTime
from app.domain.retention import Kind

_OLD_RUNS = """
    SELECT tenant_id, id FROM run
    WHERE status = 'finished' AND finished_at < :before
    ORDER BY finished_at
"""
# A finished run and everything it holds; the foreign keys are checked at the end of the
# statement, when every child row is gone too.
_PURGE_RUNS = text(
    f"""
    WITH doomed AS ({_OLD_RUNS} LIMIT :batch FOR UPDATE SKIP LOCKED),
    previews AS (DELETE FROM preview p USING doomed d
                 WHERE p.tenant_id = d.tenant_id AND p.run_id = d.id),
    calls AS (DELETE FROM tool_call c USING doomed d
              WHERE c.tenant_id = d.tenant_id AND c.run_id = d.id),
    turns AS (DELETE FROM turn t USING doomed d
              WHERE t.tenant_id = d.tenant_id AND t.run_id = d.id),
    events AS (DELETE FROM event e USING doomed d
               WHERE e.tenant_id = d.tenant_id AND e.run_id = d.id),
    scripts AS (DELETE FROM run_script s USING doomed d
                WHERE s.tenant_id = d.tenant_id AND s.run_id = d.id)
    DELETE FROM run r USING doomed d WHERE r.tenant_id = d.tenant_id AND r.id = d.id
    """
)
_OLD_EVENTS = """
    SELECT e.tenant_id, e.run_id, e.seq FROM run r
    JOIN event e ON e.tenant_id = r.tenant_id AND e.run_id = r.id
    WHERE r.status = 'finished' AND r.finished_at < :before
"""
_PURGE_EVENTS = text(
    f"""
    WITH doomed AS ({_OLD_EVENTS} LIMIT :batch FOR UPDATE OF e SKIP LOCKED)
    DELETE FROM event e USING doomed d
    WHERE e.tenant_id = d.tenant_id AND e.run_id = d.run_id AND e.seq = d.seq
    """
)
_OLD_DELIVERIES = """
    SELECT tenant_id, id FROM webhook_delivery
    WHERE status <> 'pending' AND finished_at < :before
"""
_PURGE_DELIVERIES = text(
    f"""
    WITH doomed AS ({_OLD_DELIVERIES} LIMIT :batch FOR UPDATE SKIP LOCKED)
    DELETE FROM webhook_delivery w USING doomed d
    WHERE w.tenant_id = d.tenant_id AND w.id = d.id
    """
)
_PURGES = {Kind.RUNS: _PURGE_RUNS, Kind.EVENTS: _PURGE_EVENTS, Kind.DELIVERIES: _PURGE_DELIVERIES}
_COUNTS = {
    Kind.RUNS: text(f"SELECT count(*) FROM ({_OLD_RUNS}) AS old"),
    Kind.EVENTS: text(f"SELECT count(*) FROM ({_OLD_EVENTS}) AS old"),
    Kind.DELIVERIES: text(f"SELECT count(*) FROM ({_OLD_DELIVERIES}) AS old"),
    # A key's expiry is on the database's clock: `before` is not used for it.
    Kind.IDEMPOTENCY_KEYS: text("SELECT count(*) FROM idempotency_key WHERE expires_at < now()"),
}


async def purge(
    session: AsyncSession, kind: Kind, *, before: datetime, batch: int, db_time: DbTime
) -> int:
    """Removes at most `batch` rows of `kind` older than `before` (a key: expired on the
    database's clock); how many went (for runs: how many runs)."""
    if kind is Kind.IDEMPOTENCY_KEYS:
        return await idempotency_repo.purge_expired(session, db_time=db_time, limit=batch)
    result = await session.execute(_PURGES[kind], {"before": before, "batch": batch})
    return int(result.rowcount)  # type: ignore[attr-defined]


async def count(session: AsyncSession, kind: Kind, *, before: datetime) -> int:
    """How many rows of `kind` a purge would remove now (for runs: how many runs)."""
    params = {} if kind is Kind.IDEMPOTENCY_KEYS else {"before": before}
    return int((await session.execute(_COUNTS[kind], params)).scalar_one())
