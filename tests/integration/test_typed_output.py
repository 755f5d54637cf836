"""Typed final output, end to end over HTTP with the scripted model: an agent with an
`output_schema` answers with a JSON document valid against it; a wrong answer is rejected
with its validation errors and the model answers again within the run's budgets, and a
right one finishes `final` with the parsed document as `output.data`."""

from __future__ import annotations

import json
from typing import Any

from tests.support.approvals import approve, commit, keys, move, row
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config

RING = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ring"],
    "properties": {"ring": {"type": "string", "enum": ["adopt", "trial", "assess", "hold"]}},
}
JUDGE = {
    "model": "scripted",
    "instructions": "Say which ring a technology belongs in.",
    "tools": ["search_technologies"],
    "output_schema": RING,
}


async def _typed(harness_factory) -> tuple[Harness, dict[str, str]]:  # type: ignore[no-untyped-def]
    h = await harness_factory(
        config=make_config({"ring-judge": JUDGE, "tech-radar": DEFAULT_AGENT})
    )
    await seed_radar(h)
    return h, await h.key()


async def _run(h: Harness, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    answer = await h.client.post("/v1/runs", headers=headers, json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


async def _events(h: Harness, headers: dict[str, str], run_id: str, kind: str) -> list[Any]:
    answer = await h.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
    return [e["data"] for e in answer.json()["items"] if e["type"] == kind]


async def test_a_wrong_answer_is_rejected_with_its_errors_then_a_right_one_is_the_data(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h, headers = await _typed(harness_factory)
    right = '{"ring": "trial"}'
    body = run_body(
        tool_calls(("c1", "search_technologies", {"query": "kafka"})),
        final('{"ring": "maybe", "why": "unsure"}'),
        final(right),
        agent="ring-judge",
    )
    run = await _run(h, headers, body)

    assert run["termination_reason"] == "final", run
    assert run["output"]["text"] == right
    assert run["output"]["data"] == {"ring": "trial"}
    assert run["usage"]["steps"] == 3  # the rejected answer counted as a step
    [rejected] = await _events(h, headers, run["id"], "final.rejected")
    assert rejected["step"] == 2 and rejected["code"] == "invalid_output"
    assert rejected["retryable"] is True
    paths = {e["path"]: e["message"] for e in rejected["errors"]}
    assert "'maybe' is not one of" in paths["/ring"]
    assert "'why' was unexpected" in paths[""]
    # What the model heard: the same reasons, in the observation after its answer.
    assert "at /ring: 'maybe' is not one of" in rejected["message"]
    diagnosis = (await h.client.get(f"/v1/runs/{run['id']}/diagnosis", headers=headers)).json()
    # A deviation the run recovered from: the model corrected its answer.
    assert diagnosis["first_deviation"]["category"] == "malformed_output"
    assert diagnosis["root_cause"] is None


async def test_an_answer_that_never_fits_ends_at_the_budget_without_data(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h, headers = await _typed(harness_factory)
    body = run_body(
        final("The ring is trial."),  # not JSON at all
        final('```json\n{"ring": "sometime"}\n```'),
        final('{"ring": "trial"}'),  # never reached: the steps are used up
        agent="ring-judge",
        limits={"max_steps": 2},
    )
    run = await _run(h, headers, body)

    assert run["termination_reason"] == "max_steps", run
    assert run["output"] is None and run["error"]["code"] == "max_steps"
    first, second = await _events(h, headers, run["id"], "final.rejected")
    assert first["errors"][0]["path"] == "" and "not a JSON document" in first["message"]
    # A fenced document is read inside its fence: what is wrong is its value.
    assert second["errors"][0]["path"] == "/ring"


async def test_a_script_item_may_give_the_answer_as_data(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h, headers = await _typed(harness_factory)
    data = {"ring": "adopt"}
    run = await _run(h, headers, run_body({"type": "final", "data": data}, agent="ring-judge"))
    assert run["termination_reason"] == "final", run
    assert run["output"]["data"] == data and json.loads(run["output"]["text"]) == data
    # Data that does not fit is rejected like text: the script gives the model's words.
    wrong = {"type": "final", "data": {"ring": "later"}}
    run = await _run(h, headers, run_body(wrong, final('{"ring": "hold"}'), agent="ring-judge"))
    assert run["output"]["data"] == {"ring": "hold"} and run["usage"]["steps"] == 2
    both = run_body({"type": "final", "text": "{}", "data": data}, agent="ring-judge")
    refused = await h.client.post("/v1/runs", headers=headers, json=both)
    assert refused.status_code == 422
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert [e["path"] for e in refused.json()["errors"]] == ["script.0.text"]


async def test_an_untyped_agent_has_no_data_and_its_text_is_not_parsed(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h, headers = await _typed(harness_factory)
    run = await _run(h, headers, run_body(final("not JSON, and fine"), agent="tech-radar"))
    assert run["termination_reason"] == "final"
    assert run["output"] == {"text": "not JSON, and fine", "citations": []}  # no `data`
    assert await _events(h, headers, run["id"], "final.rejected") == []
    # A script's `data` is the answer written as JSON, for any agent (as the field says):
    # an untyped agent's answer is that JSON text, and still has no `data`.
    body = run_body({"type": "final", "data": {"ring": "adopt"}}, agent="tech-radar")
    run = await _run(h, headers, body)
    assert run["output"] == {"text": '{"ring": "adopt"}', "citations": []}
    neither = await h.client.post(
        "/v1/runs", headers=headers, json=run_body({"type": "final"}, agent="tech-radar")
    )
    assert neither.status_code == 422
    [error] = neither.json()["errors"]
    assert error["path"] == "script.0.text" and "`data`" in error["message"]
    assert "output_schema" not in error["message"]  # not "for typed agents only"


async def test_a_run_keeps_the_output_schema_it_was_created_with(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    writer = {**JUDGE, "tools": [*JUDGE["tools"], "move_technology_ring"]}
    before = await harness_factory(config=make_config({"ring-judge": writer}))
    await seed_radar(before)
    caller, approver = await keys(before)
    kafka = await row(before, "Kafka")
    script = (tool_calls(move(kafka["id"], ring="adopt")), final('{"ring": "adopt"}'))
    body = run_body(*script, agent="ring-judge")
    parked = await before.client.post("/v1/runs", headers=caller, json=body)
    assert parked.json()["status"] == "awaiting_approval", parked.text

    # Restarted with another schema: the parked run is still checked against its own.
    verdict = {"type": "object", "required": ["verdict"], "properties": {"verdict": {}}}
    after = await harness_factory(
        config=make_config({"ring-judge": {**writer, "output_schema": verdict}})
    )
    preview_id = parked.json()["pending_approvals"][0]["preview_id"]
    await approve(after, approver, preview_id)
    assert (await commit(after, approver, preview_id, "typed-pinned")).status_code == 200
    finished = await after.driver.wait("acme", parked.json()["id"], 15)
    assert finished.termination_reason == "final", finished
    ended = (await after.client.get(f"/v1/runs/{finished.id}", headers=caller)).json()
    assert ended["output"]["data"] == {"ring": "adopt"}

    # A new run is the new version's: the same answer is rejected, and never fits.
    fresh = await _run(
        after,
        caller,
        run_body(final('{"ring": "adopt"}'), agent="ring-judge", limits={"max_steps": 2}),
    )
    assert fresh["termination_reason"] != "final", fresh
    assert fresh["output"] is None or "data" not in fresh["output"]
    rejected = await _events(after, caller, fresh["id"], "final.rejected")
    assert rejected and "verdict" in json.dumps(rejected[0])
