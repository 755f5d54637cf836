"""A run's records, read back as the domain needs them: the model's context, the sources
it may cite, and the calls the next decision looks at."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import turns_repo
from app.db.runs_repo import RunRecord
from app.domain.citations import cited_ids
from app.domain.context import CallRecord, TurnRecord
from app.domain.status import CallStatus
from app.domain.steps import CallState


async def turn_records(session: AsyncSession, run: RunRecord) -> list[TurnRecord]:
    turns = await turns_repo.turns(session, tenant_id=run.tenant_id, run_id=run.id)
    calls = await turns_repo.calls(session, tenant_id=run.tenant_id, run_id=run.id)
    by_step: dict[int, list[CallRecord]] = {}
    for c in calls:
        by_step.setdefault(c["step"], []).append(
            CallRecord(
                c["call_id"],
                c["tool"],
                c["arguments"],
                c["status"],
                c["output"],
                c["source_id"],
                c["error"],
            )
        )
    return [
        TurnRecord(
            t["step"],
            t["kind"],
            t["text"],
            t["rejection"],
            tuple(by_step.get(t["step"], [])),
            tuple(t["extra_rejections"] or ()),
        )
        for t in turns
    ]


async def sources(session: AsyncSession, run: RunRecord) -> dict[str, Mapping[str, Any]]:
    calls = await turns_repo.calls(session, tenant_id=run.tenant_id, run_id=run.id)
    return {c["source_id"]: c for c in calls if c["source_id"]}


def citations(text: str, produced: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "source_id": sid,
            "tool": produced[sid]["tool"],
            "observed_at": produced[sid]["observed_at"],
            "source_version": produced[sid]["source_version"],
        }
        for sid in cited_ids(text)
        if sid in produced
    ]


def call_states(calls: list[Mapping[str, Any]]) -> list[CallState]:
    states = []
    for c in calls:
        status = CallStatus(c["status"])
        error = c["error"] or {}
        unnumbered = status is CallStatus.SUCCEEDED and c["source_id"] is None
        states.append(
            CallState(status, error.get("code"), c["ends_run"], error.get("message"), unnumbered)
        )
    return states
