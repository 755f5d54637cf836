"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.api.deps import RuntimeDep
from app.api.problems import ProblemError
from app.api.responses import problems
from app.api.schemas.runs import ReadyOut
from app.db.migrate import current_revision, head_revision

router = APIRouter(tags=["health"])


@router.get("/healthz", responses=problems())
async def healthz() -> dict[str, str]:
    """The process is alive. Touches no database."""
    return {"status": "ok"}


@router.get("/readyz", response_model=ReadyOut, responses=problems())
async def readyz(rt: RuntimeDep) -> Any:
    """The database is reachable and its schema is at the newest migration."""
    engine = rt.sessions.kw["bind"]
    async with engine.connect() as connection:  # the revision's read proves it reachable
        revision = await current_revision(connection)
    if revision != head_revision():
        raise ProblemError(
            "unavailable",
            "the database schema is not at the newest migration",
            headers={"Retry-After": "5"},
        )
    return {"status": "ready", "revision": revision}
