"""Who may do what (SPEC §3 roles table), tenants never see each other's runs (another
tenant's run is `404`, never `403`), and scopes narrow the tools a run exposes."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.support.harness import Harness

FINAL_ONLY = [{"type": "final", "text": "done"}]


def idem() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


async def create_run(harness: Harness, headers: dict[str, str], **overrides: Any) -> dict[str, Any]:
    body = {"agent": "tech-radar", "input": "x", "script": FINAL_ONLY, **overrides}
    r = await harness.client.post("/v1/runs", headers={**headers, **idem()}, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def assert_problem(response: httpx.Response, status: int, slug: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].split(";")[0] == "application/problem+json"
    body = response.json()
    assert body["code"] == slug and body["status"] == status, body
    assert body["instance"] == response.request.url.path, body


def keys_in(value: Any) -> set[str]:
    """Every object key anywhere in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


# -- roles --------------------------------------------------------------------------------


async def test_approver_can_read_runs_but_not_drive_them(harness: Harness) -> None:
    caller = await harness.key(subject="svc-shop", roles="caller")
    approver = await harness.key(subject="alice", roles="approver")
    run = await create_run(harness, caller)
    run_id = run["id"]

    listed = await harness.client.get("/v1/runs", headers=approver)
    assert listed.status_code == 200, listed.text
    assert [r["id"] for r in listed.json()["items"]] == [run_id]
    one = await harness.client.get(f"/v1/runs/{run_id}", headers=approver)
    assert one.status_code == 200 and one.json()["id"] == run_id
    for sub in ("events", "calls"):
        r = await harness.client.get(f"/v1/runs/{run_id}/{sub}", headers=approver)
        assert r.status_code == 200, r.text

    refused = [
        await harness.client.post(
            "/v1/runs",
            headers={**approver, **idem()},
            json={"agent": "tech-radar", "input": "x", "script": FINAL_ONLY},
        ),
        await harness.client.post(f"/v1/runs/{run_id}/advance", headers={**approver, **idem()}),
        await harness.client.post(f"/v1/runs/{run_id}/cancel", headers={**approver, **idem()}),
    ]
    for r in refused:
        assert_problem(r, 403, "forbidden")
    listed = await harness.client.get("/v1/runs", headers=caller)
    assert [r["id"] for r in listed.json()["items"]] == [run_id]  # nothing was created


async def test_admin_only_key_cannot_touch_runs(harness: Harness) -> None:
    caller = await harness.key(roles="caller")
    admin = await harness.key(subject="ops", roles="admin")
    run = await create_run(harness, caller)
    assert_problem(await harness.client.get("/v1/runs", headers=admin), 403, "forbidden")
    assert_problem(
        await harness.client.get(f"/v1/runs/{run['id']}", headers=admin), 403, "forbidden"
    )
    assert_problem(
        await harness.client.post(
            "/v1/runs",
            headers={**admin, **idem()},
            json={"agent": "tech-radar", "input": "x", "script": FINAL_ONLY},
        ),
        403,
        "forbidden",
    )


async def test_caller_can_drive_runs(harness: Harness) -> None:
    caller = await harness.key(roles="caller")
    run = await create_run(
        harness, caller, script=[{"type": "final", "text": "ok", "delay_ms": 5000}], wait_s=0
    )
    assert run["status"] in ("queued", "running"), run
    r = await harness.client.post(f"/v1/runs/{run['id']}/cancel", headers={**caller, **idem()})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "finished" and r.json()["termination_reason"] == "cancelled"


async def test_a_forged_key_reads_nothing(harness: Harness) -> None:
    caller = await harness.key()
    await create_run(harness, caller)
    forged = {"Authorization": caller["Authorization"] + "x"}
    assert_problem(await harness.client.get("/v1/runs", headers=forged), 401, "unauthenticated")


# -- tenancy ------------------------------------------------------------------------------


async def test_other_tenants_run_is_not_found_everywhere(harness: Harness) -> None:
    acme = await harness.key(tenant="acme", subject="svc")
    globex = await harness.key(tenant="globex", subject="svc")  # same subject, other tenant
    run = await create_run(
        harness, acme, script=[{"type": "final", "text": "ok", "delay_ms": 5000}], wait_s=0
    )
    run_id = run["id"]

    for path in (f"/v1/runs/{run_id}", f"/v1/runs/{run_id}/events", f"/v1/runs/{run_id}/calls"):
        assert_problem(await harness.client.get(path, headers=globex), 404, "not-found")
    for path in (f"/v1/runs/{run_id}/advance", f"/v1/runs/{run_id}/cancel"):
        r = await harness.client.post(path, headers={**globex, **idem()})
        assert_problem(r, 404, "not-found")

    # the other tenant's attempts changed nothing: the run was not cancelled
    mine = await harness.client.get(f"/v1/runs/{run_id}", headers=acme)
    assert mine.status_code == 200
    events = await harness.client.get(f"/v1/runs/{run_id}/events", headers=acme)
    assert "run.cancel_requested" not in [e["type"] for e in events.json()["items"]]
    r = await harness.client.post(f"/v1/runs/{run_id}/cancel", headers={**acme, **idem()})
    assert r.status_code == 200 and r.json()["termination_reason"] == "cancelled", r.text


