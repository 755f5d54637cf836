"""The scripted-model scenarios of the run state machine, end to end over HTTP."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from app.adapters.tools.builtin.tech_radar import radar_tools
from app.domain.tools.specs import ToolError, ToolResult
from tests.support.factories import error, final, run_body, seed_radar, tool_calls
from tests.support.fakes import ProbeTool, probe_spec
from tests.support.harness import DEFAULT_AGENT, Harness, make_config


async def create(h: Harness, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    response = await h.client.post("/v1/runs", headers=headers, json=body)
    assert response.status_code == 201, response.text
    assert response.headers["Location"] == f"/v1/runs/{response.json()['id']}"
    return response.json()


async def events(h: Harness, headers: dict[str, str], run_id: str) -> list[dict[str, Any]]:
    response = await h.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
    assert response.status_code == 200
    return response.json()["items"]


async def calls(h: Harness, headers: dict[str, str], run_id: str) -> list[dict[str, Any]]:
    response = await h.client.get(f"/v1/runs/{run_id}/calls", headers=headers)
    assert response.status_code == 200
    return response.json()["items"]


async def test_one_query_then_final(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await create(
        harness,
        headers,
        run_body(
            tool_calls(
                ("c1", "search_technologies", {"query": "database", "ring": "adopt"}),
                usage=(100, 20),
            ),
            final("PostgreSQL is in adopt [source:s1]", usage=(300, 40)),
            metadata={"ticket": "T-1"},
        ),
    )
    assert run["status"] == "finished" and run["termination_reason"] == "final"
    assert run["error"] is None
    assert run["metadata"] == {"ticket": "T-1"}
    assert run["usage"] == {
        "steps": 2,
        "input_tokens": 400,
        "output_tokens": 60,
        "cost_usd": 0.0,
        "tool_calls": 1,
    }
    [citation] = run["output"]["citations"]
    assert citation["source_id"] == "s1" and citation["tool"] == "search_technologies"
    [call] = await calls(harness, headers, run["id"])
    assert call["status"] == "succeeded" and call["source_id"] == "s1" and call["attempts"] == 1
    names = {item["name"] for item in call["output"]["items"]}
    assert "PostgreSQL" in names and "Kafka" not in names
    assert call["args_hash"].startswith("sha256:") and call["operation_id"].startswith("op_")
    kinds = [e["type"] for e in await events(harness, headers, run["id"])]
    assert kinds[0] == "run.created" and kinds[-1] == "run.finished"
    for kind in ("turn.completed", "call.proposed", "call.started", "call.succeeded"):
        assert kind in kinds
    seqs = [e["seq"] for e in await events(harness, headers, run["id"])]
    assert seqs == list(range(1, len(seqs) + 1))


async def test_unknown_tool_is_rejected_and_not_executed(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec("hidden_probe"))
    config = make_config(extra_specs={probe.spec.name: probe.spec})

    def tools(sessions, clock):  # type: ignore[no-untyped-def]
        return {**radar_tools(sessions, clock), probe.spec.name: probe}

    h = await harness_factory(config=config, tools=tools)
    headers = await h.key()
    run = await create(
        h,
        headers,
        run_body(
            tool_calls(("c1", "hidden_probe", {}), ("c2", "drop_database", {})),
            final("sorry"),
        ),
    )
    assert run["termination_reason"] == "final"
    assert probe.executions == 0
    recorded = await calls(h, headers, run["id"])
    assert [(c["call_id"], c["status"], c["error"]["code"]) for c in recorded] == [
        ("c1", "rejected", "unknown_tool"),
        ("c2", "rejected", "unknown_tool"),
    ]
    assert run["usage"]["tool_calls"] == 0
    assert "call.rejected" in [e["type"] for e in await events(h, headers, run["id"])]


async def test_invalid_arguments_are_not_executed(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec())
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await create(
        h,
        headers,
        run_body(
            tool_calls(
                ("c1", "probe", {"q": 5}),
                ("c2", "probe", {"q": "x", "extra": 1}),
                ("c3", "probe", "{not json"),
                ("c4", "probe", "[1]"),
            ),
            final("gave up"),
        ),
    )
    assert run["termination_reason"] == "final"
    assert probe.executions == 0
    recorded = await calls(h, headers, run["id"])
    assert [c["error"]["code"] for c in recorded] == ["invalid_arguments"] * 4
    assert all(c["status"] == "rejected" for c in recorded)


async def test_arguments_as_json_string_are_parsed(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec())
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await create(
        h, headers, run_body(tool_calls(("c1", "probe", '{"q": "hi"}')), final("ok"))
    )
    [call] = await calls(h, headers, run["id"])
    assert call["status"] == "succeeded" and call["arguments"] == {"q": "hi"}
    assert probe.executions == 1 and run["termination_reason"] == "final"


async def test_duplicate_call_id_is_rejected(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec())
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await create(
        h,
        headers,
        run_body(tool_calls(("c1", "probe", {"q": "a"}), ("c1", "probe", {"q": "b"})), final("ok")),
    )
    assert probe.executions == 1
    [call] = await calls(h, headers, run["id"])
    assert call["arguments"] == {"q": "a"}
    rejected = [e for e in await events(h, headers, run["id"]) if e["type"] == "call.rejected"]
    assert [e["data"]["code"] for e in rejected] == ["duplicate_call_id"]


async def test_tool_error_is_fed_back_and_the_model_corrects(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await create(
        harness,
        headers,
        run_body(
            tool_calls(("c1", "get_technology", {"technology_id": "tech_missing"})),
            tool_calls(("c1", "search_technologies", {"query": "kafka"})),
            final("Kafka is in trial [source:s1]"),
        ),
    )
    assert run["termination_reason"] == "final"
    first, second = await calls(harness, headers, run["id"])
    assert first["status"] == "failed" and first["error"]["code"] == "not_found"
    assert first["source_id"] is None
    assert second["status"] == "succeeded" and second["source_id"] == "s1"
    assert second["output"]["items"][0]["ring"] == "trial"
    assert run["usage"]["steps"] == 3 and run["usage"]["tool_calls"] == 2


async def test_step_limit(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    search = ("c1", "search_technologies", {"query": "db"})
    run = await create(
        harness,
        headers,
        run_body(
            tool_calls(search),
            tool_calls(search),
            tool_calls(search),
            final("late"),
            limits={"max_steps": 2},
        ),
    )
    assert run["termination_reason"] == "max_steps"
    assert run["error"]["code"] == "max_steps"
    assert run["usage"]["steps"] == 2 and run["limits"]["max_steps"] == 2


async def test_limits_are_clamped_to_the_agent(harness: Harness) -> None:
    headers = await harness.key()
    run = await create(
        harness, headers, run_body(final("ok"), limits={"max_steps": 500, "max_tool_calls": 3})
    )
    assert run["limits"]["max_steps"] == 8 and run["limits"]["max_tool_calls"] == 3


async def test_retryable_model_error_is_retried_within_the_step(harness: Harness) -> None:
    headers = await harness.key()
    run = await create(
        harness,
        headers,
        run_body(
            error("rate_limited", retryable=True), error("unavailable", retryable=True), final("ok")
        ),
    )
    assert run["termination_reason"] == "final"
    assert run["usage"]["steps"] == 1
    kinds = [e["type"] for e in await events(harness, headers, run["id"])]
    assert kinds.count("turn.failed") == 2 and kinds.count("turn.completed") == 1


async def test_model_attempts_exhausted_ends_model_failed_with_last_code(harness: Harness) -> None:
    headers = await harness.key()
    run = await create(
        harness,
        headers,
        run_body(
            error("rate_limited", retryable=True),
            error("rate_limited", retryable=True),
            error("overloaded", retryable=True),
            final("never"),
        ),
    )
    assert run["termination_reason"] == "model_failed"
    assert run["error"]["code"] == "overloaded"
    assert run["usage"]["steps"] == 0


async def test_non_retryable_model_error_ends_the_run(harness: Harness) -> None:
    headers = await harness.key()
    run = await create(harness, headers, run_body(error("auth", retryable=False), final("never")))
    assert run["termination_reason"] == "model_failed" and run["error"]["code"] == "auth"


async def test_script_exhausted(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await create(
        harness, headers, run_body(tool_calls(("c1", "search_technologies", {"query": "db"})))
    )
    assert run["termination_reason"] == "model_failed"
    assert run["error"]["code"] == "script_exhausted"
    assert run["usage"]["steps"] == 1 and run["usage"]["tool_calls"] == 1


async def test_citation_of_an_unknown_source_is_rejected(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await create(
        harness,
        headers,
        run_body(
            tool_calls(("c1", "search_technologies", {"query": "kafka"})),
            final("Kafka [source:s1] and Mongo [source:s7]"),
            final("Kafka is in trial [source:s1]"),
        ),
    )
    assert run["termination_reason"] == "final"
    assert run["output"]["text"] == "Kafka is in trial [source:s1]"
    assert run["usage"]["steps"] == 3
    rejected = [
        e for e in await events(harness, headers, run["id"]) if e["type"] == "final.rejected"
    ]
    assert len(rejected) == 1 and rejected[0]["data"]["code"] == "invalid_citation"
    assert "s7" in rejected[0]["data"]["message"]


async def test_cancel_of_a_running_run(harness: Harness) -> None:
    headers = await harness.key()
    run = await create(harness, headers, run_body(final("slow", delay_ms=20_000), wait_s=0.3))
    assert run["status"] == "running"
    started = time.monotonic()
    response = await harness.client.post(f"/v1/runs/{run['id']}/cancel", headers=headers)
    assert response.status_code == 200
    assert time.monotonic() - started < 5
    body = response.json()
    assert body["status"] == "finished" and body["termination_reason"] == "cancelled"
    kinds = [e["type"] for e in await events(harness, headers, run["id"])]
    assert "run.cancel_requested" in kinds and kinds[-1] == "run.finished"
    again = await harness.client.post(f"/v1/runs/{run['id']}/cancel", headers=headers)
    assert again.status_code == 409 and again.json()["code"] == "invalid-state"


async def test_deadline_interrupts_a_slow_model(harness: Harness) -> None:
    headers = await harness.key()
    started = time.monotonic()
    run = await create(
        harness, headers, run_body(final("slow", delay_ms=20_000), limits={"deadline_s": 0.5})
    )
    assert time.monotonic() - started < 5
    assert run["termination_reason"] == "deadline" and run["error"]["code"] == "deadline"


async def test_tool_call_budget_cancels_calls_that_do_not_fit(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec())
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await create(
        h,
        headers,
        run_body(
            tool_calls(
                ("a", "probe", {"q": "1"}), ("b", "probe", {"q": "2"}), ("c", "probe", {"q": "3"})
            ),
            final("never"),
            limits={"max_tool_calls": 2},
        ),
    )
    assert run["termination_reason"] == "budget"
    assert probe.executions == 2 and run["usage"]["tool_calls"] == 2
    statuses = [(c["call_id"], c["status"]) for c in await calls(h, headers, run["id"])]
    assert statuses == [("a", "succeeded"), ("b", "succeeded"), ("c", "cancelled")]


async def search_under_1000_tokens(h: Harness, usage: tuple[int, int]) -> dict[str, Any]:
    """A run with max_tokens 1000 whose first turn declares `usage`."""
    await seed_radar(h)
    search = tool_calls(("c1", "search_technologies", {"query": "db"}), usage=usage)
    body = run_body(search, final("never"), limits={"max_tokens": 1000})
    return await create(h, await h.key(), body)


async def test_token_budget_stops_before_the_next_step(harness: Harness) -> None:
    """A turn that reaches max_tokens exactly is recorded; no call of it runs, and no
    model call follows: nothing is left for one."""
    run = await search_under_1000_tokens(harness, (900, 100))
    assert run["termination_reason"] == "budget" and run["usage"]["steps"] == 1
    assert run["usage"]["input_tokens"] + run["usage"]["output_tokens"] == 1000


async def test_an_answer_longer_than_the_budget_leaves_is_cut_at_its_cap(harness: Harness) -> None:
    """The call is sent capped at what the budget leaves after its input (100 tokens); an
    answer that would be longer is cut there: billed, not taken, and the run ends `budget`
    at its limit exactly, never past it."""
    run = await search_under_1000_tokens(harness, (900, 200))
    assert run["termination_reason"] == "budget" and run["usage"]["steps"] == 0
    assert run["usage"]["input_tokens"] == 900 and run["usage"]["output_tokens"] == 100
    assert "cut short at the 100 output tokens" in run["error"]["message"]
    timeline = await events(harness, await harness.key(), run["id"])
    [failed] = [e for e in timeline if e["type"] == "turn.failed"]
    assert failed["data"]["code"] == "truncated" and failed["data"]["output_cap"] == 100
    assert failed["data"]["output_tokens"] == 100


async def test_read_only_calls_run_concurrently_and_sources_follow_proposal_order(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    slow_started, slow_may_finish = asyncio.Event(), asyncio.Event()

    class Ordered(ProbeTool):
        async def execute(self, arguments, context):  # type: ignore[no-untyped-def]
            self.executions += 1
            if arguments["q"] == "slow":
                slow_started.set()
                await slow_may_finish.wait()
                await asyncio.sleep(0.5)  # a generous margin: the fast result lands first
            else:
                # Only possible if both calls are in flight at once.
                await asyncio.wait_for(slow_started.wait(), timeout=10)
                slow_may_finish.set()
            return ToolResult({"q": arguments["q"]})

    probe = Ordered(probe_spec())
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await create(
        h,
        headers,
        run_body(
            tool_calls(("c1", "probe", {"q": "slow"}), ("c2", "probe", {"q": "fast"})),
            final("both [source:s1] [source:s2]"),
        ),
    )
    assert run["termination_reason"] == "final", run
    recorded = {c["call_id"]: c for c in await calls(h, headers, run["id"])}
    assert recorded["c1"]["source_id"] == "s1" and recorded["c2"]["source_id"] == "s2"
    assert recorded["c1"]["output"] == {"q": "slow"}
    succeeded = [
        e["data"]["call_id"]
        for e in await events(h, headers, run["id"])
        if e["type"] == "call.succeeded"
    ]
    assert succeeded == ["c2", "c1"]  # results arrived out of order, numbered in order


async def test_retryable_tool_error_is_retried_by_the_executor(harness_factory) -> None:  # type: ignore[no-untyped-def]
    flaky = ToolError("flaky", "try again", retryable=True)
    probe = ProbeTool(probe_spec(cost_usd=0.25), failures=[flaky])
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await create(
        h, headers, run_body(tool_calls(("c1", "probe", {"q": "x"})), final("ok [source:s1]"))
    )
    assert run["termination_reason"] == "final"
    [call] = await calls(h, headers, run["id"])
    assert call["attempts"] == 2 and call["status"] == "succeeded"
    assert probe.executions == 2 and run["usage"]["tool_calls"] == 1
    assert run["usage"]["cost_usd"] == 0.25  # a tool's cost is charged once per call


async def test_tool_retries_exhausted_end_the_run_tool_failed(harness_factory) -> None:  # type: ignore[no-untyped-def]
    flaky = ToolError("flaky", "try again", retryable=True)
    probe = ProbeTool(probe_spec(max_attempts=2), failures=[flaky, flaky, flaky])
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await create(
        h, headers, run_body(tool_calls(("c1", "probe", {"q": "x"})), final("never"))
    )
    assert run["termination_reason"] == "tool_failed" and run["error"]["code"] == "flaky"
    assert probe.executions == 2


async def test_single_shot_agent(harness_factory) -> None:  # type: ignore[no-untyped-def]
    agent = {**DEFAULT_AGENT, "tools": [], "limits": {"max_steps": 1}}
    h = await harness_factory(config=make_config({"summarize": agent}))
    headers = await h.key()
    run = await create(h, headers, run_body(final("a summary", usage=(50, 10)), agent="summarize"))
    assert run["termination_reason"] == "final" and run["usage"]["steps"] == 1
    assert run["tools"] == []


async def test_cost_budget_counts_model_prices(harness_factory) -> None:  # type: ignore[no-untyped-def]
    from app.adapters.tools.builtin.tech_radar import SPECS
    from app.config.files import parse_config

    config = parse_config(
        {
            "models": {
                "priced": {
                    "provider": "scripted",
                    "input_cost_per_mtok": 500,
                    "output_cost_per_mtok": 1000,
                }
            },
            "agents": {"tech-radar": {**DEFAULT_AGENT, "model": "priced"}},
        },
        builtin_tools=SPECS,
    )
    h = await harness_factory(config=config)
    await seed_radar(h)
    headers = await h.key()
    search = ("c1", "search_technologies", {"query": "db"})
    run = await create(
        h,
        headers,
        run_body(
            tool_calls(search, usage=(600, 100)),  # 0.3 + 0.1 = $0.40
            # $0.30 of input leaves $0.05: the call is capped at 50 output tokens, and
            # the answer of 100 is cut there.
            tool_calls(search, usage=(600, 100)),
            final("never"),
            limits={"max_cost_usd": 0.75},
        ),
    )
    assert run["termination_reason"] == "budget", run
    assert run["usage"]["steps"] == 1 and run["usage"]["cost_usd"] == 0.75
    assert "cost budget" in run["error"]["message"]
    timeline = await events(h, headers, run["id"])
    costs = [e["data"]["cost_usd"] for e in timeline if e["type"].startswith("turn.")]
    assert costs == [0.4, 0.35]
    [cut] = [e["data"] for e in timeline if e["type"] == "turn.failed"]
    assert cut["output_cap"] == 50 and cut["output_tokens"] == 50
