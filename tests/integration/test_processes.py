"""Real server processes: a replica killed mid-step is finished by another, and the
`make run` path (quickstart on an embedded Postgres) serves a demo run over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.session import make_sessionmaker
from app.db.tables import run as run_table
from app.db.tables import turn
from tests.support.backend import Answer, serving
from tests.support.factories import final
from tests.support.processes import caller_key, free_port, server, wait_finished, wait_healthy


async def test_a_replica_killed_mid_step_is_finished_by_another(
    db: AsyncEngine, database_url: str
) -> None:
    sessions = make_sessionmaker(db)
    key = await caller_key(sessions)
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "replica-1"}
    env = {
        "TOOLGATE_DATABASE_URL": database_url,
        "TOOLGATE_LEASE_S": "2",
        "TOOLGATE_DRIVER_POLL_S": "0.2",
    }
    port_a = free_port()
    with server(["serve", "--port", str(port_a)], env) as a:
        await wait_healthy(f"http://127.0.0.1:{port_a}")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port_a}", timeout=10) as client:
            response = await client.post(
                "/v1/runs",
                headers=headers,
                json={
                    "agent": "tech-radar",
                    "input": "q",
                    "wait_s": 0.5,
                    "script": [final("survived", delay_ms=2000, usage=(7, 3))],
                },
            )
        assert response.status_code == 201 and response.json()["status"] == "running"
        run_id = response.json()["id"]
        os.killpg(a.pid, signal.SIGKILL)  # mid model call, lease held
        a.wait(timeout=10)
    port_b = free_port()  # taken now: a port chosen long before may be another's by then
    with server(["serve", "--port", str(port_b)], env) as b:
        base_b = f"http://127.0.0.1:{port_b}"
        await wait_healthy(base_b, process=b)
        body = await wait_finished(base_b, headers, run_id)
    assert body["termination_reason"] == "final" and body["output"]["text"] == "survived"
    assert body["usage"]["steps"] == 1 and body["usage"]["input_tokens"] == 7
    async with sessions() as session:
        model_calls = (
            await session.execute(select(run_table.c.model_calls).where(run_table.c.id == run_id))
        ).scalar_one()
        turns = (
            await session.execute(
                select(func.count()).select_from(turn).where(turn.c.run_id == run_id)
            )
        ).scalar_one()
    assert model_calls == 1 and turns == 1


# A first start makes the embedded database's cluster (up to 120 s to be healthy).
@pytest.mark.timeout(240)
async def test_quickstart_serves_the_demo_on_an_embedded_postgres() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="toolgate-quickstart-"))
    port = free_port()
    env = {"TOOLGATE_DATA_DIR": str(data_dir)}
    try:
        with server(["quickstart", "--port", str(port)], env, unset=("TOOLGATE_DATABASE_URL",)):
            base = f"http://127.0.0.1:{port}"
            await wait_healthy(base, timeout_s=120)
            key = json.loads((data_dir / "demo-key.json").read_text())["key"]
            headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "quickstart-1"}
            async with httpx.AsyncClient(base_url=base, timeout=30) as client:
                assert (await client.get("/readyz")).status_code == 200
                response = await client.post(
                    "/v1/runs",
                    headers=headers,
                    json={
                        "agent": "tech-radar",
                        "input": "Which databases are in adopt?",
                        "script": [
                            {
                                "type": "tool_calls",
                                "calls": [
                                    {
                                        "id": "c1",
                                        "name": "search_technologies",
                                        "arguments": {"query": "postgres"},
                                    }
                                ],
                            },
                            final("PostgreSQL is in adopt [source:s1]"),
                        ],
                    },
                )
                assert response.status_code == 201, response.text
                body = response.json()
                assert body["termination_reason"] == "final"
                calls = (await client.get(f"/v1/runs/{body['id']}/calls", headers=headers)).json()
                names = [item["name"] for item in calls["items"][0]["output"]["items"]]
                assert "PostgreSQL" in names
        # SIGTERM stopped the service, and the embedded Postgres with it.
        postmaster = data_dir / "pg" / "postmaster.pid"
        for _ in range(50):
            if not postmaster.exists():
                break
            await asyncio.sleep(0.2)
        assert not postmaster.exists(), "the embedded Postgres outlived the service"
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


async def test_concurrent_identical_requests_create_one_run(
    db: AsyncEngine, database_url: str
) -> None:
    sessions = make_sessionmaker(db)
    key = await caller_key(sessions)
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "same-for-all"}
    body = {
        "agent": "tech-radar",
        "input": "q",
        "wait_s": 5,
        "script": [final("one run", delay_ms=300)],
    }
    port = free_port()
    with server(
        ["serve", "--port", str(port), "--workers", "2"], {"TOOLGATE_DATABASE_URL": database_url}
    ):
        base = f"http://127.0.0.1:{port}"
        await wait_healthy(base)
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            answers = await asyncio.gather(
                *[client.post("/v1/runs", headers=headers, json=body) for _ in range(12)]
            )
            statuses = sorted(r.status_code for r in answers)
            assert set(statuses) <= {201, 409}, statuses
            created = [r for r in answers if r.status_code == 201]
            originals = [r for r in created if "idempotent-replayed" not in r.headers]
            assert len(originals) == 1
            assert len({r.json()["id"] for r in created}) == 1
            for refused in (r for r in answers if r.status_code == 409):
                assert refused.json()["code"] == "idempotency-key-in-flight"
                assert "retry-after" in refused.headers
            later = await client.post("/v1/runs", headers=headers, json=body)
            assert later.status_code == 201 and later.headers["idempotent-replayed"] == "true"
            assert later.json()["id"] == originals[0].json()["id"]
    async with sessions() as session:
        runs = (await session.execute(select(func.count()).select_from(run_table))).scalar_one()
    assert runs == 1


def http_tool_config(
    folder: Path, backend_url: str, *, status_lookup: bool, idempotent: bool = False
) -> Path:
    ticket = {
        "kind": "http",
        "description": "Open a ticket.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"title": {"type": "string"}},
        },
        "url": f"{backend_url}/tools/ticket",
        "side_effects": True,
        "idempotent": idempotent,
        "timeout_s": 20,
    }
    if status_lookup:
        ticket["status_url"] = f"{backend_url}/operations"
    config = {
        "models": {"scripted": {"provider": "scripted"}},
        "tools": {"ticket": ticket},
        "agents": {"tech-radar": {"model": "scripted", "tools": ["ticket"]}},
    }
    path = folder / "toolgate.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


@pytest.mark.parametrize(
    ("status_lookup", "idempotent"),
    [(True, False), (False, False), (True, True)],
    ids=["status-lookup", "no-lookup", "idempotent-with-lookup"],
)
async def test_a_replica_killed_mid_side_effect_never_sends_it_twice(
    db: AsyncEngine, database_url: str, tmp_path: Path, status_lookup: bool, idempotent: bool
) -> None:
    """An idempotent tool may be re-sent, but with a lookup it is asked about first: the
    kill costs one request, not two."""
    sessions = make_sessionmaker(db)
    key = await caller_key(sessions)
    headers = {
        "Authorization": f"Bearer {key}",
        "Idempotency-Key": f"kill-{status_lookup}-{idempotent}",
    }
    async with serving() as backend:
        # The ticket is made at once, but its answer takes long: a dies before it comes.
        backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=4))
        config = http_tool_config(
            tmp_path, backend.url, status_lookup=status_lookup, idempotent=idempotent
        )
        env = {
            "TOOLGATE_DATABASE_URL": database_url,
            "TOOLGATE_CONFIG": str(config),
            "TOOLGATE_LEASE_S": "2",
            "TOOLGATE_DRIVER_POLL_S": "0.2",
        }
        port_a = free_port()
        script = [
            {"type": "tool_calls", "calls": [{"id": "c1", "name": "ticket", "arguments": {}}]},
            final("made it [source:s1]"),
        ]
        with server(["serve", "--port", str(port_a)], env) as a:
            await wait_healthy(f"http://127.0.0.1:{port_a}")
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port_a}") as client:
                body = {"agent": "tech-radar", "input": "q", "wait_s": 0, "script": script}
                response = await client.post("/v1/runs", headers=headers, json=body)
            run_id = response.json()["id"]
            await backend.wait_sent("ticket")
            os.killpg(a.pid, signal.SIGKILL)  # mid side effect: sent, not answered
            a.wait(timeout=10)
        port_b = free_port()  # taken now: a port chosen long before may be another's by then
        with server(["serve", "--port", str(port_b)], env) as b:
            base_b = f"http://127.0.0.1:{port_b}"
            await wait_healthy(base_b, process=b)
            finished = await wait_finished(base_b, headers, run_id)
        assert len(backend.sent("ticket")) == 1 and len(backend.effects) == 1
    if status_lookup:  # the survivor asked what became of it and recorded that
        assert finished["termination_reason"] == "final"
        assert backend.looked_up != []
    else:  # nobody can tell: it is never sent again
        assert finished["termination_reason"] == "tool_failed"
        assert finished["error"]["code"] == "outcome_unknown"
