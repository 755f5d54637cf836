"""Long runs, end to end on a fake OpenAI-compatible provider that bills as providers do:
a run of 200 steps within an 8,000-token context, one search a step with call ids as real
providers make them (no pattern to fold), a failure now and then. Every request stays
within the budget and names every call made so far with its error code; a result folded
long ago is read back by its call id and step; and the run's usage is what the provider
billed, within its limits."""

from __future__ import annotations

import json
import random
import string
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.backend import FakeBackend, fail, ok, serving
from tests.support.context_budget import (
    budget_config,
    finished,
    named,
    observations,
    wire_tokens,
)
from tests.support.fake_openai import FakeOpenAI, calls
from tests.support.fake_openai import text as says
from tests.support.live_model import provider, start

__all__ = ["provider"]  # a fixture: used by name

CODES = ("not_found", "stale_data", "upstream_busy", "timeout")


@pytest.fixture
async def backend() -> AsyncIterator[FakeBackend]:
    async with serving() as server:
        yield server


def call_id(rng: random.Random) -> str:
    return "call_" + "".join(rng.choices(string.ascii_letters + string.digits, k=24))


def found(step: int) -> dict[str, Any]:
    """A search result of about 1 KiB."""
    return {
        "query": f"q{step}",
        "hits": [{"id": f"t{step}-{i}", "text": "w" * 90} for i in range(9)],
    }


async def test_a_200_step_run_keeps_every_call_id_and_code_within_8000_tokens(
    harness_factory, backend: FakeBackend, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    """(60 steps within 6,000 tokens: test_context_budget, on the same provider.)"""
    steps, budget = 200, 8000
    provider.realistic = True
    config = budget_config(backend, provider, steps=steps + 5, long=budget)
    h = await harness_factory(config=config)
    rng = random.Random(steps)
    made: dict[str, int] = {}
    failures: dict[str, str] = {}
    for step in range(1, steps + 1):
        cid = call_id(rng)
        made[cid] = step
        if step % 7 == 0:
            failures[cid] = rng.choice(CODES)
            backend.answer("lookup", fail(404, failures[cid], "nothing there"))
        else:
            backend.answer("lookup", ok(found(step), source_version=f"W/{rng.getrandbits(32):x}"))
        provider.answer(calls((cid, "lookup", json.dumps({"q": f"q{step}"}))))
    first = next(iter(made))
    read = json.dumps({"call_id": first, "step": 1, "page": 1})
    provider.answer(calls(("read1", "read_result", read)), says("done"))

    run = await finished(h, await start(h, agent="long", wait_s=0), timeout_s=240)
    assert run["termination_reason"] == "final", run
    requests = provider.requests
    assert len(requests) == steps + 2
    assert max(wire_tokens(r) for r in requests) <= budget
    # The last request before the page read names every call made, with its code.
    last = named(requests[-2])
    assert set(last) == set(made)
    assert {i: last[i][1] for i in failures} == failures
    assert all(last[i][1] is None for i in made if i not in failures)
    folded = [m for m in requests[-2]["messages"] if '"history_digest"' in str(m["content"])]
    assert len(folded) == 1 and first not in observations(requests[-2])
    page = observations(requests[-1])["read1"]["output"]
    assert page["call_id"] == first and page["step"] == 1 and '"q1"' in page["text"]
    # What the provider billed is the run's usage, and within its limits.
    usage = run["usage"]
    assert usage["input_tokens"] == sum(
        -(-len(json.dumps(r["messages"] + r.get("tools", []))) // 4) for r in requests
    )
    assert usage["input_tokens"] + usage["output_tokens"] <= run["limits"]["max_tokens"]
