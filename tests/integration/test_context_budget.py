"""The context budget, end to end (an agent's `limits.context_tokens`), observed at a fake
OpenAI provider that records every request: a long run's model input stays within its
budget with every call id and error code still in it (under a small budget, its oldest
turns folded into a digest, their results still read by call id and step); a large
result reaches the model as a summary and is read page by page through `read_result`; a
run whose input cannot fit ends `context_exhausted` before any model call; and such a run
is continued by another agent with a larger budget (`continue_from`)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from app.db.tables import run as run_table
from tests.support.backend import FakeBackend, fail, ok, serving
from tests.support.context_budget import (
    budget_config,
    finished,
    named,
    observations,
    tool_names,
    wire_tokens,
)
from tests.support.fake_openai import FakeOpenAI, calls
from tests.support.fake_openai import text as says
from tests.support.guarded import run_items
from tests.support.harness import Harness
from tests.support.live_model import provider, start

__all__ = ["provider"]  # a fixture: used by name

STEPS = 60
BUDGET = 24_000
CODES = ("not_found", "stale_data", "upstream_busy")


@pytest.fixture
async def backend() -> AsyncIterator[FakeBackend]:
    async with serving() as server:
        yield server


async def budgeted(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI, **budgets: Any
) -> Harness:  # type: ignore[no-untyped-def]
    return await harness_factory(config=budget_config(backend, provider, **budgets))


def sizeable(step: int, n: int) -> dict[str, Any]:
    """About 3 KiB: under the 8 KiB at which a result is paged, but 60 steps of them are
    far more than the budget holds whole."""
    return {
        "step": step,
        "n": n,
        "rows": [f"row {i} of step {step}: " + "x" * 40 for i in range(60)],
    }


def script_long_run(backend: FakeBackend, provider: FakeOpenAI) -> dict[str, str]:
    """Every fifth step one call that fails with a code; the others two calls that
    succeed. The failed calls' codes, by call id."""
    failures: dict[str, str] = {}
    for step in range(1, STEPS + 1):
        if step % 5 == 0:
            code = CODES[step % len(CODES)]
            failures[f"f{step}"] = code
            backend.answer("lookup", fail(404, code, f"nothing at step {step}"))
            provider.answer(calls((f"f{step}", "lookup", json.dumps({"q": f"gone {step}"}))))
        else:
            backend.answer("lookup", ok(sizeable(step, 1), source_version=f"v{step}"))
            backend.answer("lookup", ok(sizeable(step, 2), source_version=f"v{step}"))
            provider.answer(
                calls(
                    (f"a{step}", "lookup", json.dumps({"q": f"first {step}"})),
                    (f"b{step}", "lookup", json.dumps({"q": f"second {step}"})),
                )
            )
    provider.answer(says("done"))
    return failures


