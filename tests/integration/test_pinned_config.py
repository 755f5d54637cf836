"""A run keeps the config version it was created with — its agent's instructions and its
tools' declarations — until it finishes, in whatever process steps it and whatever config
that process was started with; a version that can no longer be served ends the call
`tool_unavailable`, never served by the new version silently."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from app.db.tables import config_version, turn
from app.domain.tools.specs import sha256_tag
from tests.support.approvals import approve, commit, keys, parked_run, ticket_tool
from tests.support.backend import FakeBackend, ok, serving
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config

TICKET = ("t1", "ticket", {"q": "refund"})


@pytest.fixture
async def backend() -> AsyncIterator[FakeBackend]:
    async with serving() as server:
        yield server


def _config(instructions: str, ticket: dict[str, Any] | None) -> Any:
    names = [*DEFAULT_AGENT["tools"], *(["ticket"] if ticket else [])]
    agent = {**DEFAULT_AGENT, "instructions": instructions, "tools": names}
    return make_config({"tech-radar": agent}, tools={"ticket": ticket} if ticket else None)


def _changed_ticket(backend: FakeBackend) -> dict[str, Any]:
    """The ticket tool as a new config declares it: another URL, and a schema the run's
    recorded arguments no longer meet."""
    declared = ticket_tool(backend)
    schema = {**declared["input_schema"], "required": ["q", "priority"]}
    schema["properties"] = {**schema["properties"], "priority": {"type": "integer"}}
    return {**declared, "url": backend.tool_url("ticket-v2"), "input_schema": schema}


async def _instructions_hashes(h: Harness, run_id: str) -> list[str]:
    async with h.runtime.sessions() as session:
        rows = await session.execute(
            select(turn.c.instructions_hash).where(turn.c.run_id == run_id).order_by(turn.c.step)
        )
        return list(rows.scalars())


async def test_a_run_keeps_its_config_version_in_a_process_started_with_a_new_one(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    before = await harness_factory(config=_config("Answer as version one.", ticket_tool(backend)))
    caller, approver = await keys(before)
    run = await parked_run(before, caller, tool_calls(TICKET), final("Opened [source:s1]"))
    assert run["config_hash"] is not None and len(run["config_hash"]) == 64

    # The service restarted with a changed config: the next steps are this process's.
    after = await harness_factory(
        config=_config("Answer as version two.", _changed_ticket(backend))
    )
    backend.answer("ticket", ok({"ticket": 7}, source_version="1"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    await approve(after, approver, preview_id)
    committed = await commit(after, approver, preview_id, "pinned-commit")
    assert committed.status_code == 200, committed.text
    finished = await after.driver.wait("acme", run["id"], 15)
    assert finished.termination_reason == "final", finished
    assert finished.config_hash == run["config_hash"]

    # Sent to the URL, and validated by the schema, of the version the run was made with.
    assert [r.body["arguments"] for r in backend.sent("ticket")] == [{"q": "refund"}]
    assert backend.sent("ticket-v2") == []
    # Every model call of the run had the first version's instructions.
    hashes = await _instructions_hashes(after, run["id"])
    assert hashes == [sha256_tag("Answer as version one.")] * 2

    # A new run is the new version's: the same call is now refused by its schema.
    fresh = await after.client.post(
        "/v1/runs", headers=caller, json=run_body(tool_calls(TICKET), final("ok"))
    )
    assert fresh.json()["config_hash"] not in (None, run["config_hash"])
    calls = await after.client.get(f"/v1/runs/{fresh.json()['id']}/calls", headers=caller)
    assert calls.json()["items"][0]["error"]["code"] == "invalid_arguments"


async def test_a_tool_gone_from_the_new_config_ends_the_call_tool_unavailable(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    before = await harness_factory(config=_config("Help.", ticket_tool(backend)))
    caller, approver = await keys(before)
    run = await parked_run(before, caller, tool_calls(TICKET), final("Opened [source:s1]"))
    after = await harness_factory(config=_config("Help.", None))  # the operator removed it
    preview_id = run["pending_approvals"][0]["preview_id"]
    await approve(after, approver, preview_id)
    await commit(after, approver, preview_id, "gone-commit")
    finished = await after.driver.wait("acme", run["id"], 15)
    assert finished.termination_reason == "tool_failed", finished
    assert finished.error is not None and finished.error["code"] == "tool_unavailable"
    assert backend.sent("ticket") == []  # never served by another version


async def test_the_version_is_one_row_and_a_run_names_it(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory()
    headers = await h.key()
    first, second = [
        (await h.client.post("/v1/runs", headers=headers, json=run_body(final("ok")))).json()
        for _ in range(2)
    ]
    assert first["config_hash"] == second["config_hash"] is not None
    other = await harness_factory(config=_config("Other words.", None))
    third = (
        await other.client.post("/v1/runs", headers=headers, json=run_body(final("ok")))
    ).json()
    assert third["config_hash"] != first["config_hash"]
    async with h.runtime.sessions() as session:
        kept = await session.execute(select(config_version.c.hash))
        assert {first["config_hash"], third["config_hash"]} <= set(kept.scalars())


def _lookup(backend: FakeBackend, *, enabled: bool, description: str) -> dict[str, Any]:
    return {
        "kind": "http",
        "description": description,
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"q": {"type": "string"}},
        },
        "url": backend.tool_url("lookup"),
        "timeout_s": 2,
        "enabled": enabled,
    }


@pytest.mark.parametrize("changed", [False, True], ids=["same-declaration", "new-declaration"])
async def test_the_operators_levers_reach_a_pinned_run_at_once(
    harness_factory, backend: FakeBackend, changed: bool
) -> None:  # type: ignore[no-untyped-def]
    """`enabled` (like the kill switch, permissions and limits) is no part of a version:
    switched off in the new config, a tool is off for the runs of every version."""

    def config(enabled: bool, description: str) -> Any:
        agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "ticket", "lookup"]}
        tools = {
            "ticket": ticket_tool(backend),
            "lookup": _lookup(backend, enabled=enabled, description=description),
        }
        return make_config({"tech-radar": agent}, tools=tools)

    before = await harness_factory(config=config(True, "Looks up."))
    caller, approver = await keys(before)
    script = tool_calls(TICKET), tool_calls(("l1", "lookup", {"q": "y"})), final("done")
    run = await parked_run(before, caller, *script)
    after = await harness_factory(config=config(False, "Looks it up." if changed else "Looks up."))
    backend.answer("ticket", ok({"ticket": 7}))
    preview_id = run["pending_approvals"][0]["preview_id"]
    await approve(after, approver, preview_id)
    assert (await commit(after, approver, preview_id, f"lever-{changed}")).status_code == 200
    await after.driver.wait("acme", run["id"], 15)
    calls = (await after.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()
    lookup = next(c for c in calls["items"] if c["tool"] == "lookup")
    assert lookup["status"] == "rejected" and lookup["error"]["code"] == "tool_disabled"
    assert backend.sent("lookup") == []
    # Its version is the one it was created with all the same.
    assert (await after.client.get(f"/v1/runs/{run['id']}", headers=caller)).json()[
        "config_hash"
    ] == run["config_hash"]
