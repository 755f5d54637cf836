"""An approval or a rejection is bound to its Idempotency-Key in its own transaction: a
retry whose first request was committed but never answered (its process died between the
decision and the answer) gets the preview as it stands, not `409 invalid-state` for
deciding it twice. A decision without a key, or under another key, is still refused."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from tests.support.approvals import approvals_harness, keys, move, parked_run, row
from tests.support.assertions import assert_problem
from tests.support.factories import final, tool_calls
from tests.support.harness import Harness

#: A claim token naming a process that is not registered (as one taken over is not).
DEAD_HOLDER = "p0badc0de" + "0" * 23


async def answer_lost_with_its_process(h: Harness, key: str) -> None:
    """The key's record as the dead holder left it: the decision committed, no answer."""
    async with h.runtime.sessions.begin() as session:
        await session.execute(
            text(
                "UPDATE idempotency_key SET state = 'in_flight', response_status = NULL, "
                "response_headers = NULL, response_body = NULL, claim_token = :token, "
                "locked_until = now() + interval '1 minute' WHERE key = :key"
            ),
            {"token": DEAD_HOLDER, "key": key},
        )


async def parked(h: Harness) -> tuple[dict[str, str], dict[str, Any]]:
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("Moved [source:s1]"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    return approver, preview


@pytest.mark.parametrize("decision", ["approve", "reject"])
async def test_a_decision_retried_after_its_answer_was_lost_is_answered_as_it_stands(  # type: ignore[no-untyped-def]
    harness_factory, decision: str
) -> None:
    h = await approvals_harness(harness_factory)
    approver, preview = await parked(h)
    body = (
        {"content_hash": preview["content_hash"]}
        if decision == "approve"
        else {"reason": "not now"}
    )
    url = f"/v1/previews/{preview['id']}/{decision}"
    keyed = {**approver, "Idempotency-Key": f"{decision}-once"}
    first = await h.client.post(url, headers=keyed, json=body)
    assert first.status_code == 200, first.text
    async with h.runtime.sessions() as session:
        bound = await session.execute(
            text("SELECT resource_id FROM idempotency_key WHERE key = :key"),
            {"key": f"{decision}-once"},
        )
        assert bound.scalar_one() == preview["id"]  # with the decision, in its transaction

    await answer_lost_with_its_process(h, f"{decision}-once")
    retried = await h.client.post(url, headers=keyed, json=body)
    assert retried.status_code == 200, retried.text
    assert retried.json()["status"] == first.json()["status"]
    assert retried.json()["decided_by"] == first.json()["decided_by"]
    events = await h.client.get(f"/v1/runs/{preview['run_id']}/events?limit=200", headers=approver)
    decided_type = {"approve": "preview.approved", "reject": "preview.rejected"}[decision]
    decided = [e for e in events.json()["items"] if e["type"] == decided_type]
    assert len(decided) == 1  # decided once

    # Without the key (or under another), deciding again is refused, as before.
    again = await h.client.post(url, headers=approver, json=body)
    assert_problem(again, 409, "invalid-state", url)