async def test_a_60_step_run_stays_within_its_budget_with_every_call_id_and_error_code(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await budgeted(harness_factory, backend, provider, long=BUDGET)
    failures = script_long_run(backend, provider)
    run = await finished(h, await start(h, agent="long", wait_s=30))
    assert run["termination_reason"] == "final", run
    assert run["usage"]["steps"] == STEPS + 1

    requests = provider.requests
    assert len(requests) == STEPS + 1
    first = requests[0]
    summarized = 0
    for step, request in enumerate(requests, start=1):
        assert wire_tokens(request) <= BUDGET, step
        # The system policy and the run's input, whole at every step.
        assert request["messages"][:2] == first["messages"][:2]
        seen = observations(request)
        # Every call made so far is there, by its id, with its error code if it failed.
        made = [
            i for s in range(1, step) for i in ((f"f{s}",) if s % 5 == 0 else (f"a{s}", f"b{s}"))
        ]
        assert sorted(seen) == sorted(made), step
        for call_id, code in failures.items():
            if call_id in seen:
                assert seen[call_id]["error"]["code"] == code, (step, call_id)
        # The latest observations verbatim: the previous step's results, whole.
        if step > 1 and (step - 1) % 5:
            latest = seen[f"a{step - 1}"]
            assert latest["type"] == "tool_result" and latest["output"]["step"] == step - 1
        summaries = [o for o in seen.values() if o["type"] == "tool_result_summary"]
        summarized = max(summarized, len(summaries))
        for summary in summaries:  # what a summary keeps of a result
            if summary["status"] == "succeeded":
                assert summary["source_id"].startswith("s") and summary["size"] > 2000
                assert summary["source_version"] == f"v{summary['step']}"
    # The budget was tight: most older results were summaries by the end.
    assert summarized > STEPS
    # With summaries in the input, the model may read them: read_result is exposed.
    assert tool_names(requests[-1]) == ["lookup", "read_result"]
    assert tool_names(requests[0]) == ["lookup"]


async def test_a_long_run_under_a_small_budget_folds_its_oldest_turns_into_a_digest(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    provider.realistic = True  # billed as providers bill: the run's usage is theirs
    h = await budgeted(harness_factory, backend, provider, small=6000)
    failures: dict[str, str] = {}
    for step in range(1, STEPS + 1):
        if step % 5 == 0:
            failures[f"f{step}"] = CODES[step % len(CODES)]
            backend.answer("lookup", fail(404, CODES[step % len(CODES)], "nothing"))
            provider.answer(calls((f"f{step}", "lookup", json.dumps({"q": f"gone {step}"}))))
        else:
            backend.answer("lookup", ok(sizeable(step, 1), source_version=f"v{step}"))
            provider.answer(calls((f"a{step}", "lookup", json.dumps({"q": f"first {step}"}))))
    # A result folded long ago, read back by its call id and step.
    provider.answer(calls(("r1", "read_result", '{"call_id": "a3", "step": 3, "page": 1}')))
    provider.answer(says("done"))
    run = await finished(h, await start(h, agent="small", wait_s=30))
    assert run["termination_reason"] == "final", run

    requests = provider.requests
    assert len(requests) == STEPS + 2
    assert all(wire_tokens(r) <= 6000 for r in requests)
    # Before the page read: every call so far, with its step and its code if it failed.
    before = named(requests[-2])
    made = {(f"f{s}" if s % 5 == 0 else f"a{s}"): s for s in range(1, STEPS + 1)}
    assert set(before) == set(made)
    assert all(before[i][0] in (s, None) for i, s in made.items())
    assert {i: before[i][1] for i in failures} == failures
    folded = [m for m in requests[-2]["messages"] if '"history_digest"' in str(m["content"])]
    assert len(folded) == 1 and "a3" not in observations(requests[-2])
    page = observations(requests[-1])["r1"]["output"]
    assert page["call_id"] == "a3" and page["step"] == 3 and "row 0 of step 3" in page["text"]
    assert tool_names(requests[-1]) == ["lookup", "read_result"]


async def test_a_large_result_is_paged_through_read_result(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await budgeted(harness_factory, backend, provider, live=None)
    big = {"rows": [f"{i:05d}:" + "y" * 94 for i in range(200)]}  # about 20 KiB
    backend.answer("lookup", ok(big, source_version="42"))
    provider.answer(
        calls(("c1", "lookup", '{"q": "everything"}')),
        calls(("r1", "read_result", '{"call_id": "c1", "page": 2}')),
        calls(("r2", "read_result", '{"call_id": "c1", "page": 99}')),
        says("read it [source:s2]"),
    )
    run = await finished(h, await start(h))
    assert run["termination_reason"] == "final", run
    first, second, third, fourth = provider.requests
    assert tool_names(first) == ["lookup"]

    paged = observations(second)["c1"]
    assert paged["type"] == "tool_result" and "output" not in paged
    text = json.dumps(big, sort_keys=True, separators=(",", ":"))
    assert paged["paged"]["size"] == len(text) and paged["paged"]["pages"] == 6
    assert paged["source_id"] == "s1" and paged["source_version"] == "42"
    assert tool_names(second) == ["lookup", "read_result"]

    page = observations(third)["r1"]
    assert page["output"]["page"] == 2 and page["output"]["pages"] == 6
    assert page["output"]["text"] == text[4096:8192]
    assert page["output"]["source_id"] == "s1" and page["source_version"] == "42"
    assert observations(fourth)["r2"]["error"]["code"] == "not_found"

    items = await run_items(h, run["id"], "calls")
    assert [(c["call_id"], c["tool"], c["status"]) for c in items] == [
        ("c1", "lookup", "succeeded"),
        ("r1", "read_result", "succeeded"),
        ("r2", "read_result", "failed"),
    ]
    assert run["usage"]["tool_calls"] == 3  # a page read is a call like any other
    assert run["output"]["citations"][0]["source_id"] == "s2"

    # Continued, the run carries over no page read as a committed effect (none was one).
    provider.answer(says("continued"))
    answer = await h.client.post(
        "/v1/runs",
        headers=await h.key(),
        json={"agent": "live", "continue_from": run["id"], "wait_s": 10},
    )
    assert answer.status_code == 201, answer.text
    async with h.runtime.sessions() as session:
        carried = await session.execute(
            select(run_table.c.carry_over).where(run_table.c.id == answer.json()["id"])
        )
        committed = carried.scalar_one().get("committed") or []
    assert all(effect.get("tool") != "read_result" for effect in committed), committed


async def test_read_result_never_reads_another_runs_results(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await budgeted(harness_factory, backend, provider, live=None)
    big = {"text": "z" * 20_000}
    backend.answer("lookup", ok(big), ok(big))
    provider.answer(calls(("c1", "lookup", '{"q": "a"}')), says("first done"))
    first = await finished(h, await start(h))
    assert first["termination_reason"] == "final"
    provider.answer(
        calls(("x1", "lookup", '{"q": "b"}')),
        calls(("r1", "read_result", '{"call_id": "c1", "page": 1}')),
        says("second done"),
    )
    second = await finished(h, await start(h))
    assert second["termination_reason"] == "final"
    refused = observations(provider.requests[-1])["r1"]
    assert refused["error"]["code"] == "not_found"
    assert "z" * 100 not in json.dumps(provider.requests[-1])


async def test_a_run_whose_input_cannot_fit_ends_before_its_first_model_call(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await budgeted(harness_factory, backend, provider, tight=300)
    run = await finished(h, await start(h, agent="tight", input="Compare these: " + "k " * 1000))
    assert run["termination_reason"] == "context_exhausted", run
    assert run["error"]["code"] == "context_exhausted"
    assert "input does not fit" in run["error"]["message"]
    assert provider.requests == []
    assert run["usage"]["steps"] == 0 and run["usage"]["input_tokens"] == 0


async def test_a_context_exhausted_run_is_continued_by_an_agent_with_a_larger_budget(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await budgeted(harness_factory, backend, provider, tight=1500, wide=50_000)
    for step in range(1, 30):
        # Versions as ETags, with no pattern to fold: the digest of older turns grows a
        # row a step until even it does not fit.
        version = hashlib.sha256(f"v{step}".encode()).hexdigest()
        backend.answer("lookup", ok({"rows": ["r" * 1000]}, source_version=version))
        provider.answer(calls((f"c{step}", "lookup", json.dumps({"q": f"q{step}"}))))
    question = "Which of our databases should move rings?"
    old = await finished(h, await start(h, agent="tight", input=question))
    assert old["termination_reason"] == "context_exhausted", old
    assert "no longer fits" in old["error"]["message"]
    made = len(provider.requests)
    assert 1 < made < 29
    old_calls = [f"c{s}" for s in range(1, made + 1)]

    provider.script.clear()
    provider.answer(says("Postgres stays in adopt."))
    headers = await h.key()
    body = {"agent": "wide", "continue_from": old["id"], "wait_s": 10}  # no input: the old one
    answer = await h.client.post("/v1/runs", headers=headers, json=body)
    assert answer.status_code == 201, answer.text
    new = await finished(h, answer.json())
    assert new["termination_reason"] == "final", new
    assert new["continued_from"] == old["id"] and new["agent"] == "wide"
    first = provider.requests[made]
    assert first["messages"][1] == {"role": "user", "content": question}  # the old input
    carried = json.loads(first["messages"][2]["content"])
    assert carried["type"] == "carry_over" and carried["continued_from"] == old["id"]
    assert carried["ended"] == {
        "termination_reason": "context_exhausted",
        "code": "context_exhausted",
    }
    assert [r["call_id"] for r in carried["results"]] == old_calls
    assert all(r["run_id"] == old["id"] and r["source_version"] for r in carried["results"])
    assert "input" not in carried  # the same input, not said twice

    answer = await h.client.get(f"/v1/runs/{new['id']}", headers=headers)
    assert answer.json()["continued_from"] == old["id"]
    [created] = [e for e in await run_items(h, new["id"], "events") if e["type"] == "run.created"]
    assert created["data"]["continued_from"] == old["id"]


async def test_continue_from_is_refused_for_an_unknown_unfinished_or_foreign_run(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await budgeted(harness_factory, backend, provider, live=None)
    headers = await h.key()
    body = {"agent": "live", "continue_from": "run_nope", "wait_s": 0}
    answer = await h.client.post("/v1/runs", headers=headers, json=body)
    assert answer.status_code == 404 and answer.json()["code"] == "not-found"

    late = says("late", usage=(1, 1))
    late.hold = asyncio.Event()  # its model call in flight meanwhile
    provider.answer(late)
    running = await start(h, wait_s=0)
    answer = await h.client.post(
        "/v1/runs", headers=headers, json={**body, "continue_from": running["id"]}
    )
    assert answer.status_code == 409 and answer.json()["code"] == "invalid-state"

    late.hold.set()
    await finished(h, running)
    other = await h.key(tenant="globex")
    answer = await h.client.post(
        "/v1/runs", headers=other, json={**body, "continue_from": running["id"]}
    )
    assert answer.status_code == 404

    answer = await h.client.post("/v1/runs", headers=headers, json={"agent": "live", "wait_s": 0})
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["path"] == "input"
