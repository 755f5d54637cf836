"""A real run's diagnosis over HTTP (SPEC §9): runs driven through the scripted model to
each kind of end, and what `GET /v1/runs/{id}/diagnosis` says of them — each answer's
`seq` checked against the event the timeline holds there."""

from __future__ import annotations

import asyncio
from typing import Any

from app.domain.tools.specs import ToolError
from tests.support.factories import error, final, run_body, seed_radar, tool_calls
from tests.support.fakes import ProbeTool, probe_spec
from tests.support.harness import Harness

SEARCH = ("c1", "search_technologies", {"query": "database"})


async def started(h: Harness, headers: dict[str, str], *script: Any, **fields: Any) -> str:
    answer = await h.client.post("/v1/runs", headers=headers, json=run_body(*script, **fields))
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


async def finished(h: Harness, headers: dict[str, str], *script: Any, **fields: Any) -> dict:
    run_id = await started(h, headers, *script, **fields)
    run = await h.driver.wait("acme", run_id, 10)
    assert run.status == "finished", run
    return (await h.client.get(f"/v1/runs/{run_id}", headers=headers)).json()


async def diagnosis(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    answer = await h.client.get(f"/v1/runs/{run_id}/diagnosis", headers=headers)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) == {"first_deviation", "root_cause", "terminal_cause"}
    return body


async def pointed(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    """Each answer as (the type of the event its seq names, its category), or None."""
    events = (await h.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)).json()
    types = {e["seq"]: e["type"] for e in events["items"]}
    found = await diagnosis(h, headers, run_id)
    for answer in found.values():
        assert answer is None or answer["explanation"].strip()
    return {
        name: None if answer is None else (types[answer["seq"]], answer["category"])
        for name, answer in found.items()
    }


