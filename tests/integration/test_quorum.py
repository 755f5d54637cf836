"""Two-person rules (SPEC §3.3 quorum): a tool with `approvals_required: 2` waits for two
distinct approvers, neither the run's creator; each approval is on the preview, in the
run's events and in its webhooks; a second approval by the same subject, or a commit
before the quorum, is `409 invalid-state`; one rejection rejects; approvers racing each
other are all counted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.config.files import ConfigError, parse_config
from app.domain.lifecycle.events import EventType
from tests.support.approvals import events_of, parked_run, ticket_tool
from tests.support.backend import FakeBackend, serving
from tests.support.context_budget import finished
from tests.support.factories import final, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config
from tests.support.webhook_receiver import LOOPBACK, receiving, register

TICKET = tool_calls(("t1", "ticket", {"q": "refund"}))


async def _harness(harness_factory, backend: FakeBackend, **approvals: Any) -> Harness:  # type: ignore[no-untyped-def]
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "ticket"]}
    tool = {**ticket_tool(backend), "approvals_required": 2}
    config = make_config(
        {"tech-radar": agent},
        tools={"ticket": tool},
        approvals=approvals or None,
        webhooks=LOOPBACK,
    )
    return await harness_factory(config=config)


async def _approve(h: Harness, headers: dict[str, str], preview: dict[str, Any]) -> Any:
    return await h.client.post(
        f"/v1/previews/{preview['id']}/approve",
        headers=headers,
        json={"content_hash": preview["content_hash"]},
    )


async def _commit(h: Harness, headers: dict[str, str], preview_id: str, key: str) -> Any:
    return await h.client.post(
        f"/v1/previews/{preview_id}/commit",
        headers={**headers, "Idempotency-Key": key},
        json={"wait_s": 5},
    )


async def test_two_distinct_approvers_none_the_creator_then_the_call_runs_once(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        # The creator may approve its own calls here, but never counts toward a quorum.
        h = await _harness(harness_factory, backend, allow_self_approval=True)
        caller = await h.key(subject="svc-shop", roles="caller,approver")
        alice = await h.key(subject="alice", roles="approver")
        bob = await h.key(subject="bob", roles="approver")
        run = await parked_run(h, caller, TICKET, final("Opened [source:s1]"))
        preview_id = run["pending_approvals"][0]["preview_id"]
        url = f"/v1/previews/{preview_id}"
        preview = (await h.client.get(url, headers=alice)).json()
        assert preview["approvals_required"] == 2 and preview["approvals"] == []

        own = await _approve(h, caller, preview)
        assert own.status_code == 403 and own.json()["code"] == "forbidden"

        first = await _approve(h, alice, preview)
        assert first.status_code == 200, first.text
        one = first.json()
        assert one["status"] == "pending" and one["decided_by"] is None
        assert [a["by"] for a in one["approvals"]] == ["alice"]

        twice = await _approve(h, alice, preview)
        assert twice.status_code == 409 and twice.json()["code"] == "invalid-state"
        early = await _commit(h, alice, preview_id, "early")
        assert early.status_code == 409 and early.json()["code"] == "invalid-state"
        assert "1 of 2" in early.json()["detail"]
        assert backend.sent("ticket") == []  # nothing ran before the quorum

        second = await _approve(h, bob, preview)
        assert second.status_code == 200, second.text
        both = second.json()
        assert both["status"] == "approved" and both["decided_by"] == "bob"
        assert [a["by"] for a in both["approvals"]] == ["alice", "bob"]
        assert (await h.client.get(url, headers=alice)).json()["approvals"] == both["approvals"]
        late = await _approve(h, alice, preview)
        assert late.status_code == 409 and late.json()["code"] == "invalid-state"

        done = await _commit(h, alice, preview_id, "c-1")
        assert done.status_code == 200, done.text
        assert done.json()["run"]["status"] == "finished"
        [sent] = backend.sent("ticket")
        assert sent.body["approved_by"]["subject"] == "bob"

        events = await events_of(h, caller, run["id"])
        approvals = [
            (e["type"], e["data"]["by"], e["data"]["approvals"])
            for e in events
            if e["type"] in (EventType.PREVIEW_APPROVAL_ADDED, EventType.PREVIEW_APPROVED)
        ]
        assert approvals == [
            ("preview.approval_added", "alice", 1),
            ("preview.approved", "bob", 2),
        ]
        assert [e["data"]["by"] for e in events if e["type"] == "call.approved"] == ["bob"]


async def test_one_rejection_rejects_whatever_approvals_the_quorum_has(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await _harness(harness_factory, backend)
        caller = await h.key(subject="svc-shop", roles="caller")
        alice = await h.key(subject="alice", roles="approver")
        bob = await h.key(subject="bob", roles="approver")
        run = await parked_run(h, caller, TICKET, final("Not opened"))
        preview_id = run["pending_approvals"][0]["preview_id"]
        preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=alice)).json()
        assert (await _approve(h, alice, preview)).status_code == 200
        rejected = await h.client.post(
            f"/v1/previews/{preview_id}/reject", headers=bob, json={"reason": "wrong order"}
        )
        assert rejected.status_code == 200, rejected.text
        assert rejected.json()["status"] == "rejected" and rejected.json()["decided_by"] == "bob"
        after = await _approve(h, bob, preview)
        assert after.status_code == 409 and after.json()["code"] == "invalid-state"
        assert (await finished(h, run))["termination_reason"] == "final"
        [call] = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
        assert call["status"] == "rejected" and call["error"]["code"] == "rejected_by_approver"
        assert backend.sent("ticket") == []


@pytest.mark.parametrize("approvers", [2, 3])
async def test_approvers_racing_each_other_are_each_counted_once(
    harness_factory, approvers: int
) -> None:  # type: ignore[no-untyped-def]
    """All at once: the quorum's count is a conditional write on the preview's version,
    so no approval overwrites another; with three, the third finds it approved."""
    async with serving() as backend:
        h = await _harness(harness_factory, backend)
        caller = await h.key(subject="svc-shop", roles="caller")
        keys = [await h.key(subject=f"approver-{i}", roles="approver") for i in range(approvers)]
        run = await parked_run(h, caller, TICKET, final("ok"))
        preview_id = run["pending_approvals"][0]["preview_id"]
        preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=keys[0])).json()
        answers = await asyncio.gather(*(_approve(h, k, preview) for k in keys))
        codes = sorted(a.status_code for a in answers)
        assert codes == [200, 200] + [409] * (approvers - 2), [a.text for a in answers]
        final_preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=keys[0])).json()
        assert final_preview["status"] == "approved"
        won = {a.json()["approvals"][-1]["by"] for a in answers if a.status_code == 200}
        assert {a["by"] for a in final_preview["approvals"]} == won
        assert len(final_preview["approvals"]) == 2


async def test_each_approval_is_a_webhook(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend, receiving() as receiver:
        h = await _harness(harness_factory, backend)
        admin = await h.key(subject="ops", roles="admin")
        caller = await h.key(subject="svc-shop", roles="caller")
        alice = await h.key(subject="alice", roles="approver")
        bob = await h.key(subject="bob", roles="approver")
        kinds = [EventType.PREVIEW_APPROVAL_ADDED, EventType.PREVIEW_APPROVED]
        hook = await register(h.client, admin, receiver.hook(), kinds)
        run = await parked_run(h, caller, TICKET, final("ok"))
        preview_id = run["pending_approvals"][0]["preview_id"]
        preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=alice)).json()
        for approver in (alice, bob):
            assert (await _approve(h, approver, preview)).status_code == 200
        got = await receiver.wait_for(2)
    delivered = [r.verified(hook["secret"]) for r in got]
    assert [(d["type"], d["data"]["by"]) for d in delivered] == [
        ("preview.approval_added", "alice"),
        ("preview.approved", "bob"),
    ]
    assert all(d["data"]["preview_id"] == preview_id for d in delivered)


def test_a_quorum_needs_a_tool_that_requires_approval() -> None:
    tool = {
        "kind": "http",
        "description": "Reads.",
        "input_schema": {"type": "object", "additionalProperties": False},
        "url": "https://tools.example/read",
        "approvals_required": 2,
    }
    with pytest.raises(ConfigError) as raised:
        parse_config(
            {"models": {"s": {"provider": "scripted"}}, "tools": {"read": tool}}, builtin_tools={}
        )
    assert "tools.read.approvals_required" in str(raised.value)
    with pytest.raises(ConfigError) as zero:
        parse_config(
            {
                "models": {"s": {"provider": "scripted"}},
                "tools": {"read": {**tool, "approvals_required": 0, "risk": "high"}},
            },
            builtin_tools={},
        )
    assert "approvals_required" in str(zero.value)
