"""The radar as a snapshot saw it: reads of `technology_version` (see history_tables.py).

A technology as of a snapshot is its highest version written by a transaction the
snapshot sees (`pg_visible_in_snapshot`): a write committed before the snapshot was taken,
never one in flight then or committed after. A tombstone as that version means it was
deleted by then; no version at all, that it did not exist yet."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.radar.technologies import Technology

_COLUMNS = "id, name, category, ring, description, version, updated_at"

# Per technology of the tenant, the version the snapshot sees. The primary key
# (tenant_id, id, version) serves it; the purge keeps few superseded versions.
_AS_OF = f"""
    SELECT DISTINCT ON (id) {_COLUMNS}, deleted FROM technology_version
    WHERE tenant_id = :tenant_id
      AND pg_visible_in_snapshot(xid::text::xid8, CAST(CAST(:snapshot AS text) AS pg_snapshot))
"""
_CONTAINS = "strpos(lower({column}), lower(:needle)) > 0"
_MATCH = " OR ".join(_CONTAINS.format(column=c) for c in ("name", "category", "description"))


def _search_statement(with_ring: bool) -> Any:
    # The same matching as `technologies.search` (strpos: % and _ match literally),
    # applied to the versions the snapshot sees.
    ring = "AND ring = :ring" if with_ring else ""
    return text(
        f"""
        WITH seen AS ({_AS_OF} ORDER BY id, version DESC)
        SELECT {_COLUMNS}, count(*) OVER () AS total FROM seen
        WHERE NOT deleted AND ({_MATCH}) {ring}
        ORDER BY name LIMIT :limit
        """
    )


_SEARCH = {with_ring: _search_statement(with_ring) for with_ring in (False, True)}
_GET = text(f"{_AS_OF} AND id = :tech_id ORDER BY id, version DESC")


async def search(
    session: AsyncSession,
    *,
    tenant_id: str,
    snapshot: str,
    query: str,
    ring: str | None,
    limit: int,
) -> tuple[list[Technology], int]:
    """`technology_repo.search` as of `snapshot`."""
    params: dict[str, Any] = {
        "tenant_id": tenant_id,
        "snapshot": snapshot,
        "needle": query,
        "limit": limit,
    }
    if ring:
        params["ring"] = ring
    rows = (await session.execute(_SEARCH[bool(ring)], params)).all()
    return [Technology(*row[:-1]) for row in rows], int(rows[0].total) if rows else 0


async def get(
    session: AsyncSession, *, tenant_id: str, tech_id: str, snapshot: str
) -> Technology | None:
    """The technology as of `snapshot`; None when it did not exist then (or was deleted)."""
    row = (
        await session.execute(
            _GET, {"tenant_id": tenant_id, "tech_id": tech_id, "snapshot": snapshot}
        )
    ).one_or_none()
    if row is None or row.deleted:
        return None
    return Technology(*row[:-1])
