"""What must not go wrong: a cancel that stops a turn's remaining calls, side effects never
sent twice, a step that keeps failing, and input Postgres cannot store."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import text

from app.domain.lifecycle.status import CallStatus
from tests.support.factories import final, run_body, tool_calls
from tests.support.fakes import ProbeTool, probe_spec
from tests.support.harness import DEFAULT_AGENT, Harness, make_config


async def events_of(h: Harness, headers: dict[str, str], run_id: str) -> list[dict[str, Any]]:
    response = await h.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
    return response.json()["items"]


@pytest.mark.parametrize("hold_ms", [0.0, 1000.0])
async def test_cancel_while_a_tool_runs_stops_the_turns_other_calls(
    harness_factory, hold_ms: float
) -> None:  # type: ignore[no-untyped-def]
    """With its turn written first, or held for the reads' outcomes (the cancel lands
    well within the hold): the turn and what its calls came to are written all the
    same."""
    probe = ProbeTool(probe_spec(), gate=asyncio.Event())
    h = await harness_factory(
        probe=probe, settings_override={"tool_concurrency": 1, "turn_hold_ms": hold_ms}
    )
    headers = await h.key()
    calls = [(f"c{i}", "probe", {"q": str(i)}) for i in range(4)]
    run = (
        await h.client.post(
            "/v1/runs", headers=headers, json=run_body(tool_calls(*calls), final("never"), wait_s=0)
        )
    ).json()
    await asyncio.wait_for(probe.started.wait(), 10)
    cancelled = await h.client.post(f"/v1/runs/{run['id']}/cancel", headers=headers)
    assert cancelled.json()["termination_reason"] == "cancelled"
    assert probe.executions == 1
    recorded = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=headers)).json()["items"]
    assert {c["status"] for c in recorded} == {"cancelled"}
    kinds = [e["type"] for e in await events_of(h, headers, run["id"])]
    # Only the call in flight had started (its attempt is recorded with the round).
    assert kinds.count("call.started") == 1 and "call.failed" not in kinds
    assert kinds.count("turn.completed") == 1 and kinds.count("call.proposed") == 4
    shown = (await h.client.get(f"/v1/runs/{run['id']}", headers=headers)).json()
    assert shown["usage"]["steps"] == 1 and shown["usage"]["tool_calls"] == 1


async def test_a_side_effect_that_times_out_is_never_sent_again(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(
        probe_spec("write_probe", side_effects=True, timeout_s=0.3), gate=asyncio.Event()
    )
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = (
        await h.client.post(
            "/v1/runs",
            headers=headers,
            json=run_body(tool_calls(("c1", "write_probe", {"q": "x"})), final("never")),
        )
    ).json()
    assert run["termination_reason"] == "tool_failed"
    assert run["error"]["code"] == "outcome_unknown"
    assert probe.executions == 1


class BrokenCheck(ProbeTool):
    def check(self, arguments):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug in a tool's semantic check")


async def test_a_step_that_keeps_failing_ends_the_run_with_its_cause(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(probe=BrokenCheck(probe_spec()))
    headers = await h.key()
    run = (
        await h.client.post(
            "/v1/runs",
            headers=headers,
            json=run_body(tool_calls(("c1", "probe", {"q": "x"})), final("never"), wait_s=15),
        )
    ).json()
    assert run["termination_reason"] == "model_failed", run
    assert run["error"]["code"] == "internal"
    kinds = [e["type"] for e in await events_of(h, headers, run["id"])]
    assert kinds.count("step.failed") == 2 and kinds.count("run.claimed") == 3
    assert "RuntimeError" not in str(run) and "bug" not in str(run)


@pytest.mark.parametrize("hold_ms", [0.0, 50.0])
async def test_a_round_whose_write_keeps_failing_ends_the_run(
    harness_factory, hold_ms: float
) -> None:  # type: ignore[no-untyped-def]
    """A write that fails with something other than an outage counts as a failed step,
    whether or not it carries its turn held back: the third ends the run, rather than the
    run asking the model again and again until its deadline."""
    probe = ProbeTool(probe_spec())
    h = await harness_factory(probe=probe, settings_override={"turn_hold_ms": hold_ms})
    sent = h.runtime.commits.write

    async def failing(write):  # type: ignore[no-untyped-def]
        if any(c.status is CallStatus.SUCCEEDED for c in [*write.new_calls, *write.updated_calls]):
            raise RuntimeError("the round's write fails")
        return await sent(write)

    h.runtime.commits.write = failing
    headers = await h.key()
    body = run_body(tool_calls(("c1", "probe", {"q": "x"})), final("never"), wait_s=0)
    run_id = (await h.client.post("/v1/runs", headers=headers, json=body)).json()["id"]
    shown: dict[str, Any] = {}
    for _ in range(300):
        shown = (await h.client.get(f"/v1/runs/{run_id}", headers=headers)).json()
        if shown["status"] == "finished":
            break
        await asyncio.sleep(0.1)
    assert shown["status"] == "finished" and shown["termination_reason"] == "tool_failed", shown
    assert shown["error"]["code"] == "internal"
    failed = [
        e["data"]["failures"]
        for e in await events_of(h, headers, run_id)
        if e["type"] == "step.failed"
    ]
    assert failed == [1, 2]
    assert probe.executions == 3  # once a try: the read, never its write


async def test_strings_postgres_cannot_store_are_refused(harness: Harness) -> None:
    headers = await harness.key()
    cases = [
        ({**run_body(final("x")), "input": "a\u0000b"}, "input"),
        (run_body(final("a\u0000b")), "script.0.text"),
        (run_body(final("x"), metadata={"k": "v\u0000"}), "metadata.k"),
        (
            run_body(tool_calls(("c1", "search_technologies", {"query": "\u0000"}))),
            "script.0.calls.0.arguments.query",
        ),
    ]
    for body, path in cases:
        response = await harness.client.post("/v1/runs", headers=headers, json=body)
        assert response.status_code == 422, path
        assert response.json()["errors"][0]["path"] == path


async def test_deeply_nested_metadata_is_refused(harness: Harness) -> None:
    headers = await harness.key()
    deep: Any = "x"
    for _ in range(40):
        deep = {"k": deep}
    response = await harness.client.post(
        "/v1/runs", headers=headers, json=run_body(final("x"), metadata=deep)
    )
    assert response.status_code == 422 and response.json()["errors"][0]["path"] == "metadata"


async def test_out_of_range_event_positions_are_validation_errors(harness: Harness) -> None:
    headers = await harness.key()
    run = (await harness.client.post("/v1/runs", headers=headers, json=run_body(final("x")))).json()
    response = await harness.client.get(
        f"/v1/runs/{run['id']}/events?after={2**40}", headers=headers
    )
    assert response.status_code == 422 and response.json()["errors"][0]["path"] == "after"


async def test_huge_token_counts_are_refused(harness: Harness) -> None:
    headers = await harness.key()
    response = await harness.client.post(
        "/v1/runs", headers=headers, json=run_body(final("x", usage=(3_000_000_000, 0)))
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "script.0.usage.input_tokens"


async def test_a_side_effect_is_not_sent_once_its_start_write_learns_of_a_cancel(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """The cancel notification is missed (written straight to the row): the side effect's
    `executing` write is what brings the cancel, and the request must then never leave. The
    round's settled read is recorded all the same."""
    read = ProbeTool(probe_spec("read_probe"), gate=asyncio.Event())
    write = ProbeTool(probe_spec("write_probe", side_effects=True))
    agent = {**DEFAULT_AGENT, "tools": ["read_probe", "write_probe"]}
    config = make_config(
        {"tech-radar": agent}, extra_specs={"read_probe": read.spec, "write_probe": write.spec}
    )
    h = await harness_factory(
        config=config, tools=lambda s, c: {"read_probe": read, "write_probe": write}
    )
    headers = await h.key()
    script = [
        tool_calls(("w", "write_probe", {"q": "1"}), ("r", "read_probe", {"q": "2"})),
        final("x"),
    ]
    run = (
        await h.client.post("/v1/runs", headers=headers, json=run_body(*script, wait_s=0))
    ).json()
    await asyncio.wait_for(read.started.wait(), 10)
    async with h.runtime.sessions.begin() as session:
        await session.execute(
            text("UPDATE run SET cancel_requested_at = now() WHERE id = :id"), {"id": run["id"]}
        )
    read.gate.set()
    finished = await h.driver.wait("acme", run["id"], 10)
    assert finished.termination_reason == "cancelled"
    assert write.executions == 0 and read.executions == 1
    calls = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=headers)).json()["items"]
    assert {c["call_id"]: c["status"] for c in calls} == {"w": "cancelled", "r": "succeeded"}
    # The read ran; the write's attempt was started, then kept.
    assert finished.usage.tool_calls == 2


async def test_a_call_the_cost_budget_cannot_pay_for_is_neither_sent_counted_nor_charged(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec(cost_usd=0.4))
    h = await harness_factory(probe=probe, settings_override={"tool_concurrency": 1})
    headers = await h.key()
    calls = [(f"c{i}", "probe", {"q": str(i)}) for i in range(3)]
    body = run_body(tool_calls(*calls), final("never"), limits={"max_cost_usd": 1})
    run = (await h.client.post("/v1/runs", headers=headers, json=body)).json()
    assert run["termination_reason"] == "budget"
    assert probe.executions == 2
    assert run["usage"]["tool_calls"] == 2 and run["usage"]["cost_usd"] == 0.8
    recorded = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=headers)).json()
    statuses = [(c["call_id"], c["status"], c["attempts"]) for c in recorded["items"]]
    assert statuses == [("c0", "succeeded", 1), ("c1", "succeeded", 1), ("c2", "cancelled", 0)]
    assert recorded["items"][2]["error"]["code"] == "budget"
