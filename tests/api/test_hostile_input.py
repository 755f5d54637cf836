"""No input is answered with a 5xx: every operation of the API document, with hostile
values (NUL, lone surrogates, numbers out of range, forged cursors and event ids, bad
Host headers, bodies that are not JSON) in each place it reads one, everything else
valid: the answer is always a 4xx problem document."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from app.api.problems import PROBLEM_JSON, PROBLEM_TYPES
from app.api.schemas import approvals as approval_schemas
from app.api.schemas import catalog as catalog_schemas
from app.api.schemas import keys as key_schemas
from app.api.schemas import runs as schemas
from app.api.schemas import webhooks as webhook_schemas
from app.db.radar.radar_tables import technology
from app.openapi import openapi_json
from tests.support import hostile
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config

ALLOWED = {400, 401, 403, 404, 405, 409, 410, 415, 422}
DOCUMENT = json.loads(openapi_json())
OPERATIONS = [
    (method.upper(), path, operation)
    for path, operations in DOCUMENT["paths"].items()
    for method, operation in operations.items()
]
WRITER = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "move_technology_ring"]}

#: A valid body per operation that takes one; each of its leaves is then made hostile.
BODIES: dict[str, dict[str, Any]] = {
    "create_run": run_body(
        tool_calls(("c1", "search_technologies", {"query": "db"}), usage=(1, 1)),
        final("done", usage=(1, 1)),
        {"type": "error", "code": "boom", "message": "m", "delay_ms": 0},
        wait_s=0,
        tools=["search_technologies"],
        metadata={"ticket": "T-1"},
        limits={
            "max_steps": 2,
            "deadline_s": 30,
            "max_tokens": 100,
            "max_cost_usd": 0.5,
            "max_tool_calls": 2,
        },
    ),
    "advance_run": {"wait_s": 0},
    "approve_preview": {"content_hash": "sha256:00"},
    "reject_preview": {"reason": "not now"},
    "revise_preview": {"arguments": {"ring": "hold"}, "reason": "not now"},
    "commit_preview": {"wait_s": 0},
    "create_key": {"name": "hostile", "roles": ["caller"], "scopes": ["radar:read"]},
    "create_webhook": {"url": "https://hooks.example.com/x", "events": ["run.finished"]},
    "accept_declaration": {"declaration_hash": "sha256:" + "0" * 64},
}


class World:
    """Real values for every path parameter: a run parked on a pending preview."""

    def __init__(
        self,
        h: Harness,
        headers: dict[str, str],
        run: dict[str, Any],
        key_id: str,
        webhook_id: str,
    ) -> None:
        self.h = h
        self.headers = headers
        self.values = {
            "key_id": key_id,  # another key than the one the requests carry
            "run_id": run["id"],
            "webhook_id": webhook_id,
            "preview_id": run["pending_approvals"][0]["preview_id"],
            "name": "get_technology",
            "slug": "not-found",
        }


@pytest.fixture
async def world(harness_factory) -> World:  # type: ignore[no-untyped-def]
    config = make_config({"tech-radar": WRITER}, approvals={"allow_self_approval": True})
    h = await harness_factory(config=config)
    await seed_radar(h)
    headers = await h.key(roles="caller,approver,admin")
    async with h.runtime.sessions() as session:
        found = await session.execute(select(technology.c.id).where(technology.c.name == "Kafka"))
    move = {"technology_id": found.scalar_one(), "ring": "adopt", "rationale": "proven"}
    script = [tool_calls(("m1", "move_technology_ring", move)), final("moved")]
    run = (await h.client.post("/v1/runs", headers=headers, json=run_body(*script))).json()
    assert run["status"] == "awaiting_approval", run
    body = BODIES["create_key"]
    key = (await h.client.post("/v1/keys", headers=headers, json=body)).json()
    hook = await h.client.post("/v1/webhooks", headers=headers, json=BODIES["create_webhook"])
    return World(h, headers, run, key["id"], hook.json()["id"])


def _params(operation: dict[str, Any], where: str) -> list[dict[str, Any]]:
    return [p for p in operation.get("parameters", []) if p["in"] == where]


def _requests(
    method: str, template: str, operation: dict[str, Any], world: World
) -> Iterator[tuple[str, str, dict[str, Any], bytes | None]]:
    """(what, url, headers, body) for each hostile value in each place."""
    path = template.format(**world.values)
    base: dict[str, Any] = {**world.headers}
    if method == "POST":
        base["Idempotency-Key"] = secrets.token_hex(8)
    valid_body = BODIES.get(operation["operationId"])
    body = json.dumps(valid_body).encode() if valid_body is not None else None
    if body is not None:
        base["Content-Type"] = "application/json"
    for p in _params(operation, "path"):
        for value in hostile.PATH_VALUES:
            url = template.format(**{**world.values, p["name"]: value})
            yield f"path {p['name']}={value[:40]}", url, base, body
    for p in _params(operation, "query"):
        for value in _query_values(p):
            yield f"query {p['name']}={value[:40]}", f"{path}?{p['name']}={value}", base, body
    for name, values in _header_values(operation):
        for raw in values:
            headers = {**base, name: raw}
            if name == "Last-Event-ID":
                headers["Accept"] = "text/event-stream"
            yield f"header {name}={raw[:40]!r}", path, headers, body
    if valid_body is not None:
        for where, variant in hostile.body_variants(valid_body):
            yield f"body {where}", path, base, variant
    if "requestBody" in operation:
        for raw in hostile.RAW_BODIES:
            yield f"raw body {raw[:40]!r}", path, base, raw


def _query_values(parameter: dict[str, Any]) -> list[str]:
    schema = parameter["schema"]
    if schema.get("type") == "integer":
        return [*hostile.INTEGERS, str(schema.get("maximum", 0) + 1)]
    if parameter["name"] in ("cursor", "after"):
        return [*hostile.ENCODED, *hostile.CURSORS]
    return [*hostile.ENCODED, "x" * 3000]


def _header_values(operation: dict[str, Any]) -> Iterator[tuple[str, list[bytes]]]:
    yield "Authorization", [b"Bearer " + v for v in hostile.HEADER_TEXTS]
    yield "Host", [b"[", b"a b", b"evil.example:99x", *hostile.HEADER_TEXTS]
    for p in _params(operation, "header"):
        if p["name"] == "Last-Event-ID":
            yield p["name"], hostile.EVENT_IDS
        else:
            yield p["name"], [*hostile.HEADER_TEXTS, b"k" * 300, b"\xff"]


async def _send(
    client: httpx.AsyncClient, method: str, url: str, headers: dict[str, Any], body: bytes | None
) -> httpx.Response | None:
    """The answer, or None for an event stream opened (it would never end)."""
    request = client.request(method, url, headers=headers, content=body)
    try:
        return await asyncio.wait_for(request, 10)
    except TimeoutError:
        return None


def test_every_operation_with_a_body_has_a_valid_one_here() -> None:
    """So that a hostile leaf is the only thing wrong with each body sent."""
    takes_body = {op["operationId"]: op for _, _, op in OPERATIONS if "requestBody" in op}
    assert set(takes_body) == set(BODIES)
    for name, operation in takes_body.items():
        ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        name_of = ref.rsplit("/", 1)[1]
        model = (
            getattr(schemas, name_of, None)
            or getattr(approval_schemas, name_of, None)
            or getattr(key_schemas, name_of, None)
            or getattr(catalog_schemas, name_of, None)
            or getattr(webhook_schemas, name_of)
        )
        model.model_validate(BODIES[name])


@pytest.mark.parametrize(
    ("method", "path", "operation"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS]
)
async def test_hostile_values_are_answered_with_a_4xx_problem(
    world: World, method: str, path: str, operation: dict[str, Any]
) -> None:
    served = (await world.h.client.get("/openapi.json")).json()
    assert served["paths"][path][method.lower()] == operation
    wrong = []
    for what, url, headers, body in _requests(method, path, operation, world):
        response = await _send(world.h.client, method, url, headers, body)
        if response is None:
            wrong.append(f"{what}: a stream was opened")
        elif response.status_code not in ALLOWED or _problem_of(response) is None:
            wrong.append(f"{what}: {response.status_code} {response.text[:120]}")
    assert not wrong, f"{len(wrong)} answers were not a 4xx problem:\n" + "\n".join(wrong)


def _problem_of(response: httpx.Response) -> dict[str, Any] | None:
    if response.headers.get("content-type", "").split(";")[0] != PROBLEM_JSON:
        return None
    body = response.json()
    if body.get("code") not in PROBLEM_TYPES or body.get("status") != response.status_code:
        return None
    if "Traceback" in response.text:
        return None
    return body