async def test_a_clean_run_has_only_its_terminal_cause(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await finished(harness, headers, tool_calls(SEARCH), final("PostgreSQL [source:s1]"))
    assert run["termination_reason"] == "final"
    assert await pointed(harness, headers, run["id"]) == {
        "first_deviation": None,
        "root_cause": None,
        "terminal_cause": ("run.finished", "final"),
    }


async def test_a_run_that_corrected_a_refused_call_recovered(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await finished(
        harness,
        headers,
        tool_calls(("c1", "search_technologies", {"query": 5})),
        tool_calls(SEARCH),
        final("PostgreSQL [source:s1]"),
    )
    assert run["termination_reason"] == "final"
    found = await pointed(harness, headers, run["id"])
    assert found == {
        "first_deviation": ("call.rejected", "invalid_arguments"),
        "root_cause": None,
        "terminal_cause": ("run.finished", "final"),
    }
    answer = await diagnosis(harness, headers, run["id"])
    assert "search_technologies" in answer["first_deviation"]["explanation"]


async def test_a_read_that_failed_is_the_root_of_an_answer_given_without_it(
    harness: Harness,
) -> None:
    headers = await harness.key()
    run = await finished(
        harness,
        headers,
        tool_calls(("c1", "get_technology", {"technology_id": "tech_nope"})),
        final("I could not find it."),
    )
    assert run["termination_reason"] == "final"
    assert await pointed(harness, headers, run["id"]) == {
        "first_deviation": ("call.failed", "failed"),
        "root_cause": ("call.failed", "failed"),
        "terminal_cause": ("run.finished", "final"),
    }


async def test_steps_spent_on_progress_need_review(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await finished(
        harness,
        headers,
        tool_calls(SEARCH),
        tool_calls(("c1", "search_technologies", {"query": "queue"})),
        final("never reached"),
        limits={"max_steps": 2},
    )
    assert run["termination_reason"] == "max_steps"
    assert await pointed(harness, headers, run["id"]) == {
        "first_deviation": ("run.finished", "max_steps"),
        "root_cause": ("run.finished", "needs_review"),
        "terminal_cause": ("run.finished", "max_steps"),
    }


async def test_the_same_call_again_and_again_is_a_loop(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await finished(
        harness, headers, *[tool_calls(SEARCH)] * 3, final("x"), limits={"max_steps": 3}
    )
    assert run["termination_reason"] == "max_steps"
    found = await pointed(harness, headers, run["id"])
    assert found["first_deviation"] == ("call.proposed", "repeated_call")
    assert found["root_cause"] == ("call.proposed", "repeated_call")


async def test_calls_over_the_budget_are_its_root(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = await finished(
        harness,
        headers,
        tool_calls(SEARCH, ("c2", "search_technologies", {"query": "queue"})),
        final("x"),
        limits={"max_tool_calls": 1},
    )
    assert run["termination_reason"] == "budget"
    assert await pointed(harness, headers, run["id"]) == {
        "first_deviation": ("call.cancelled", "budget_denied"),
        "root_cause": ("call.cancelled", "budget_denied"),
        "terminal_cause": ("run.finished", "budget"),
    }


async def test_a_fatal_tool_error_ends_the_run_and_is_its_root(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec(), failures=[ToolError("ledger_down", "down", fatal=True)])
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await finished(h, headers, tool_calls(("c1", "probe", {"q": "x"})), final("x"))
    assert run["termination_reason"] == "tool_failed"
    assert await pointed(h, headers, run["id"]) == {
        "first_deviation": ("call.failed", "failed"),
        "root_cause": ("call.failed", "failed"),
        "terminal_cause": ("run.finished", "failed"),
    }


async def test_a_tool_timeout(harness_factory) -> None:  # type: ignore[no-untyped-def]
    probe = ProbeTool(probe_spec(max_attempts=1), failures=[ToolError("timeout", "slow")])
    h = await harness_factory(probe=probe)
    headers = await h.key()
    run = await finished(h, headers, tool_calls(("c1", "probe", {"q": "x"})), final("x"))
    found = await pointed(h, headers, run["id"])
    assert found["root_cause"] == ("call.failed", "timeout")


async def test_the_model_failing_and_a_script_running_out(harness: Harness) -> None:
    headers = await harness.key()
    refused = await finished(harness, headers, error("auth", retryable=False))
    assert (refused["termination_reason"], refused["error"]["code"]) == ("model_failed", "auth")
    assert await pointed(harness, headers, refused["id"]) == {
        "first_deviation": ("turn.failed", "auth"),
        "root_cause": ("turn.failed", "auth"),
        "terminal_cause": ("run.finished", "auth"),
    }
    recovered = await finished(harness, headers, error("rate_limited", retryable=True), final("ok"))
    assert recovered["termination_reason"] == "final"
    found = await pointed(harness, headers, recovered["id"])
    assert found["first_deviation"] == ("turn.failed", "rate_limited")
    assert found["root_cause"] is None

    ran_out = await finished(harness, headers, tool_calls(("c1", "get_technology", {})))
    found = await pointed(harness, headers, ran_out["id"])
    assert found["terminal_cause"] == ("run.finished", "stopped_early")


async def test_a_cancelled_run_and_one_still_running(harness: Harness) -> None:
    headers = await harness.key()
    run_id = await started(harness, headers, final("slow", delay_ms=30_000), wait_s=0)
    # While it runs: nothing has gone wrong, and it has not ended.
    assert await pointed(harness, headers, run_id) == {
        "first_deviation": None,
        "root_cause": None,
        "terminal_cause": None,
    }
    answer = await harness.client.post(f"/v1/runs/{run_id}/cancel", headers=headers)
    assert answer.status_code == 200, answer.text
    for _ in range(100):
        if answer.json()["status"] == "finished":
            break
        await asyncio.sleep(0.1)
        answer = await harness.client.get(f"/v1/runs/{run_id}", headers=headers)
    assert answer.json()["termination_reason"] == "cancelled"
    assert await pointed(harness, headers, run_id) == {
        "first_deviation": ("run.cancel_requested", "cancelled"),
        "root_cause": ("run.cancel_requested", "cancelled"),
        "terminal_cause": ("run.finished", "cancelled"),
    }


async def test_who_may_read_it(harness: Harness) -> None:
    caller = await harness.key(roles="caller")
    run = await finished(harness, caller, final("ok"))
    path = f"/v1/runs/{run['id']}/diagnosis"
    approver = await harness.key(subject="alice", roles="approver")
    assert (await harness.client.get(path, headers=approver)).status_code == 200

    admin = await harness.key(subject="root", roles="admin")
    forbidden = await harness.client.get(path, headers=admin)
    assert forbidden.status_code == 403
    assert forbidden.headers["content-type"].startswith("application/problem+json")

    other = await harness.key(tenant="globex")
    for answer in (
        await harness.client.get(path, headers=other),
        await harness.client.get("/v1/runs/run_nope/diagnosis", headers=caller),
    ):
        assert answer.status_code == 404
        assert answer.headers["content-type"].startswith("application/problem+json")
        assert answer.json()["code"] == "not-found"
    assert (await harness.client.get(path)).status_code == 401
