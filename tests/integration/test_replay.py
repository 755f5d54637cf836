"""`python -m app replay RUN_ID`, run as an operator runs it, on a database of its own: a
recorded run replays with no difference; a changed tool schema or tool set is reported
as the first differing transition; what cannot be replayed is a clear usage error."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from asgi_lifespan import LifespanManager
from pydantic import SecretStr
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import create_async_engine

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from app.config.settings import Settings
from app.db import migrate
from app.db.radar.radar_tables import technology
from app.db.tables import run
from app.main import create_app
from tests.support.approvals import approve, commit, move
from tests.support.backend import FakeBackend, serving
from tests.support.dbserver import fresh_database
from tests.support.factories import error, final, run_body, seed_radar, tool_calls
from tests.support.harness import Harness
from tests.support.processes import run_cli

QUERY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["q"],
    "properties": {"q": {"type": "string"}},
}
RADAR = ["search_technologies", "get_technology", "move_technology_ring"]


def config_of(backend: FakeBackend, *, schema: dict[str, Any] = QUERY, lookup: bool = True) -> dict:
    http = {"kind": "http", "input_schema": schema, "timeout_s": 5}
    return {
        "models": {
            "scripted": {
                "provider": "scripted",
                "input_cost_per_mtok": 1,
                "output_cost_per_mtok": 2,
            }
        },
        "tools": {
            "lookup": {
                **http,
                "description": "Looks a term up.",
                "url": backend.tool_url("lookup"),
            },
            "ticket": {
                **http,
                "description": "Opens a ticket.",
                "url": backend.tool_url("ticket"),
                "side_effects": True,
            },
        },
        "agents": {
            "tech-radar": {
                "model": "scripted",
                "instructions": "Answer from the radar. Cite sources.",
                "tools": [*RADAR, *(["lookup"] if lookup else []), "ticket"],
            }
        },
    }


@dataclass
class Recording:
    env: dict[str, str]
    backend: FakeBackend
    folder: Path
    url: str
    #: A finished run of several tool-call turns, a model error, an approval and a final.
    run_id: str
    #: A run still awaiting approval.
    parked_id: str
    #: A finished run that called `ticket`, an HTTP tool with side effects.
    ticket_id: str

    def replay(self, *args: str, config: dict | None = None) -> Any:
        env = dict(self.env)
        if config is not None:
            path = self.folder / f"config-{secrets.token_hex(4)}.yaml"
            path.write_text(yaml.safe_dump(config))
            env["TOOLGATE_CONFIG"] = str(path)
        # In a thread: the fake backend answers from this event loop meanwhile.
        return asyncio.to_thread(run_cli, "replay", *args, env=env)


@pytest.fixture(scope="module")
def own_database(db_server: tuple[str, str]) -> Iterator[str]:
    with fresh_database(db_server[1]) as url:
        yield url


@pytest.fixture(scope="module")
async def recording(own_database: str, tmp_path_factory: Any) -> AsyncIterator[Recording]:
    folder = tmp_path_factory.mktemp("replay")
    engine = create_async_engine(own_database)
    await migrate.upgrade(engine)
    await engine.dispose()
    async with serving() as backend:
        config = config_of(backend)
        (folder / "config.yaml").write_text(yaml.safe_dump(config))
        env = {
            "TOOLGATE_DATABASE_URL": own_database,
            "TOOLGATE_CONFIG": str(folder / "config.yaml"),
        }
        settings = Settings(database_url=SecretStr(own_database))
        app = create_app(
            settings, config=parse_config(config, builtin_tools=SPECS), run_driver=False
        )
        async with (
            LifespanManager(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=60
            ) as client,
        ):
            h = Harness(app, client)
            await seed_radar(h)
            ids = await _radar_ids(h)
            run_id = await _record(h, ids)
            parked_id, ticket_id = await _record_others(h, ids)
        yield Recording(env, backend, folder, own_database, run_id, parked_id, ticket_id)


async def _radar_ids(h: Harness) -> dict[str, str]:
    async with h.runtime.sessions() as session:
        rows = await session.execute(select(technology.c.name, technology.c.id))
    return dict(rows.all())


async def _create(h: Harness, caller: dict[str, str], *script: dict[str, Any]) -> dict:
    headers = {**caller, "Idempotency-Key": secrets.token_hex(8)}
    answer = await h.client.post("/v1/runs", headers=headers, json=run_body(*script))
    assert answer.status_code == 201, answer.text
    return answer.json()


async def _record(h: Harness, ids: dict[str, str]) -> str:
    caller = await h.key(subject="svc-shop", roles="caller")
    approver = await h.key(subject="alice", roles="approver")
    lookup = ("c2", "lookup", {"q": "kafka"})
    get = ("c3", "get_technology", {"technology_id": ids["PostgreSQL"]})
    # A repeated call id is refused; the write waits for approval; the model says why.
    writes = tool_calls(get, get, move(ids["Kafka"]), usage=(200, 40))
    writes["text"] = "Kafka is proven in three services: adopt it."
    script = [
        tool_calls(("c1", "search_technologies", {"query": "database"}), lookup, usage=(120, 30)),
        error("rate_limited", retryable=True),
        writes,
        final("PostgreSQL is in adopt [source:s1]", usage=(300, 50)),
    ]
    parked = await _create(h, caller, *script)
    assert parked["status"] == "awaiting_approval", parked
    preview_id = parked["pending_approvals"][0]["preview_id"]
    await approve(h, approver, preview_id)
    answer = await commit(h, approver, preview_id, secrets.token_hex(8))
    assert answer.status_code == 200, answer.text
    done = answer.json()["run"]
    assert (done["status"], done["termination_reason"]) == ("finished", "final"), done
    return done["id"]


async def _record_others(h: Harness, ids: dict[str, str]) -> tuple[str, str]:
    caller = await h.key(subject="svc-shop", roles="caller")
    parked = await _create(h, caller, tool_calls(move(ids["GraphQL"])), final("moved"))
    assert parked["status"] == "awaiting_approval"
    ticket = await _create(h, caller, tool_calls(("t1", "ticket", {"q": "x"})), final("done"))
    assert ticket["status"] == "finished", ticket
    return parked["id"], ticket["id"]


def _difference(stdout: str) -> tuple[int, dict, dict | None]:
    head, recorded, replayed = stdout.strip().splitlines()
    assert head.startswith("first difference at seq "), stdout
    seq = int(head.removeprefix("first difference at seq "))
    mine = json.loads(recorded.removeprefix("recorded: "))
    theirs = replayed.removeprefix("replayed: ")
    return seq, mine, None if theirs.startswith("none") else json.loads(theirs)


async def test_a_recorded_run_replays_with_no_difference(recording: Recording) -> None:
    looked_up = len(recording.backend.sent("lookup"))
    done = await recording.replay(recording.run_id)
    assert (done.returncode, done.stdout.strip()) == (0, "no difference"), done.stderr[-3000:]
    # The HTTP tool was called again, for real; the scratch tenant's radar is gone, its
    # run is kept (finished), and the recorded tenant's radar was not touched.
    assert len(recording.backend.sent("lookup")) == looked_up + 1
    engine = create_async_engine(recording.url)
    try:
        async with engine.connect() as connection:
            replayed = (
                await connection.execute(
                    select(run.c.status, run.c.termination_reason).where(
                        run.c.tenant_id.like("replay-%")
                    )
                )
            ).all()
            scratch_rows = (
                await connection.execute(
                    select(func.count())
                    .select_from(technology)
                    .where(technology.c.tenant_id.like("replay-%"))
                )
            ).scalar_one()
            kafka = (
                await connection.execute(
                    select(technology.c.ring, technology.c.version).where(
                        technology.c.tenant_id == "acme", technology.c.name == "Kafka"
                    )
                )
            ).one()
    finally:
        await engine.dispose()
    assert ("finished", "final") in [tuple(r) for r in replayed]
    assert scratch_rows == 0 and tuple(kafka) == ("adopt", 2)


@pytest.mark.parametrize(
    ("change", "recorded_type", "replayed_type"),
    [
        # The HTTP tool's schema narrowed: the recorded arguments are now refused.
        (
            {"schema": {**QUERY, "properties": {"q": {"type": "string", "maxLength": 3}}}},
            "call.started",
            "call.rejected",
        ),  # fmt: skip
        # The agent lost the tool: the run is created with another tool set.
        ({"lookup": False}, "run.created", "run.created"),
    ],
)
async def test_a_changed_tool_is_reported_as_the_first_difference(
    recording: Recording, change: dict[str, Any], recorded_type: str, replayed_type: str
) -> None:
    done = await recording.replay(recording.run_id, config=config_of(recording.backend, **change))
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    seq, mine, theirs = _difference(done.stdout)
    assert theirs is not None and mine["seq"] == seq
    assert (mine["type"], theirs["type"]) == (recorded_type, replayed_type)
    if replayed_type == "call.rejected":
        assert theirs["data"]["code"] == "invalid_arguments"
        assert theirs["data"]["call_id"] == "c2" and "c2" not in json.dumps(mine["data"])
    else:
        assert seq == 1 and "lookup" in mine["data"]["tools"]
        assert "lookup" not in theirs["data"]["tools"]


async def test_what_cannot_be_replayed_is_a_usage_error(recording: Recording) -> None:
    cases = [
        ((recording.parked_id,), "awaiting_approval"),
        (("run_nosuchrun",), "no run"),
        # Not UTF-8 (a lone surrogate once decoded): Postgres could not even compare it.
        (("run_\udcff",), "no run"),
        ((recording.run_id, "--tenant", "someone-else"), "no run"),
        ((recording.ticket_id,), "--side-effects"),
    ]
    # Side by side: each is a process of its own, refused before it changes anything.
    answers = await asyncio.gather(*(recording.replay(*args) for args, _ in cases))
    for (args, said), done in zip(cases, answers, strict=True):
        assert done.returncode == 2, (args, done.stdout, done.stderr[-3000:])
        assert said in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
        assert done.stdout == ""


async def test_a_tool_with_side_effects_is_called_again_only_when_allowed(
    recording: Recording,
) -> None:
    sent = len(recording.backend.sent("ticket"))
    done = await recording.replay(recording.ticket_id, "--tenant", "acme", "--side-effects")
    assert (done.returncode, done.stdout.strip()) == (0, "no difference"), done.stderr[-3000:]
    assert len(recording.backend.sent("ticket")) == sent + 1
