"""A two-person rule in the console, in a real browser (Debian's Chromium, every other host
blocked): the first approver sees "1 of 2 approvals" and may not approve again, the queue
says how far the quorum is, and the second approver's approval reaches the first one's
page live, which may then commit."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import expect
from sqlalchemy.ext.asyncio import AsyncEngine

from app.config.settings import Settings
from tests.support.approvals import ticket_tool
from tests.support.backend import FakeBackend
from tests.support.backend import serving as backend_serving
from tests.support.browser import browsing, signed_in
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config, serving

WAIT_MS = 20_000


@pytest.fixture
async def served(
    db: AsyncEngine, settings: Settings
) -> AsyncIterator[tuple[str, Harness, FakeBackend]]:
    async with backend_serving() as backend:
        agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "ticket"]}
        tool = {**ticket_tool(backend), "approvals_required": 2}
        config = make_config({"tech-radar": agent}, tools={"ticket": tool})
        async with serving(settings, config) as (url, h):
            yield url, h, backend


async def test_the_console_counts_a_quorum_and_commits_once_it_is_reached(
    served: tuple[str, Harness, FakeBackend],
) -> None:
    url, h, backend = served
    caller = await h.key(subject="svc-shop", roles="caller")
    alice = await h.key(subject="alice", roles="approver")
    bob = await h.key(subject="bob", roles="approver")
    body = run_body(tool_calls(("t1", "ticket", {"q": "refund"})), final("Opened [source:s1]"))
    answer = await h.client.post(
        "/v1/runs", headers={**caller, "Idempotency-Key": secrets.token_hex(8)}, json=body
    )
    assert answer.status_code == 201 and answer.json()["status"] == "awaiting_approval"
    preview_id = answer.json()["pending_approvals"][0]["preview_id"]
    path = f"/console/previews/{preview_id}"

    async with browsing(url) as (context, blocked):
        errors: list[str] = []
        first = await context.new_page()
        first.on("pageerror", lambda error: errors.append(str(error)))
        await signed_in(first, url, alice, path)
        approvals = first.locator("#preview-approvals")
        await expect(approvals).to_have_text("0 of 2 approvals", timeout=WAIT_MS)
        await first.get_by_role("button", name="Approve").click()
        said = first.get_by_role("status").filter(has_text="Approved by alice")
        await expect(said).to_contain_text("1 of 2 approvals; it needs one more approver")
        await expect(approvals).to_contain_text("1 of 2 approvals: alice at")
        await expect(first.locator("#preview-status")).to_have_text("pending")
        await expect(first.get_by_role("button", name="Approve")).to_be_disabled()
        await expect(first.get_by_role("button", name="Commit")).to_be_disabled()

        second = await context.new_page()
        second.on("pageerror", lambda error: errors.append(str(error)))
        await signed_in(second, url, bob, "/console")
        queue = second.get_by_role("table", name="Approval queue")
        await expect(queue.locator(f"tr[data-preview='{preview_id}']")).to_contain_text(
            "(1 of 2 approvals)", timeout=WAIT_MS
        )
        await queue.get_by_role("link", name='ticket with {"q": "refund"}').click()
        await second.get_by_role("button", name="Approve").click()
        await expect(second.locator("#preview-status")).to_have_text("approved", timeout=WAIT_MS)

        # The first approver's page heard of it without a reload, and may commit now.
        await expect(first.locator("#preview-status")).to_have_text("approved", timeout=WAIT_MS)
        await expect(approvals).to_contain_text("2 of 2 approvals: alice at")
        await expect(approvals).to_contain_text(", bob at")
        await first.get_by_role("button", name="Commit").click()
        await expect(first.locator("#preview-status")).to_have_text("committed", timeout=WAIT_MS)
        assert errors == [] and blocked == []
    [sent] = backend.sent("ticket")
    assert sent.body["approved_by"]["subject"] == "bob"