async def test_other_tenants_runs_are_not_listed(harness: Harness) -> None:
    acme = await harness.key(tenant="acme")
    globex = await harness.key(tenant="globex")
    mine = await create_run(harness, acme)
    theirs = await create_run(harness, globex)

    acme_list = (await harness.client.get("/v1/runs", headers=acme)).json()
    assert [r["id"] for r in acme_list["items"]] == [mine["id"]]
    globex_list = (await harness.client.get("/v1/runs", headers=globex)).json()
    assert [r["id"] for r in globex_list["items"]] == [theirs["id"]]
    filtered = await harness.client.get(
        "/v1/runs", params={"agent": "tech-radar", "status": "finished"}, headers=globex
    )
    assert [r["id"] for r in filtered.json()["items"]] == [theirs["id"]]


async def test_unknown_and_foreign_runs_look_the_same(harness: Harness) -> None:
    acme = await harness.key(tenant="acme")
    globex = await harness.key(tenant="globex")
    run = await create_run(harness, acme)
    foreign = await harness.client.get(f"/v1/runs/{run['id']}", headers=globex)
    missing = await harness.client.get("/v1/runs/run_doesnotexist", headers=globex)
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json()["detail"] == missing.json()["detail"]
    assert foreign.json()["title"] == missing.json()["title"]


# -- scopes -------------------------------------------------------------------------------


async def test_scopes_that_do_not_cover_a_tool_hide_it(harness: Harness) -> None:
    narrow = await harness.key(subject="narrow", scopes=["other:x"])
    script = [
        {
            "type": "tool_calls",
            "calls": [{"id": "c1", "name": "search_technologies", "arguments": {"query": "db"}}],
        },
        {"type": "final", "text": "nothing found"},
    ]
    run = await create_run(harness, narrow, script=script)
    assert run["tools"] == []
    assert run["status"] == "finished" and run["termination_reason"] == "final", run
    assert run["usage"]["tool_calls"] == 0

    calls = await harness.client.get(f"/v1/runs/{run['id']}/calls", headers=narrow)
    assert calls.status_code == 200, calls.text
    [call] = calls.json()["items"]
    assert call["tool"] == "search_technologies"
    assert call["status"] == "rejected"
    assert call["error"]["code"] == "unknown_tool"
    assert call["output"] is None and call["source_id"] is None


async def test_scopes_that_cover_a_tool_expose_it(harness: Harness) -> None:
    reader = await harness.key(subject="reader", scopes=["radar:read"])
    run = await create_run(harness, reader)
    assert sorted(run["tools"]) == ["get_technology", "search_technologies"]
    everything = await harness.key(subject="all")  # no scopes given: every scope
    run = await create_run(harness, everything, tools=["get_technology"])
    assert run["tools"] == ["get_technology"]


# -- catalog ------------------------------------------------------------------------------


async def test_tools_and_agents_are_visible_to_every_role(harness: Harness) -> None:
    for roles in ("caller", "approver", "admin"):
        headers = await harness.key(subject=roles, roles=roles)
        tools = await harness.client.get("/v1/tools", headers=headers)
        assert tools.status_code == 200, tools.text
        by_name = {t["name"]: t for t in tools.json()["items"]}
        assert {"search_technologies", "get_technology"} <= set(by_name)
        assert by_name["search_technologies"]["permissions"] == ["radar:read"]
        assert by_name["search_technologies"]["enabled"] is True
        assert not any("url" in key.lower() for key in keys_in(tools.json())), tools.text

        agents = await harness.client.get("/v1/agents", headers=headers)
        assert agents.status_code == 200, agents.text
        by_agent = {a["name"]: a for a in agents.json()["items"]}
        assert "tech-radar" in by_agent
        assert by_agent["tech-radar"]["tools"] == ["search_technologies", "get_technology"]
        assert not any("url" in key.lower() for key in keys_in(agents.json())), agents.text


async def test_catalog_needs_a_key(harness: Harness) -> None:
    for path in ("/v1/tools", "/v1/agents"):
        assert_problem(await harness.client.get(path), 401, "unauthenticated")
