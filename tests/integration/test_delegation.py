"""The `agent` tool kind (issue 18 item 6): a model delegates to another agent as a child
run; the child's final answer is the call's output the parent's model reads next; the
child follows the rules of every child (clamped, reserved, rolled up); and a crash while
the child runs never makes a second child for the call."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from sqlalchemy import func, select

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from app.db.clock import DbTime
from app.db.tables import run as run_table
from tests.support.factories import final, run_body, tool_calls
from tests.support.fake_openai import FakeOpenAI, calls
from tests.support.fake_openai import text as says
from tests.support.fakes import FakeClock
from tests.support.harness import DEFAULT_AGENT, Harness, make_config
from tests.support.leases import LEASE_S, crash
from tests.support.live_model import KEY_ENV, provider

__all__ = ["provider"]  # a fixture: used by name

ASK_JUDGE = {
    "kind": "agent",
    "agent": "judge",
    "description": "Ask the ring judge which ring a technology belongs in.",
}
JUDGE = {"model": "scripted", "instructions": "Say which ring.", "tools": []}
PARENT = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "ask_judge"]}


def delegating_config() -> Any:
    return make_config({"tech-radar": PARENT, "judge": JUDGE}, tools={"ask_judge": ASK_JUDGE})


def live_config(provider: FakeOpenAI) -> Any:
    """Both agents on an OpenAI-compatible route to the fake provider."""
    live = {
        "provider": "openai",
        "model": "gpt-test",
        "base_url": f"{provider.url}/v1",
        "api_key_env": KEY_ENV,
        "timeout_s": 5,
    }
    data = {
        "models": {"live": live},
        "tools": {"ask_judge": ASK_JUDGE},
        "agents": {
            "tech-radar": {**PARENT, "model": "live"},
            "judge": {**JUDGE, "model": "live", "limits": {"max_steps": 1}},
        },
    }
    return parse_config(data, builtin_tools=SPECS)


def ask(call_id: str, question: str, *child_script: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """A scripted turn delegating `question` to the judge, whose child runs `child_script`."""
    item = tool_calls((call_id, "ask_judge", {"input": question}), **kw)
    item["calls"][0]["script"] = list(child_script)
    return item


async def children_of(h: Harness, parent_id: str) -> list[dict[str, Any]]:
    async with h.runtime.sessions() as session:
        rows = await session.execute(
            select(run_table).where(run_table.c.parent_run_id == parent_id)
        )
        return [dict(r) for r in rows.mappings()]


async def test_a_delegated_childs_final_answer_is_the_calls_output(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=delegating_config())
    headers = await h.key()
    body = run_body(
        ask("d1", "Where does Kafka go?", final("trial", usage=(30, 3)), usage=(100, 10)),
        final("The judge says trial.", usage=(120, 5)),
        limits={"max_tokens": 2000, "max_tool_calls": 5},
    )
    answer = await h.client.post("/v1/runs", headers=headers, json=body)
    assert answer.status_code == 201, answer.text
    parent = (await h.driver.wait("acme", answer.json()["id"], 10)).id
    parent_view = (await h.client.get(f"/v1/runs/{parent}", headers=headers)).json()
    assert parent_view["termination_reason"] == "final", parent_view
    [child] = await children_of(h, parent)
    assert child["agent"] == "judge" and child["input"] == "Where does Kafka go?"
    assert child["termination_reason"] == "final" and child["root_run_id"] == parent
    # Clamped to what the parent had left when the call ran: its own turn and the call
    # itself were spent already.
    assert child["limits"]["max_tokens"] == 2000 - 110
    assert child["limits"]["max_tool_calls"] == 5 - 1
    [call] = (await h.client.get(f"/v1/runs/{parent}/calls", headers=headers)).json()["items"]
    assert call["status"] == "succeeded", call
    assert call["output"] == {"run_id": child["id"], "text": "trial"}
    assert parent_view["usage"]["input_tokens"] == 100 + 120 + 30
    assert parent_view["usage"]["tool_calls"] == 1
    assert parent_view["reserved"] == {"tokens": 0, "cost_usd": 0.0, "tool_calls": 0}
    listed = await h.client.get(f"/v1/runs?parent_run_id={parent}", headers=headers)
    assert [r["id"] for r in listed.json()["items"]] == [child["id"]]


async def test_the_parents_model_reads_the_childs_answer_and_a_failed_child_is_an_error(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    config = live_config(provider)
    h = await harness_factory(config=config)
    provider.answer(
        calls(("d1", "ask_judge", '{"input": "Where does Kafka go?"}')),  # the parent
        says("Kafka belongs in trial."),  # the child
        calls(("d2", "ask_judge", '{"input": "And CORBA?"}')),  # the parent again
        calls(("x", "search_technologies", '{"query": "corba"}')),  # the child: no answer
        says("Kafka: trial; CORBA: unknown."),  # the parent
    )
    headers = await h.key()
    body = {"agent": "tech-radar", "input": "Ask the judge.", "wait_s": 10}
    answer = await h.client.post("/v1/runs", headers=headers, json=body)
    assert answer.status_code == 201, answer.text
    run = await h.driver.wait("acme", answer.json()["id"], 15)
    assert run.termination_reason == "final", run
    # The parent's second request ends with the child's answer, inside its envelope.
    envelope = json.loads(provider.requests[2]["messages"][-1]["content"])
    assert envelope["output"]["text"] == "Kafka belongs in trial."
    # The second child ended max_steps: the parent's model heard that as the call's error.
    last = json.loads(provider.requests[4]["messages"][-1]["content"])
    assert last["error"]["code"] == "child_max_steps", last


async def test_a_crash_while_the_child_runs_never_makes_a_second_child(harness_factory) -> None:  # type: ignore[no-untyped-def]
    config = delegating_config()
    a = await harness_factory(config=config, run_driver=False, clock_=FakeClock())
    later = FakeClock()
    later.advance(LEASE_S + 1)
    b = await harness_factory(
        config=config, run_driver=False, clock_=later, db_time=DbTime(LEASE_S + 1)
    )
    headers = await a.key()
    body = run_body(
        ask("d1", "Where does Kafka go?", final("trial", delay_ms=1500)),
        final("The judge says trial."),
        wait_s=0,
    )
    answer = await a.client.post("/v1/runs", headers=headers, json=body)
    assert answer.status_code == 201, answer.text
    parent = answer.json()["id"]
    for _ in range(100):
        if found := await children_of(a, parent):
            break
        await asyncio.sleep(0.05)
    [child] = found
    await asyncio.sleep(0.2)  # the child's model call is in flight
    await crash(a, parent)  # the whole process goes: the parent and its child
    await crash(a, child["id"])

    assert await b.driver.poll_once() == 2  # by b's clock both leases have lapsed
    done = await b.driver.wait("acme", parent, 15)
    assert done.termination_reason == "final", done
    [again] = await children_of(b, parent)
    assert again["id"] == child["id"] and again["termination_reason"] == "final"
    assert again["model_calls"] == 1  # its script item consumed once
    calls_seen = (await b.client.get(f"/v1/runs/{parent}/calls", headers=headers)).json()
    [call] = calls_seen["items"]
    assert call["status"] == "succeeded" and call["output"]["text"] == "trial"
    async with b.runtime.sessions() as session:
        total = await session.execute(select(func.count()).select_from(run_table))
        assert total.scalar_one() == 2
