"""Approvals from the outside: the writer agent and its radar, the caller's and the
approver's keys, a run parked on a preview, approving and committing it, the `ticket` HTTP
tool that needs approval, and the same for server processes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.clock import SystemClock
from app.db.radar.radar_tables import technology, technology_operation
from app.db.session import make_sessionmaker
from app.engine.access.keys import create_key
from tests.support.backend import FakeBackend
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config, serving

WRITER = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "move_technology_ring"]}


@asynccontextmanager
async def writer_console(settings: Any) -> AsyncIterator[tuple[str, Harness]]:
    """The writer agent's app served on loopback for a browser, its radar seeded: (its
    URL, a harness with a client for it)."""
    async with serving(settings, make_config({"tech-radar": WRITER})) as (url, h):
        await seed_radar(h)
        yield url, h


async def approvals_harness(harness_factory, **approvals: Any) -> Harness:  # type: ignore[no-untyped-def]
    config = make_config({"tech-radar": WRITER}, approvals=approvals or None)
    h = await harness_factory(config=config)
    await seed_radar(h)
    return h


async def row(h: Harness, name: str) -> dict[str, Any]:
    async with h.runtime.sessions() as session:
        found = await session.execute(
            select(technology).where(technology.c.tenant_id == "acme", technology.c.name == name)
        )
        return dict(found.mappings().one())


async def moved_meanwhile(h: Harness, tech_id: str, ring: str) -> None:
    """Someone else changes the technology's row (a new version) behind the preview."""
    async with h.runtime.sessions.begin() as session:
        await session.execute(
            update(technology)
            .where(technology.c.id == tech_id)
            .values(ring=ring, version=technology.c.version + 1)
        )


async def ledger_size(h: Harness) -> int:
    async with h.runtime.sessions() as session:
        return int(
            (
                await session.execute(select(func.count()).select_from(technology_operation))
            ).scalar_one()
        )


def move(tech_id: str, ring: str = "adopt", call_id: str = "m1") -> tuple[str, str, Any]:
    return (
        call_id,
        "move_technology_ring",
        {"technology_id": tech_id, "ring": ring, "rationale": "proven"},
    )


async def keys(h: Harness) -> tuple[dict[str, str], dict[str, str]]:
    """The product backend's key (caller) and an approver's, different subjects."""
    caller = await h.key(subject="svc-shop", roles="caller")
    approver = await h.key(subject="alice", roles="approver")
    return caller, approver


async def parked_run(h: Harness, caller: dict[str, str], *script: dict[str, Any]) -> dict[str, Any]:
    response = await h.client.post("/v1/runs", headers=caller, json=run_body(*script))
    assert response.status_code == 201, response.text
    run = response.json()
    assert run["status"] == "awaiting_approval", run
    return run


async def approved_kafka_move(
    h: Harness,
) -> tuple[dict[str, str], dict[str, str], dict[str, Any], str]:
    """A run parked on moving Kafka to adopt, its preview approved: (caller's headers,
    approver's headers, Kafka's row before, the preview's id)."""
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("Moved [source:s1]"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    await approve(h, approver, preview_id)
    return caller, approver, kafka, preview_id


async def events_of(h: Harness, headers: dict[str, str], run_id: str) -> list[dict[str, Any]]:
    answer = await h.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
    return answer.json()["items"]


async def approve(h: Harness, approver: dict[str, str], preview_id: str) -> dict[str, Any]:
    preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    answer = await h.client.post(
        f"/v1/previews/{preview_id}/approve",
        headers=approver,
        json={"content_hash": preview["content_hash"]},
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


async def commit(h: Harness, headers: dict[str, str], preview_id: str, key: str) -> Any:
    return await h.client.post(
        f"/v1/previews/{preview_id}/commit",
        headers={**headers, "Idempotency-Key": key},
        json={"wait_s": 5},
    )


def ticket_tool(backend: FakeBackend) -> dict[str, Any]:
    return {
        "kind": "http",
        "description": "Opens a ticket.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["q"],
            "properties": {"q": {"type": "string"}},
        },
        "url": backend.tool_url("ticket"),
        "preview_url": backend.preview_url("ticket"),
        "risk": "high",
        "side_effects": True,
        "idempotent": True,
        "timeout_s": 2,
    }


async def ticket_harness(harness_factory, backend: FakeBackend, **options: Any) -> Harness:  # type: ignore[no-untyped-def]
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "ticket"]}
    config = make_config({"tech-radar": agent}, tools={"ticket": ticket_tool(backend)})
    return await harness_factory(config=config, **options)


async def process_keys(db: AsyncEngine) -> tuple[dict[str, str], dict[str, str]]:
    """`keys()` for tests that run server processes: the caller's and an approver's."""
    sessions = make_sessionmaker(db)
    headers = []
    for subject, roles in (("svc-shop", ["caller"]), ("alice", ["approver"])):
        _, key = await create_key(
            sessions, SystemClock(), tenant_id="acme", subject=subject, roles=roles, scopes=None
        )
        headers.append({"Authorization": f"Bearer {key}"})
    return headers[0], headers[1]


def desk_env(backend: FakeBackend, database_url: str, folder: Path) -> dict[str, str]:
    """The environment of a server process whose agent `desk` has the `ticket` tool."""
    config = {
        "models": {"scripted": {"provider": "scripted"}},
        "tools": {"ticket": ticket_tool(backend)},
        "agents": {"desk": {"model": "scripted", "instructions": "Help.", "tools": ["ticket"]}},
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return {"TOOLGATE_DATABASE_URL": database_url, "TOOLGATE_CONFIG": str(path)}
