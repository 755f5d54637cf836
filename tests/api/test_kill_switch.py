"""The kill switch: an admin switches a tool off for their tenant. Runs that start
afterwards do not get it; a running run's new proposals of it are rejected `tool_disabled`,
also when the switch is thrown in another process."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.support.assertions import assert_problem
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fakes import HeldModel
from tests.support.harness import Harness
from tests.support.waiting import until

SEARCH = ("c1", "search_technologies", {"query": "db"})


def enabled(listing: dict[str, Any]) -> dict[str, bool]:
    return {t["name"]: t["enabled"] for t in listing["items"]}


async def test_only_an_admin_switches_a_tool_and_only_for_its_tenant(harness: Harness) -> None:
    admin = await harness.key(roles="admin")
    caller = await harness.key(roles="caller")
    other = await harness.key(tenant="globex", roles="caller")
    refused = await harness.client.post("/v1/tools/search_technologies/disable", headers=caller)
    assert_problem(refused, 403, "forbidden", "/v1/tools/search_technologies/disable")
    missing = await harness.client.post("/v1/tools/nope/disable", headers=admin)
    assert_problem(missing, 404, "not-found", "/v1/tools/nope/disable")

    off = await harness.client.post("/v1/tools/search_technologies/disable", headers=admin)
    assert off.status_code == 200 and off.json()["enabled"] is False
    again = await harness.client.post("/v1/tools/search_technologies/disable", headers=admin)
    assert again.json()["enabled"] is False
    mine = (await harness.client.get("/v1/tools", headers=caller)).json()
    theirs = (await harness.client.get("/v1/tools", headers=other)).json()
    assert enabled(mine)["search_technologies"] is False
    assert enabled(theirs)["search_technologies"] is True

    on = await harness.client.post("/v1/tools/search_technologies/enable", headers=admin)
    assert on.json()["enabled"] is True
    assert enabled((await harness.client.get("/v1/tools", headers=caller)).json())[
        "search_technologies"
    ]


async def test_a_tool_disabled_before_a_run_starts_is_not_exposed(harness: Harness) -> None:
    await seed_radar(harness)
    admin = await harness.key(roles="admin")
    caller = await harness.key(roles="caller")
    await harness.client.post("/v1/tools/search_technologies/disable", headers=admin)
    body = run_body(tool_calls(SEARCH), final("without it"))
    run = (await harness.client.post("/v1/runs", headers=caller, json=body)).json()
    assert "search_technologies" not in run["tools"]
    calls = (await harness.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()
    assert [c["error"]["code"] for c in calls["items"]] == ["unknown_tool"]
    assert run["usage"]["tool_calls"] == 0


async def test_a_tool_disabled_in_another_process_during_a_run_has_its_proposals_rejected(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    model = HeldModel()
    a = await harness_factory(models={"scripted": model})
    b = await harness_factory()
    await seed_radar(a)
    admin = await a.key(roles="admin")
    caller = await a.key(roles="caller")
    await asyncio.wait_for(a.driver.listener.ready.wait(), 10)
    body = run_body(tool_calls(SEARCH), final("it was off"), wait_s=0)
    run = (await a.client.post("/v1/runs", headers=caller, json=body)).json()
    assert "search_technologies" in run["tools"]
    await asyncio.wait_for(model.started.wait(), 10)
    # Thrown in process b while a's model call is in flight; a heard it over NOTIFY (its
    # own copy of the switches was read at the run's creation, well under 5 s before),
    # and its catalog, read from that copy, says so. Then the model proposes the tool.
    switched = await b.client.post("/v1/tools/search_technologies/disable", headers=admin)
    assert switched.json()["enabled"] is False

    async def heard() -> bool:
        tools = (await a.client.get("/v1/tools", headers=caller)).json()["items"]
        return {t["name"]: t["enabled"] for t in tools}["search_technologies"] is False

    await until(heard, timeout_s=4, what="the switch heard by a")  # before its copy's 5 s
    model.gate.set()
    finished = await a.driver.wait("acme", run["id"], 10)
    assert finished.termination_reason == "final" and finished.usage.tool_calls == 0
    calls = (await a.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()
    [call] = calls["items"]
    assert call["status"] == "rejected" and call["error"]["code"] == "tool_disabled"
