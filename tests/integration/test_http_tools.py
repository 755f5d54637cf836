"""Operator HTTP tools against a fake backend on loopback: the wire format, how backend
errors, bad outputs and lost answers become call outcomes, retries decided by the
executor, and backend URLs kept out of everything a tenant sees."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.db.clock import DbTime
from tests.support.backend import Answer, FakeBackend, fail, ok, serving
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config
from tests.support.runs import calls_of, create
from tests.support.stored_events import stored_events

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["q"],
    "properties": {"q": {"type": "string"}},
}


@pytest.fixture
async def backend() -> AsyncIterator[FakeBackend]:
    async with serving() as server:
        yield server


def http_tool(backend: FakeBackend, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "http",
        "description": f"The {name} tool.",
        "input_schema": SCHEMA,
        "url": backend.tool_url(name),
        "timeout_s": 2,
        **fields,
    }


async def harness_with(harness_factory, backend: FakeBackend, **tools: dict[str, Any]) -> Harness:  # type: ignore[no-untyped-def]
    specs = {name: http_tool(backend, name, **fields) for name, fields in tools.items()}
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], *specs]}
    return await harness_factory(config=make_config({"tech-radar": agent}, tools=specs))


async def assert_unknown_and_sent_once(h: Harness, backend: FakeBackend, run_id: str) -> None:
    [call] = await calls_of(h, run_id)
    assert call["status"] == "failed" and call["error"]["code"] == "outcome_unknown"
    assert len(backend.sent("ticket")) == 1 and len(backend.effects) == 1


def looked_up_ticket(backend: FakeBackend, **fields: Any) -> dict[str, Any]:
    """A side-effecting tool whose answers come late, with a status lookup."""
    return {
        "side_effects": True,
        "timeout_s": 0.5,
        "status_url": f"{backend.url}/operations",
        **fields,
    }


async def test_a_call_goes_out_in_the_wire_format_with_its_operation_id(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, lookup={})
    backend.answer("lookup", ok({"hits": 2}, source_version="7", observed_at="2026-11-30T00:00Z"))
    run = await create(h, tool_calls(("c1", "lookup", '{"q": "kafka"}')), final("two [source:s1]"))
    assert run["termination_reason"] == "final"
    [sent] = backend.sent("lookup")
    [call] = await calls_of(h, run["id"])
    assert sent.headers["idempotency-key"] == call["operation_id"]
    assert sent.headers["content-type"] == "application/json"
    assert sent.body == {
        "tool": "lookup",
        "run_id": run["id"],
        "call_id": "c1",
        "operation_id": call["operation_id"],
        "arguments": {"q": "kafka"},
        "principal": {"tenant": "acme", "subject": "svc"},
        "preview": None,
        "approved_by": None,
        "as_of": None,
    }
    assert (call["status"], call["output"], call["source_version"]) == (
        "succeeded",
        {"hits": 2},
        "7",
    )
    assert run["output"]["citations"][0]["source_version"] == "7"


async def test_backend_errors_become_call_errors_with_only_their_safe_fields(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, lookup={})
    long = "no such thing " * 100
    backend.answer(
        "lookup",
        Answer(404, {"code": "not_found", "retryable": False, "message": long, "secret": "s3"}),
        # A problem+json body carrying the same members is understood as well.
        Answer(409, {"type": "about:blank", "code": "stale", "detail": "try later"}),
    )
    script = [
        tool_calls(("c1", "lookup", {"q": "a"}), ("c2", "lookup", {"q": "b"})),
        final("nothing found"),
    ]
    run = await create(h, *script)
    assert run["termination_reason"] == "final"  # non-retryable errors go back to the model
    errors = {c["call_id"]: c["error"] for c in await calls_of(h, run["id"])}
    assert errors["c1"]["code"] == "not_found" and errors["c1"]["retryable"] is False
    assert len(errors["c1"]["message"]) == 500 and "s3" not in json.dumps(errors)
    assert errors["c2"] == {"code": "stale", "retryable": False, "message": "try later"}


async def test_a_fatal_error_ends_the_run(harness_factory, backend: FakeBackend) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, lookup={})
    backend.answer("lookup", fail(500, "broken", "the index is gone", fatal=True))
    run = await create(h, tool_calls(("c1", "lookup", {"q": "a"})), final("never"))
    assert run["termination_reason"] == "tool_failed"
    assert run["error"] == {"code": "broken", "message": "the index is gone"}


async def test_retryable_errors_are_retried_with_the_same_key_then_succeed(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, lookup={"max_attempts": 3})
    backend.answer("lookup", fail(503, "busy", retryable=True), fail(429, "slow_down"))
    run = await create(h, tool_calls(("c1", "lookup", {"q": "a"})), final("ok [source:s1]"))
    assert run["termination_reason"] == "final" and run["usage"]["tool_calls"] == 1
    sent = backend.sent("lookup")
    assert len(sent) == 3 and len({s.headers["idempotency-key"] for s in sent}) == 1
    [call] = await calls_of(h, run["id"])
    assert call["attempts"] == 3 and call["status"] == "succeeded"


async def test_retries_exhausted_end_the_run_tool_failed(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, lookup={"max_attempts": 2})
    backend.answer("lookup", fail(503, "busy", retryable=True), fail(503, "busy", retryable=True))
    run = await create(h, tool_calls(("c1", "lookup", {"q": "a"})), final("never"))
    assert run["termination_reason"] == "tool_failed" and run["error"]["code"] == "busy"
    assert len(backend.sent("lookup")) == 2


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        (ok({"hits": "many"}), "invalid_output"),  # off its output_schema
        (ok("x" * 2000), "output_too_large"),
        (Answer(200, raw=b"not json"), "invalid_output"),
        (Answer(200, {"result": 1}), "invalid_output"),  # no `output`
    ],
)
async def test_bad_outputs_never_reach_the_model_or_the_api(
    harness_factory, backend: FakeBackend, answer: Answer, code: str
) -> None:  # type: ignore[no-untyped-def]
    schema = {"type": "object", "properties": {"hits": {"type": "integer"}}}
    h = await harness_with(
        harness_factory, backend, lookup={"output_schema": schema, "max_output_bytes": 1000}
    )
    backend.answer("lookup", answer)
    run = await create(h, tool_calls(("c1", "lookup", {"q": "a"})), final("nothing"))
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "failed" and call["error"]["code"] == code
    assert call["output"] is None


async def test_a_side_effect_that_times_out_is_sent_once_and_ends_outcome_unknown(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(
        harness_factory, backend, ticket={"side_effects": True, "timeout_s": 0.5}
    )
    backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=3))
    run = await create(h, tool_calls(("c1", "ticket", {"q": "a"})), final("never"))
    assert run["termination_reason"] == "tool_failed"
    assert run["error"]["code"] == "outcome_unknown"
    assert len(backend.sent("ticket")) == 1  # never sent again blindly


async def test_an_unreachable_backend_is_retried_then_fails(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    # A port nobody listens on: the request provably never left, so a retry is safe.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/tools/lookup"
    h = await harness_with(harness_factory, backend, lookup={"max_attempts": 2, "url": closed})
    run = await create(h, tool_calls(("c1", "lookup", {"q": "a"})), final("never"))
    assert run["termination_reason"] == "tool_failed" and run["error"]["code"] == "unavailable"
    [call] = await calls_of(h, run["id"])
    assert call["attempts"] == 2


async def test_backend_urls_appear_in_no_answer_or_event(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, lookup={}, ticket={"side_effects": True})
    backend.answer("lookup", fail(500, "boom", "it broke", retryable=False))
    run = await create(
        h,
        tool_calls(("c1", "lookup", {"q": "a"}), ("c2", "ticket", {"q": "b"})),
        final("done"),
    )
    headers = await h.key()
    seen = [
        run,
        (await h.client.get(f"/v1/runs/{run['id']}/events?limit=200", headers=headers)).json(),
        await calls_of(h, run["id"]),
        (await h.client.get("/v1/tools?limit=200", headers=headers)).json(),
    ]
    text = json.dumps(seen)
    assert backend.url.removeprefix("http://") not in text
    assert "/tools/ticket" not in text and "/tools/lookup" not in text


async def test_a_side_effect_cut_by_the_deadline_is_an_unknown_outcome_not_cancelled(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, ticket={"side_effects": True, "timeout_s": 9})
    backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=5))
    headers = await h.key()
    body = run_body(
        tool_calls(("c1", "ticket", {"q": "a"})), final("never"), limits={"deadline_s": 1.5}
    )
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    assert run["termination_reason"] == "deadline"
    await assert_unknown_and_sent_once(h, backend, run["id"])


async def test_a_side_effect_cut_by_a_cancel_is_an_unknown_outcome_not_cancelled(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, ticket={"side_effects": True, "timeout_s": 9})
    backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=5))
    headers = await h.key()
    body = run_body(tool_calls(("c1", "ticket", {"q": "a"})), final("never"), wait_s=0)
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    await backend.wait_sent("ticket")
    cancelled = (await h.client.post(f"/v1/runs/{run['id']}/cancel", headers=headers)).json()
    assert cancelled["termination_reason"] == "cancelled"
    await assert_unknown_and_sent_once(h, backend, run["id"])


async def test_a_lost_answer_is_looked_up_and_its_effect_recorded_without_a_resend(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(
        harness_factory,
        backend,
        ticket=looked_up_ticket(backend),
    )
    # The effect happens, but the answer comes too late: the lookup says it succeeded.
    backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=2))
    run = await create(h, tool_calls(("c1", "ticket", {"q": "a"})), final("made [source:s1]"))
    assert run["termination_reason"] == "final"
    [call] = await calls_of(h, run["id"])
    assert (call["status"], call["output"], call["attempts"]) == ("succeeded", {"id": "T-1"}, 1)
    assert len(backend.sent("ticket")) == 1 and backend.looked_up == [call["operation_id"]]


async def test_a_request_the_backend_never_received_is_sent_again_with_the_same_key(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(
        harness_factory,
        backend,
        ticket=looked_up_ticket(backend),
    )
    # The first request is lost before it takes effect; the lookup answers 404.
    backend.answer("ticket", Answer(200, {"output": {"id": "lost"}}, delay_s=2, effect=False))
    run = await create(h, tool_calls(("c1", "ticket", {"q": "a"})), final("made [source:s1]"))
    assert run["termination_reason"] == "final"
    sent = backend.sent("ticket")
    assert len(sent) == 2 and len({s.headers["idempotency-key"] for s in sent}) == 1
    assert len(backend.effects) == 1
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "succeeded" and call["attempts"] == 2


async def test_a_rate_limit_is_shared_by_every_process(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    spec = {"lookup": http_tool(backend, "lookup", rate_limit_per_minute=2)}
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "lookup"]}
    config = make_config({"tech-radar": agent}, tools=spec)
    # Both processes see the database's clock a second into a fresh minute, so the test
    # never straddles a minute's end.
    start_of_minute = DbTime(61 - time.time() % 60)
    a = await harness_factory(config=config, db_time=start_of_minute)
    b = await harness_factory(config=config, db_time=start_of_minute)
    two = tool_calls(("c1", "lookup", {"q": "a"}), ("c2", "lookup", {"q": "b"}))
    first = await create(a, two, final("both [source:s1] [source:s2]"))
    assert first["termination_reason"] == "final" and first["usage"]["tool_calls"] == 2
    second = await create(b, tool_calls(("c1", "lookup", {"q": "c"})), final("later then"))
    assert second["termination_reason"] == "final" and second["usage"]["tool_calls"] == 0
    [call] = await calls_of(b, second["id"])
    assert call["status"] == "rejected" and call["error"]["code"] == "rate_limited"
    assert call["error"]["retryable"] is True
    assert len(backend.sent("lookup")) == 2


async def test_reads_overlap_but_a_group_of_one_never_does_and_results_match_by_call_id(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(
        harness_factory,
        backend,
        wide={},
        narrow={"concurrency_group": "legacy", "max_concurrency": 1},
    )
    # c1 answers last although it was proposed first.
    backend.echo_delays["wide"] = {"1": 1.0, "2": 0.8, "3": 0.6}
    backend.echo_delays["narrow"] = {"4": 0.2, "5": 0.2, "6": 0.2}
    calls = [
        ("c1", "wide", {"q": "1"}),
        ("c2", "wide", {"q": "2"}),
        ("c3", "wide", {"q": "3"}),
        ("c4", "narrow", {"q": "4"}),
        ("c5", "narrow", {"q": "5"}),
        ("c6", "narrow", {"q": "6"}),
    ]
    run = await create(h, tool_calls(*calls), final("all [source:s1]"))
    assert run["termination_reason"] == "final"
    assert backend.peak["wide"] == 3 and backend.peak["narrow"] == 1
    recorded = {c["call_id"]: (c["output"], c["source_id"]) for c in await calls_of(h, run["id"])}
    assert recorded["c1"] == ({"echo": {"q": "1"}}, "s1")
    assert recorded["c3"] == ({"echo": {"q": "3"}}, "s3")
    assert [recorded[f"c{i}"][1] for i in range(1, 7)] == [f"s{i}" for i in range(1, 7)]


async def test_a_single_attempt_side_effect_is_still_looked_up(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(
        harness_factory,
        backend,
        ticket=looked_up_ticket(backend, max_attempts=1),
    )
    backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=2))
    run = await create(h, tool_calls(("c1", "ticket", {"q": "a"})), final("made [source:s1]"))
    assert run["termination_reason"] == "final" and len(backend.looked_up) == 1


@pytest.mark.parametrize(
    ("answer", "code", "retried"),
    [
        (Answer(503, raw=b"<html>" + b"x" * 40_000), "backend_error", True),  # a proxy's page
        (Answer(400, {"code": "bad\x00code", "message": "m"}), "backend_error", False),
        (Answer(200, {"output": {}, "source_version": "v" * 300}), "invalid_output", False),
    ],
)
async def test_what_a_backend_sends_is_never_trusted_blindly(
    harness_factory, backend: FakeBackend, answer: Answer, code: str, retried: bool
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_with(harness_factory, backend, lookup={"max_attempts": 2})
    backend.answer("lookup", answer, answer)
    run = await create(h, tool_calls(("c1", "lookup", {"q": "a"})), final("fine"))
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "failed" and call["error"]["code"] == code
    assert len(backend.sent("lookup")) == (2 if retried else 1)


async def test_an_operation_in_progress_is_asked_about_again_until_it_settles(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    # A 0.5 s timeout and 3 attempts: 1.5 s of patience, well over the four answers below.
    h = await harness_with(harness_factory, backend, ticket=looked_up_ticket(backend))
    backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=2))
    backend.in_progress_for = 3
    run = await create(h, tool_calls(("c1", "ticket", {"q": "a"})), final("made [source:s1]"))
    assert run["termination_reason"] == "final"
    assert len(backend.looked_up) == 4 and len(backend.sent("ticket")) == 1


async def test_a_turn_that_uses_up_the_token_budget_runs_none_of_its_calls(
    harness_factory, backend: FakeBackend
) -> None:  # type: ignore[no-untyped-def]
    """The turn's own usage takes the run to max_tokens (its cap let it, and no further):
    no model call can ever read its results, so its side effect is never sent, and the
    run ends in the very transaction that records the turn."""
    h = await harness_with(harness_factory, backend, ticket={"side_effects": True})
    headers = await h.key()
    body = run_body(
        tool_calls(("c1", "ticket", {"q": "open one"}), usage=(800, 200)),
        final("never"),
        limits={"max_tokens": 1000},
    )
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    assert backend.received == [] and run["usage"]["tool_calls"] == 0
    assert run["termination_reason"] == "budget" and "token" in run["error"]["message"]
    [call] = await calls_of(h, run["id"])
    assert call["status"] == "cancelled" and call["error"]["code"] == "budget"
    async with h.runtime.sessions.begin() as session:
        written = {e.type: e.xid for e in await stored_events(session) if e.run_id == run["id"]}
    assert written["turn.completed"] == written["call.cancelled"] == written["run.finished"]
