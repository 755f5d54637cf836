"""The purges of `retention`, each a bounded batch in one statement, taking only rows no
other purger holds (`SKIP LOCKED`), so that several processes share the work; and the
counts a dry run shows. Only finished runs are touched: a run in flight or awaiting
approval is never selected, whatever its age; nor is a version of a technology that one
of them may still read."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.access import idempotency
from app.db.clock import DbTime
from app.domain.limits.retention import HISTORY_GRACE_S, Kind

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
# A row holds one write's events (migration 0021): the counts are of events, not rows.
_OLD_EVENTS = """
    SELECT e.tenant_id, e.run_id, e.last_seq, json_array_length(e.events) AS events
    FROM run r
    JOIN event e ON e.tenant_id = r.tenant_id AND e.run_id = r.id
    WHERE r.status = 'finished' AND r.finished_at < :before
"""
_PURGE_EVENTS = text(
    f"""
    WITH doomed AS ({_OLD_EVENTS} LIMIT :batch FOR UPDATE OF e SKIP LOCKED),
    gone AS (DELETE FROM event e USING doomed d
             WHERE e.tenant_id = d.tenant_id AND e.run_id = d.run_id
               AND e.last_seq = d.last_seq
             RETURNING d.events)
    SELECT coalesce(sum(events), 0), count(*) FROM gone
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
# The versions of technologies no run can read any more (history_tables.py): superseded
# by a version that every unfinished snapshot run of the tenant sees (written below the
# oldest `xmin` of their snapshots) and older than the grace period; and a deletion's
# tombstone once nothing older is left and every such run sees it. A tenant without a
# snapshot run in progress keeps only each technology's latest version.
_HORIZON = """
    SELECT COALESCE(min(pg_snapshot_xmin(CAST(r.read_snapshot AS pg_snapshot))::text::bigint),
                    9223372036854775807)
    FROM run r
    WHERE r.tenant_id = v.tenant_id AND r.read_snapshot IS NOT NULL AND r.status <> 'finished'
"""
_OLD_HISTORY = f"""
    SELECT v.tenant_id, v.id, v.version FROM technology_version v
    WHERE EXISTS (SELECT 1 FROM technology_version n
                  WHERE n.tenant_id = v.tenant_id AND n.id = v.id AND n.version > v.version
                    AND n.written_at < now() + CAST(:grace AS interval)
                    AND n.xid < ({_HORIZON}))
       OR (v.deleted AND v.written_at < now() + CAST(:grace AS interval)
           AND v.xid < ({_HORIZON})
           AND NOT EXISTS (SELECT 1 FROM technology_version o
                           WHERE o.tenant_id = v.tenant_id AND o.id = v.id
                             AND o.version < v.version))
"""
_PURGE_HISTORY = text(
    f"""
    WITH doomed AS ({_OLD_HISTORY} LIMIT :batch FOR UPDATE OF v SKIP LOCKED)
    DELETE FROM technology_version t USING doomed d
    WHERE t.tenant_id = d.tenant_id AND t.id = d.id AND t.version = d.version
    """
)
_PURGES = {
    Kind.RUNS: _PURGE_RUNS,
    Kind.EVENTS: _PURGE_EVENTS,
    Kind.DELIVERIES: _PURGE_DELIVERIES,
    Kind.TECHNOLOGY_HISTORY: _PURGE_HISTORY,
}
_COUNTS = {
    Kind.RUNS: text(f"SELECT count(*) FROM ({_OLD_RUNS}) AS old"),
    Kind.EVENTS: text(f"SELECT coalesce(sum(events), 0) FROM ({_OLD_EVENTS}) AS old"),
    Kind.DELIVERIES: text(f"SELECT count(*) FROM ({_OLD_DELIVERIES}) AS old"),
    # A key's expiry is on the database's clock: `before` is not used for it.
    Kind.IDEMPOTENCY_KEYS: text("SELECT count(*) FROM idempotency_key WHERE expires_at < now()"),
    # Nor for the history: what the runs in progress need, and a grace on that clock.
    Kind.TECHNOLOGY_HISTORY: text(f"SELECT count(*) FROM ({_OLD_HISTORY}) AS old"),
}


def _params(kind: Kind, before: datetime, db_time: DbTime) -> dict[str, object]:
    if kind is Kind.TECHNOLOGY_HISTORY:
        return {"grace": db_time.interval(-HISTORY_GRACE_S)}
    return {} if kind is Kind.IDEMPOTENCY_KEYS else {"before": before}


class Batch(NamedTuple):
    #: What went: runs, events, deliveries, keys, versions.
    removed: int
    #: The rows that held them, at most the batch: fewer, and nothing older is left. (An
    #: event row holds one write's events: migration 0021.)
    rows: int


async def purge(
    session: AsyncSession, kind: Kind, *, before: datetime, batch: int, db_time: DbTime
) -> Batch:
    """Removes at most `batch` rows of `kind` older than `before` (a key: expired on the
    database's clock)."""
    if kind is Kind.IDEMPOTENCY_KEYS:
        gone = await idempotency.purge_expired(session, db_time=db_time, limit=batch)
        return Batch(gone, gone)
    params = {**_params(kind, before, db_time), "batch": batch}
    result = await session.execute(_PURGES[kind], params)
    if kind is Kind.EVENTS:
        events, rows = result.one()
        return Batch(int(events), int(rows))
    gone = int(result.rowcount)  # type: ignore[attr-defined]
    return Batch(gone, gone)


async def count(
    session: AsyncSession, kind: Kind, *, before: datetime, db_time: DbTime | None = None
) -> int:
    """How many of `kind` a purge would remove now (runs, events, deliveries, ...)."""
    params = _params(kind, before, db_time or DbTime())
    return int((await session.execute(_COUNTS[kind], params)).scalar_one())
