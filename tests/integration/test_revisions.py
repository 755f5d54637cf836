"""Revise then approve (SPEC §3.3): an approver changes a pending call's arguments with a
reason; a new preview of the revised arguments replaces the old one and needs its own
approval; what is committed is exactly what that preview showed; the model is told what
changed and why. A revision that breaks the schema or a gate is `422`, nothing changed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.support.approvals import (
    approvals_harness,
    approve,
    commit,
    events_of,
    keys,
    ledger_size,
    move,
    parked_run,
    row,
)
from tests.support.factories import final, tool_calls
from tests.support.fake_openai import FakeOpenAI, calls, text
from tests.support.harness import Harness
from tests.support.live_model import live_harness, provider

__all__ = ["provider"]  # a fixture: used by name


async def _revise(
    h: Harness, headers: dict[str, str], preview_id: str, arguments: Any, reason: str = "safer"
) -> Any:
    return await h.client.post(
        f"/v1/previews/{preview_id}/revise",
        headers=headers,
        json={"arguments": arguments, "reason": reason},
    )


async def _call(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    [call] = (await h.client.get(f"/v1/runs/{run_id}/calls", headers=headers)).json()["items"]
    return call


async def test_a_revised_call_needs_its_own_approval_and_commits_exactly_what_it_showed(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, alice = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("Moved [source:s1]"))
    old = run["pending_approvals"][0]["preview_id"]
    proposed = move(kafka["id"])[2]
    revised_args = {**proposed, "ring": "assess"}

    answer = await _revise(h, alice, old, revised_args, "adopt is too far; assess first")
    assert answer.status_code == 200, answer.text
    new = answer.json()["preview"]
    assert new["id"] != old and new["supersedes"] == old and new["status"] == "pending"
    assert new["arguments"] == revised_args and new["revised_by"] == "alice"
    assert new["revision_reason"] == "adopt is too far; assess first"
    assert new["summary"] == "Move Kafka from trial to assess"
    before = (await h.client.get(f"/v1/previews/{old}", headers=alice)).json()
    assert before["status"] == "superseded" and before["superseded_by"] == new["id"]
    assert new["content_hash"] != before["content_hash"]
    listed = (await h.client.get(f"/v1/runs/{run['id']}", headers=caller)).json()
    assert [p["preview_id"] for p in listed["pending_approvals"]] == [new["id"]]
    call = await _call(h, caller, run["id"])
    assert call["status"] == "awaiting_approval" and call["preview_id"] == new["id"]
    assert call["arguments"] == revised_args and call["proposed_arguments"] == proposed
    assert call["revision"]["by"] == "alice"

    # The old preview can no longer be decided on; a second revision keeps the model's own.
    stale = await h.client.post(
        f"/v1/previews/{old}/approve", headers=alice, json={"content_hash": before["content_hash"]}
    )
    assert stale.status_code == 409 and stale.json()["code"] == "invalid-state"
    again = await _revise(h, alice, new["id"], {**proposed, "ring": "hold"}, "hold it")
    assert again.status_code == 200, again.text
    newest = again.json()["preview"]
    assert (await _call(h, caller, run["id"]))["proposed_arguments"] == proposed

    await approve(h, alice, newest["id"])
    done = await commit(h, alice, newest["id"], "commit-revised")
    assert done.status_code == 200, done.text
    assert done.json()["run"]["termination_reason"] == "final"
    moved = await row(h, "Kafka")
    assert moved["ring"] == "hold" and await ledger_size(h) == 1  # the revision, once

    events = await events_of(h, caller, run["id"])
    [first, second] = [e["data"] for e in events if e["type"] == "call.revised"]
    assert first["proposed_arguments"] == proposed and first["arguments"] == revised_args
    assert first["by"] == "alice" and first["reason"] == "adopt is too far; assess first"
    assert (first["preview_id"], first["new_preview_id"]) == (old, new["id"])
    assert second["proposed_arguments"] == proposed
    created = [e["data"]["preview_id"] for e in events if e["type"] == "preview.created"]
    assert created == [old, new["id"], newest["id"]]


async def test_a_bad_revision_is_refused_and_changes_nothing(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, alice = await keys(h)
    admin = await h.key(subject="root", roles="admin")
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("ok"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    proposed = move(kafka["id"])[2]
    pending = (await h.client.get(f"/v1/previews/{preview_id}", headers=alice)).json()

    refused = {
        "a ring the schema does not know": {**proposed, "ring": "nowhere"},
        "an unknown argument": {**proposed, "extra": 1},
        "the same arguments": proposed,
        "a technology the tool cannot preview": {**proposed, "technology_id": "tech_missing"},
    }
    for why, arguments in refused.items():
        answer = await _revise(h, alice, preview_id, arguments)
        assert answer.status_code == 422, (why, answer.text)
        problem = answer.json()
        assert problem["code"] == "validation-error", why
        assert problem["errors"][0]["path"] == "arguments", why
    missing = await h.client.post(
        f"/v1/previews/{preview_id}/revise", headers=alice, json={"arguments": proposed}
    )
    assert missing.status_code == 422  # no reason

    # A switch thrown since the proposal: the revision is refused too.
    off = await h.client.post("/v1/tools/move_technology_ring/disable", headers=admin)
    assert off.status_code == 200, off.text
    switched = await _revise(h, alice, preview_id, {**proposed, "ring": "hold"})
    assert switched.status_code == 422 and switched.json()["errors"][0]["path"] == "tool"
    on = await h.client.post("/v1/tools/move_technology_ring/enable", headers=admin)
    assert on.status_code == 200

    unchanged = (await h.client.get(f"/v1/previews/{preview_id}", headers=alice)).json()
    assert unchanged == pending
    call = await _call(h, caller, run["id"])
    assert call["arguments"] == proposed and call["proposed_arguments"] is None
    kinds = [e["type"] for e in await events_of(h, caller, run["id"])]
    assert "call.revised" not in kinds and kinds.count("preview.created") == 1


async def test_who_may_revise_and_when(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    creator = await h.key(subject="svc-shop", roles="caller,approver")
    alice = await h.key(subject="alice", roles="approver")
    kafka = await row(h, "Kafka")
    run = await parked_run(h, creator, tool_calls(move(kafka["id"])), final("ok"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    revised = {**move(kafka["id"])[2], "ring": "hold"}

    own = await _revise(h, creator, preview_id, revised)
    assert own.status_code == 403 and own.json()["code"] == "forbidden"
    caller_only = await h.key(subject="bob", roles="caller")
    assert (await _revise(h, caller_only, preview_id, revised)).status_code == 403
    stranger = await h.key(tenant="globex", subject="eve", roles="approver")
    assert (await _revise(h, stranger, preview_id, revised)).status_code == 404

    await approve(h, alice, preview_id)
    late = await _revise(h, alice, preview_id, revised)
    assert late.status_code == 409 and late.json()["code"] == "invalid-state"


async def test_a_revision_racing_an_approval_leaves_one_of_them(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """Both at once: the revision's write is conditional on the preview's version, so
    either the approval stands (and the revision is `409`) or the revision does (and the
    approval of the old preview is `409`) — never both."""
    h = await approvals_harness(harness_factory)
    caller, alice = await keys(h)
    bob = await h.key(subject="bob", roles="approver")
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("ok"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    pending = (await h.client.get(f"/v1/previews/{preview_id}", headers=alice)).json()
    approval, revision = await asyncio.gather(
        h.client.post(
            f"/v1/previews/{preview_id}/approve",
            headers=alice,
            json={"content_hash": pending["content_hash"]},
        ),
        _revise(h, bob, preview_id, {**move(kafka["id"])[2], "ring": "hold"}),
    )
    assert sorted((approval.status_code, revision.status_code)) == [200, 409]
    settled = (await h.client.get(f"/v1/previews/{preview_id}", headers=alice)).json()
    call = await _call(h, caller, run["id"])
    if approval.status_code == 200:
        assert settled["status"] == "approved" and call["proposed_arguments"] is None
    else:
        assert settled["status"] == "superseded" and call["arguments"]["ring"] == "hold"
        assert call["preview_id"] == revision.json()["preview"]["id"]


async def test_the_model_is_told_what_the_approver_changed_and_why(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    radar = ["search_technologies", "get_technology", "move_technology_ring"]
    h = await live_harness(harness_factory, provider, {"tools": radar})
    caller, alice = await keys(h)
    kafka = await row(h, "Kafka")
    proposed = move(kafka["id"])[2]
    provider.answer(
        calls(("m1", "move_technology_ring", json.dumps(proposed))),
        text("Kafka moved to hold [source:s1]"),
    )
    body = {"agent": "live", "input": "Move Kafka to adopt.", "wait_s": 10}
    answer = await h.client.post("/v1/runs", headers=caller, json=body)
    assert answer.status_code == 201 and answer.json()["status"] == "awaiting_approval"
    preview_id = answer.json()["pending_approvals"][0]["preview_id"]
    revised = await _revise(h, alice, preview_id, {**proposed, "ring": "hold"}, "freeze it")
    assert revised.status_code == 200, revised.text
    new_id = revised.json()["preview"]["id"]
    await approve(h, alice, new_id)
    assert (await commit(h, alice, new_id, "commit-1")).status_code == 200
    run = await h.driver.wait("acme", answer.json()["id"], 15)
    assert run.termination_reason == "final", run

    messages = provider.requests[1]["messages"]
    [asked] = messages[-2]["tool_calls"]  # the model's own proposal, as it made it
    assert json.loads(asked["function"]["arguments"]) == proposed
    observed = json.loads(messages[-1]["content"])
    assert observed["revised"]["by"] == "alice" and observed["revised"]["reason"] == "freeze it"
    assert observed["revised"]["arguments"] == {**proposed, "ring": "hold"}
    assert "approver changed" in observed["revised"]["note"]
    assert observed["output"]["ring"] == "hold"
