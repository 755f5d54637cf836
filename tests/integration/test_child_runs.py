"""Child runs (SPEC §3.5, issue 18 item 6): a child's deadline and budgets are clamped to
what its parent has left and reserved on the parent, so that children created
concurrently never hold more than the parent had; a child's usage counts into its parent's
and its root's; cancelling a run cancels its descendants; a parent is found only in the
caller's tenant, and a finished one takes no children.

Runs are held unfinished by parking them on a preview (the writer agent's
`move_technology_ring`), so what happens around them is deterministic."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import select

from app.db.tables import run as run_table
from tests.support.approvals import approvals_harness, keys, move, row
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import Harness

PARENT_LIMITS = {"max_tokens": 1000, "max_cost_usd": 1, "max_tool_calls": 20, "deadline_s": 600}


async def create(h: Harness, headers: dict[str, str], *script: Any, **fields: Any) -> Any:
    return await h.client.post("/v1/runs", headers=headers, json=run_body(*script, **fields))


async def parked(h: Harness, headers: dict[str, str], *script: Any, **fields: Any) -> Any:
    answer = await create(h, headers, *script, **fields)
    assert answer.status_code == 201, answer.text
    run = answer.json()
    assert run["status"] == "awaiting_approval", run
    return run


async def reject(h: Harness, approver: dict[str, str], run: dict[str, Any]) -> None:
    preview_id = run["pending_approvals"][0]["preview_id"]
    answer = await h.client.post(
        f"/v1/previews/{preview_id}/reject", headers=approver, json={"reason": "not now"}
    )
    assert answer.status_code == 200, answer.text


async def finished(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    for _ in range(100):
        run = (await h.client.get(f"/v1/runs/{run_id}", headers=headers)).json()
        if run["status"] == "finished":
            return run
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish: {run}")


async def get(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    return (await h.client.get(f"/v1/runs/{run_id}", headers=headers)).json()


async def test_concurrent_children_never_hold_more_than_the_parent_has_left(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, _ = await keys(h)
    kafka = (await row(h, "Kafka"))["id"]
    parent = await parked(h, caller, tool_calls(move(kafka), usage=(100, 10)), limits=PARENT_LIMITS)
    left = 1000 - 110
    asked = {"max_tokens": 300, "max_cost_usd": 0.1, "max_tool_calls": 2}
    answers = await asyncio.gather(
        *(
            create(
                h,
                caller,
                tool_calls(move(kafka)),
                parent_run_id=parent["id"],
                limits=asked,
                wait_s=0,
            )
            for _ in range(12)
        )
    )
    made = [a.json() for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    grants = sorted(c["limits"]["max_tokens"] for c in made)
    # Three fit (300, 300 and the 290 left, clamped); the others find nothing left.
    assert grants == [290, 300, 300]
    assert sum(grants) <= left
    for answer in refused:
        assert answer.status_code == 409, answer.text
        problem = answer.json()
        assert problem["code"] == "invalid-state"
        assert "no max_tokens left" in problem["detail"]
    for child in made:
        assert child["parent_run_id"] == parent["id"]
        assert child["root_run_id"] == parent["id"]
        assert child["deadline_at"] <= parent["deadline_at"]
    seen = await get(h, caller, parent["id"])
    assert seen["reserved"] == {"tokens": 890, "cost_usd": 0.3, "tool_calls": 6}
    # The one the 290 went to says its limit was clamped from what it asked.
    clamped = next(c for c in made if c["limits"]["max_tokens"] == 290)
    events = (await h.client.get(f"/v1/runs/{clamped['id']}/events", headers=caller)).json()
    created = events["items"][0]
    assert created["data"]["clamped"]["max_tokens"] == {"asked": 300, "granted": 290}
    listed = await h.client.get(f"/v1/runs?parent_run_id={parent['id']}", headers=caller)
    assert sorted(r["id"] for r in listed.json()["items"]) == sorted(c["id"] for c in made)


async def test_usage_rolls_up_to_the_parent_and_the_root_over_three_levels(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = (await row(h, "Kafka"))["id"]
    root = await parked(
        h,
        caller,
        tool_calls(move(kafka), usage=(100, 10)),
        final("root done", usage=(7, 3)),
        limits=PARENT_LIMITS,
    )
    child = await parked(
        h,
        caller,
        tool_calls(move(kafka), usage=(40, 4)),
        final("child done", usage=(6, 2)),
        parent_run_id=root["id"],
        limits={"max_tokens": 500, "max_tool_calls": 5, "max_cost_usd": 0.5},
    )
    assert child["root_run_id"] == root["id"]
    grandchild = await create(
        h,
        caller,
        tool_calls(("s1", "search_technologies", {"query": "kafka"}), usage=(20, 2)),
        final("grandchild done [source:s1]", usage=(5, 1)),
        parent_run_id=child["id"],
        limits={"max_tokens": 100, "max_tool_calls": 2},
    )
    assert grandchild.status_code == 201, grandchild.text
    grandchild = await finished(h, caller, grandchild.json()["id"])
    assert grandchild["root_run_id"] == root["id"]
    assert grandchild["termination_reason"] == "final"
    assert grandchild["usage"]["input_tokens"] == 25 and grandchild["usage"]["tool_calls"] == 1

    # The grandchild's spending is in its parent's and its root's usage at once; its
    # grant is back with its parent.
    mid_child, mid_root = await get(h, caller, child["id"]), await get(h, caller, root["id"])
    assert mid_child["usage"]["input_tokens"] == 40 + 25
    assert mid_child["usage"]["tool_calls"] == 1
    assert mid_child["reserved"]["tokens"] == 0
    assert mid_root["usage"]["input_tokens"] == 100 + 25
    assert mid_root["reserved"]["tokens"] == 500  # the child still holds its grant

    await reject(h, approver, child)
    child = await finished(h, caller, child["id"])
    assert child["usage"]["input_tokens"] == 40 + 6 + 25
    assert child["usage"]["output_tokens"] == 4 + 2 + 3
    assert child["usage"]["steps"] == 2  # steps are a run's own turns

    await reject(h, approver, root)
    root = await finished(h, caller, root["id"])
    assert root["usage"]["input_tokens"] == 107 + 46 + 25
    assert root["usage"]["output_tokens"] == 13 + 6 + 3
    assert root["usage"]["tool_calls"] == 1
    assert root["reserved"] == {"tokens": 0, "cost_usd": 0.0, "tool_calls": 0}
    async with h.runtime.sessions() as session:
        own = await session.execute(
            select(run_table.c.input_tokens).where(run_table.c.id == root["id"])
        )
        assert own.scalar_one() == 107  # the run's own columns stay its own


async def test_cancelling_a_run_cancels_its_children_and_grandchildren(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = (await row(h, "Kafka"))["id"]
    root = await parked(h, caller, tool_calls(move(kafka)), final("x"), limits=PARENT_LIMITS)
    small = {"max_tokens": 100, "max_tool_calls": 2, "max_cost_usd": 0.1}
    child = await parked(h, caller, tool_calls(move(kafka)), parent_run_id=root["id"], limits=small)
    sibling = await parked(
        h, caller, tool_calls(move(kafka)), parent_run_id=root["id"], limits=small
    )
    grandchild = await parked(
        h,
        caller,
        tool_calls(move(kafka)),
        parent_run_id=child["id"],
        limits={"max_tokens": 50, "max_tool_calls": 1, "max_cost_usd": 0.01},
    )
    cancelled = await h.client.post(f"/v1/runs/{root['id']}/cancel", headers=caller)
    assert cancelled.status_code == 200, cancelled.text
    for run in (root, child, sibling, grandchild):
        done = await finished(h, caller, run["id"])
        assert done["termination_reason"] == "cancelled", done
    events = (await h.client.get(f"/v1/runs/{grandchild['id']}/events", headers=caller)).json()
    asked = [e for e in events["items"] if e["type"] == "run.cancel_requested"]
    assert asked[0]["data"] == {"by": "svc-shop", "from_run_id": root["id"]}
    # Every grant went back as its child finished.
    for run in (root, child):
        assert (await get(h, caller, run["id"]))["reserved"]["tokens"] == 0
    # A finished run takes no children.
    late = await create(h, caller, final("late"), parent_run_id=root["id"])
    assert late.status_code == 409 and late.json()["code"] == "invalid-state"


async def test_a_child_of_another_tenants_run_is_not_found(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, _ = await keys(h)
    stranger = await h.key(tenant="globex", subject="svc-other", roles="caller")
    kafka = (await row(h, "Kafka"))["id"]
    parent = await parked(h, caller, tool_calls(move(kafka)), limits=PARENT_LIMITS)
    answer = await create(h, stranger, final("x"), parent_run_id=parent["id"])
    assert answer.status_code == 404, answer.text
    assert answer.json()["code"] == "not-found"
    missing = await create(h, caller, final("x"), parent_run_id="run_nope")
    assert missing.status_code == 404
    listed = await h.client.get(f"/v1/runs?parent_run_id={parent['id']}", headers=stranger)
    assert listed.json()["items"] == []
    assert (await get(h, caller, parent["id"]))["reserved"]["tokens"] == 0


async def test_a_run_tree_is_at_most_sixteen_levels_deep(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """Deeper trees would outrun the bounded walks that roll usage up and cancel."""
    h = await approvals_harness(harness_factory)
    caller, _ = await keys(h)
    kafka = await row(h, "Kafka")
    script = tool_calls(move(kafka["id"])), final("moved")
    run = await parked(h, caller, *script, limits=PARENT_LIMITS)
    for _ in range(16):
        run = await parked(h, caller, *script, parent_run_id=run["id"])
    refused = await create(h, caller, *script, parent_run_id=run["id"])
    assert refused.status_code == 409, refused.text
    assert "16 levels" in refused.json()["detail"]


async def test_calls_a_child_reserved_while_the_parents_turn_was_proposed_are_not_run(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """The turn's fit was judged before the child took the parent's last tool calls: each
    call's start checks the room again, so parent and child never hold more than the
    parent had."""
    h = await approvals_harness(harness_factory)
    caller, _ = await keys(h)
    kafka = await row(h, "Kafka")
    reads = [(f"r{i}", "search_technologies", {"query": "db"}) for i in (1, 2)]
    slow_turn = tool_calls(*reads, delay_ms=1500)
    limits = {**PARENT_LIMITS, "max_tool_calls": 2}
    parent = (await create(h, caller, slow_turn, final("done"), limits=limits, wait_s=0)).json()
    await asyncio.sleep(0.3)  # the parent's model call is in flight
    child = await parked(
        h, caller, tool_calls(move(kafka["id"])), final("moved"), parent_run_id=parent["id"]
    )
    assert child["limits"]["max_tool_calls"] == 2  # all the parent had
    ended = await finished(h, caller, parent["id"])
    assert ended["termination_reason"] == "budget", ended
    calls = (await h.client.get(f"/v1/runs/{parent['id']}/calls", headers=caller)).json()
    assert [c["status"] for c in calls["items"]] == ["cancelled", "cancelled"]
    assert ended["usage"]["tool_calls"] == 0
