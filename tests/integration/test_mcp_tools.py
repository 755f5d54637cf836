"""Tools from an MCP server (the official SDK's server over streamable HTTP, on loopback)
under the same gates as HTTP tools: schemas from its list, unknown arguments refused before
anything is sent, errors back to the model, the operation id in `_meta`, approval with one
execution, the kill switch and rate limits, and a server that is down at start."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.approvals import approve, commit, keys, parked_run
from tests.support.factories import final, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config
from tests.support.mcp_server import FakeMcp, free_port, up
from tests.support.runs import calls_of, create


@pytest.fixture
async def kb() -> AsyncIterator[FakeMcp]:
    async with up(FakeMcp()) as server:
        yield server


def mcp_tool(**fields: Any) -> dict[str, Any]:
    return {"kind": "mcp", "server": "kb", "timeout_s": 2, **fields}


async def kb_harness(harness_factory, kb: FakeMcp, **tools: dict[str, Any]) -> Harness:  # type: ignore[no-untyped-def]
    specs = {name: mcp_tool(**fields) for name, fields in tools.items()}
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], *specs]}
    servers = {"kb": {"url": kb.url, "timeout_s": 2, "headers_env": {"Authorization": "KB_TOKEN"}}}
    config = make_config({"tech-radar": agent}, tools=specs, mcp_servers=servers)
    return await harness_factory(config=config, settings_override={"mcp_retry_s": 0.2})


async def test_a_read_tool_runs_with_its_operation_id_in_meta_and_the_servers_headers(
    harness_factory, kb: FakeMcp, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KB_TOKEN", "Bearer kb-secret")
    h = await kb_harness(harness_factory, kb, lookup_doc={})
    reads = [(f"c{i}", "lookup_doc", {"query": f"postgres {i}"}) for i in range(1, 4)]
    run = await create(h, tool_calls(*reads), final("adopt [source:s1]"))
    assert run["termination_reason"] == "final", run
    calls = sorted(await calls_of(h, run["id"]), key=lambda c: c["call_id"])
    assert [c["status"] for c in calls] == ["succeeded"] * 3  # run at once, on one session
    call = calls[0]
    assert call["output"] == {"title": "About postgres 1", "ring": "adopt"}  # structuredContent
    seen = {s.arguments["query"]: s for s in kb.seen("lookup_doc")}
    assert seen["postgres 1"].meta["toolgate/operation_id"] == call["operation_id"]
    assert all(headers.get("authorization") == "Bearer kb-secret" for headers in kb.headers)


async def test_text_results_are_joined_and_errors_go_back_to_the_model_cut(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    h = await kb_harness(harness_factory, kb, say={}, broken={})
    run = await create(
        h,
        tool_calls(("c1", "say", {"words": "hi"}), ("c2", "broken", {"query": "x"})),
        final("done"),
    )
    assert run["termination_reason"] == "final", run
    said, failed = sorted(await calls_of(h, run["id"]), key=lambda c: c["call_id"])
    assert said["output"] == {"text": "you said hi"}
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "tool_error" and failed["error"]["retryable"] is False
    assert 0 < len(failed["error"]["message"]) <= 500
    assert "Traceback" not in failed["error"]["message"]
    assert len(kb.seen("broken")) == 1  # a tool error is never retried


async def test_an_unknown_argument_is_refused_before_the_server_sees_it(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    h = await kb_harness(harness_factory, kb, lookup_doc={})
    run = await create(
        h,
        tool_calls(("c1", "lookup_doc", {"query": "pg", "drop_table": True})),
        final("no"),
    )
    assert run["termination_reason"] == "final", run
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "rejected" and call["error"]["code"] == "invalid_arguments"
    assert kb.seen("lookup_doc") == []


async def test_the_catalog_lists_mcp_tools_with_the_servers_schemas_and_no_address(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    h = await kb_harness(harness_factory, kb, lookup_doc={"risk": "medium"}, say={})
    answer = await h.client.get("/v1/tools", headers=await h.key())
    assert answer.status_code == 200
    tools = {t["name"]: t for t in answer.json()["items"]}
    lookup = tools["lookup_doc"]
    assert lookup["description"] == "Look a document up in the knowledge base."
    assert lookup["input_schema"]["properties"]["query"]["type"] == "string"
    assert lookup["input_schema"]["additionalProperties"] is False
    assert lookup["output_schema"]["required"] == ["title", "ring"]
    assert (lookup["risk"], lookup["enabled"], tools["say"]["enabled"]) == ("medium", True, True)
    assert str(kb.port) not in answer.text and "/mcp" not in answer.text


TICKET = {"risk": "high", "side_effects": True}


async def test_an_approved_side_effect_is_previewed_by_the_service_and_sent_once(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    h = await kb_harness(harness_factory, kb, open_ticket=TICKET)
    caller, approver = await keys(h)
    run = await parked_run(
        h, caller, tool_calls(("c1", "open_ticket", {"title": "Disk full"})), final("opened")
    )
    [pending] = run["pending_approvals"]
    assert kb.seen("open_ticket") == []  # nothing is sent before the commit
    preview = (await h.client.get(f"/v1/previews/{pending['preview_id']}", headers=approver)).json()
    assert preview["summary"] == 'open_ticket {"title":"Disk full"}'
    assert (preview["impact"], preview["resource_version"]) == ({}, None)
    await approve(h, approver, preview["id"])
    done = await commit(h, approver, preview["id"], "commit-1")
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["call"]["status"] == "succeeded" and body["call"]["output"] == {"ticket_id": "T-1"}
    assert body["run"]["termination_reason"] == "final"
    replay = await commit(h, approver, preview["id"], "commit-1")
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    [sent] = kb.seen("open_ticket")
    assert sent.arguments == {"title": "Disk full"}  # exactly the approved arguments
    assert sent.meta["toolgate/operation_id"] == body["call"]["operation_id"]
    assert len(kb.tickets) == 1


async def test_the_kill_switch_and_a_rate_limit_stop_mcp_calls_before_the_server(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    h = await kb_harness(harness_factory, kb, lookup_doc={"rate_limit_per_minute": 1}, say={})
    admin = await h.key(subject="root", roles="admin")
    limited = await create(
        h,
        tool_calls(("c1", "lookup_doc", {"query": "a"}), ("c2", "lookup_doc", {"query": "b"})),
        final("done"),
    )
    first, second = sorted(await calls_of(h, limited["id"]), key=lambda c: c["call_id"])
    assert first["status"] == "succeeded"
    assert second["status"] == "rejected" and second["error"]["code"] == "rate_limited"
    assert len(kb.seen("lookup_doc")) == 1

    off = await h.client.post("/v1/tools/say/disable", headers=admin)
    assert off.status_code == 200 and off.json()["enabled"] is False
    switched = await create(h, tool_calls(("c1", "say", {"words": "hi"})), final("done"))
    [call] = await calls_of(h, switched["id"])
    # Switched off before the run started: never exposed to it.
    assert call["status"] == "rejected" and call["error"]["code"] == "unknown_tool"
    assert kb.seen("say") == []


async def test_a_side_effect_left_unanswered_is_unknown_unless_its_tool_is_idempotent(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    kb.ticket_delay_s = 1.5
    fields = {"side_effects": True, "timeout_s": 0.5, "max_attempts": 3}
    h = await kb_harness(harness_factory, kb, open_ticket=fields)
    run = await create(h, tool_calls(("c1", "open_ticket", {"title": "a"})), final("x"))
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "failed" and call["error"]["code"] == "outcome_unknown"
    assert len(kb.seen("open_ticket")) == 1  # never sent again blind

    kb.calls.clear()
    kb.tickets.clear()
    h = await kb_harness(harness_factory, kb, open_ticket={**fields, "idempotent": True})
    run = await create(h, tool_calls(("c1", "open_ticket", {"title": "b"})), final("x"))
    [call] = await calls_of(h, run["id"])
    sent = kb.seen("open_ticket")
    assert len(sent) == 3  # re-sent under the same operation id, deduplicated by the server
    assert {s.meta["toolgate/operation_id"] for s in sent} == {call["operation_id"]}
    assert list(kb.tickets) == [call["operation_id"]]  # one ticket for the three sends


async def test_a_server_down_at_start_costs_one_warning_and_its_tools_return_with_it(
    harness_factory, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    kb = FakeMcp(port=free_port())  # nobody listens there yet
    caplog.set_level(logging.WARNING, logger="app.adapters.tools.mcp_session")
    h = await kb_harness(harness_factory, kb, lookup_doc={})
    listed = (await h.client.get("/v1/tools", headers=await h.key())).json()["items"]
    assert {t["name"]: t["enabled"] for t in listed}["lookup_doc"] is False
    for _ in range(3):  # the other tools work; the server's are not offered
        run = await create(
            h,
            tool_calls(
                ("c1", "lookup_doc", {"query": "pg"}),
                ("c2", "get_technology", {"technology_id": "x"}),
            ),
            final("done"),
        )
        assert run["termination_reason"] == "final"
        calls = {c["call_id"]: c for c in await calls_of(h, run["id"])}
        assert calls["c1"]["status"] == "rejected"
        assert calls["c1"]["error"]["code"] == "tool_unavailable"
        assert calls["c2"]["status"] in ("succeeded", "failed")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "kb" in warnings[0].getMessage()
    assert str(kb.port) not in warnings[0].getMessage()

    async with up(kb):
        h.runtime.clock.advance(1)  # past the retry interval, by the app's clock
        # A run made while the server was down holds its tools: they are back for it too.
        run = await create(
            h, tool_calls(("c1", "lookup_doc", {"query": "pg"})), final("adopt [source:s1]")
        )
        [call] = await calls_of(h, run["id"])
        assert call["status"] == "succeeded", call
        assert call["output"]["title"] == "About pg"


async def test_a_tool_its_server_does_not_list_is_unavailable(harness_factory, kb: FakeMcp) -> None:  # type: ignore[no-untyped-def]
    h = await kb_harness(harness_factory, kb, ghost={"mcp_tool": "not_served"}, say={})
    listed = (await h.client.get("/v1/tools", headers=await h.key())).json()["items"]
    assert {t["name"]: t["enabled"] for t in listed}["ghost"] is False
    run = await create(
        h, tool_calls(("c1", "ghost", {}), ("c2", "say", {"words": "hi"})), final("done")
    )
    calls = {c["call_id"]: c for c in await calls_of(h, run["id"])}
    assert calls["c1"]["status"] == "rejected"
    assert calls["c1"]["error"]["code"] == "tool_unavailable"
    assert calls["c2"]["status"] == "succeeded"
    assert [c.tool for c in kb.calls] == ["say"]


def _methods(kb: FakeMcp, *methods: str) -> int:
    return sum(1 for headers in kb.headers if headers.get("mcp-method") in methods)


async def test_one_session_serves_every_call_and_a_lost_server_is_reconnected_and_relisted(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    kb = FakeMcp(port=free_port())
    script = (tool_calls(("c1", "lookup_doc", {"query": "pg"})), final("adopt [source:s1]"))
    async with up(kb):
        h = await kb_harness(harness_factory, kb, lookup_doc={"max_attempts": 1})
        for _ in range(3):
            assert (await create(h, *script))["termination_reason"] == "final"
        opened, listed = _methods(kb, "server/discover", "initialize"), _methods(kb, "tools/list")
        assert (opened, listed, _methods(kb, "tools/call")) == (1, 1, 3)

    # The server is gone: the call goes unanswered (a read: it fails, the run goes on),
    # and the server's tools are unavailable until it answers again.
    run = await create(h, *script)
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "failed", call
    catalog = (await h.client.get("/v1/tools", headers=await h.key())).json()["items"]
    assert {t["name"]: t["enabled"] for t in catalog}["lookup_doc"] is False

    async with up(kb):  # back on the same port: a new session, and the list read again
        h.runtime.clock.advance(1)  # past the retry interval, by the app's clock
        run = await create(h, *script)
        [call] = await calls_of(h, run["id"])
        assert call["status"] == "succeeded", call
        assert _methods(kb, "server/discover", "initialize") == opened + 1
        assert _methods(kb, "tools/list") == listed + 1


async def test_a_pinned_run_calls_its_versions_tool_and_ends_when_the_server_drops_it(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    kb = FakeMcp(port=free_port())
    desk = {**TICKET, "mcp_tool": "open_ticket"}
    script = (tool_calls(("c1", "desk", {"title": "Disk full"})), final("opened"))
    async with up(kb):
        before = await kb_harness(harness_factory, kb, desk=desk)
        caller, approver = await keys(before)
        first, second = [await parked_run(before, caller, *script) for _ in range(2)]
        # Restarted with a new declaration of the tool: a parked run keeps its version.
        after = await kb_harness(harness_factory, kb, desk={**TICKET, "mcp_tool": "say"})
        preview_id = first["pending_approvals"][0]["preview_id"]
        await approve(after, approver, preview_id)
        assert (await commit(after, approver, preview_id, "pinned")).status_code == 200
        finished = await after.driver.wait("acme", first["id"], 15)
        assert finished.termination_reason == "final", finished
        assert [c.tool for c in kb.calls] == ["open_ticket"]

    kb.hidden.add("open_ticket")
    async with up(kb):  # the server no longer offers the tool: the other parked call ends
        third = await kb_harness(harness_factory, kb, desk=desk)
        preview_id = second["pending_approvals"][0]["preview_id"]
        await approve(third, approver, preview_id)
        await commit(third, approver, preview_id, "dropped")
        await third.driver.wait("acme", second["id"], 15)
        ended = (await third.client.get(f"/v1/runs/{second['id']}", headers=caller)).json()
        calls = await calls_of(third, second["id"])
    assert (ended["termination_reason"], ended["error"]["code"]) == (
        "tool_failed",
        "tool_unavailable",
    ), (ended, calls)
    assert [c.tool for c in kb.calls] == ["open_ticket"]


async def test_declared_schemas_narrow_the_servers_and_its_output_is_checked(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    short = {"type": "string", "maxLength": 10}
    narrower = {
        "type": "object",
        "additionalProperties": False,
        "required": ["query"],
        "properties": {"query": short},
    }
    wider = {**narrower, "properties": {"query": {"type": ["string", "integer"]}}}
    strict_output = {"type": "object", "required": ["url"]}
    h = await kb_harness(
        harness_factory,
        kb,
        lookup_doc={"input_schema": narrower},
        wide={"mcp_tool": "lookup_doc", "input_schema": wider},
        checked={"mcp_tool": "lookup_doc", "output_schema": strict_output},
    )
    run = await create(
        h,
        tool_calls(
            ("c1", "lookup_doc", {"query": "a much longer query"}),
            ("c2", "wide", {"query": 7}),
            ("c3", "lookup_doc", {"query": "pg"}),
            ("c4", "checked", {"query": "pg"}),
        ),
        final("done"),
    )
    calls = {c["call_id"]: c for c in await calls_of(h, run["id"])}
    assert calls["c1"]["error"]["code"] == "invalid_arguments"  # the declared schema
    assert calls["c2"]["error"]["code"] == "invalid_arguments"  # the server's schema
    assert calls["c3"]["status"] == "succeeded"
    assert calls["c4"]["status"] == "failed" and calls["c4"]["error"]["code"] == "invalid_output"
    assert [c.arguments for c in kb.seen("lookup_doc")] == [{"query": "pg"}] * 2


async def test_one_calls_timeout_leaves_the_other_calls_on_the_session_their_answers(
    harness_factory, kb: FakeMcp
) -> None:  # type: ignore[no-untyped-def]
    kb.delays = {"say": 1.5, "lookup_doc": 0.6}
    h = await kb_harness(
        harness_factory, kb, say={"timeout_s": 0.3, "max_attempts": 1}, lookup_doc={}
    )
    run = await create(
        h,
        tool_calls(("c1", "say", {"words": "slow"}), ("c2", "lookup_doc", {"query": "pg"})),
        final("done"),
    )
    calls = {c["call_id"]: c for c in await calls_of(h, run["id"])}
    assert calls["c1"]["status"] == "failed"  # timed out after 0.3 s, while c2 was in flight
    assert calls["c2"]["status"] == "succeeded", calls["c2"]
    assert _methods(kb, "server/discover", "initialize") == 1  # the session stayed
