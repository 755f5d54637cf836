"""The audit page in a real browser (Debian's Chromium, every other host blocked): an admin
finds it in the navigation and reads who did what, a decision's entry linking to its
preview; an approver is offered no such page."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import expect
from sqlalchemy.ext.asyncio import AsyncEngine

from app.config.settings import Settings
from tests.support.approvals import approve, move, row, writer_console
from tests.support.browser import browsing, signed_in
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import Harness

WAIT_MS = 20_000


@pytest.fixture
async def served(db: AsyncEngine, settings: Settings) -> AsyncIterator[tuple[str, Harness]]:
    async with writer_console(settings) as served:
        yield served


async def test_an_admin_reads_the_audit_chain_and_an_approver_is_not_offered_it(
    served: tuple[str, Harness],
) -> None:
    url, h = served
    caller = await h.key(subject="svc-shop", roles="caller")
    alice = await h.key(subject="alice", roles="approver")
    admin = await h.key(subject="root", roles="admin")
    kafka = await row(h, "Kafka")
    body = run_body(tool_calls(move(kafka["id"])), final("ok"))
    answer = await h.client.post(
        "/v1/runs", headers={**caller, "Idempotency-Key": "a-1"}, json=body
    )
    preview_id = answer.json()["pending_approvals"][0]["preview_id"]
    await approve(h, alice, preview_id)
    off = await h.client.post("/v1/tools/move_technology_ring/disable", headers=admin)
    assert off.status_code == 200

    async with browsing(url) as (context, blocked):
        errors: list[str] = []
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        await signed_in(page, url, admin)
        await page.get_by_role("link", name="Audit").click()
        await expect(page.get_by_role("heading", name="Audit")).to_be_visible(timeout=WAIT_MS)
        table = page.get_by_role("table", name="Audit")
        approval = table.locator("tr[data-action='approve']")
        await expect(approval).to_contain_text("alice", timeout=WAIT_MS)
        await expect(table.locator("tr[data-action='disable_tool']")).to_contain_text("root")
        await approval.get_by_text("Details").click()
        await expect(approval.locator("pre")).to_contain_text('"content_hash"')
        await approval.get_by_role("link", name=preview_id).click()
        await expect(page).to_have_url(f"{url}/console/previews/{preview_id}", timeout=WAIT_MS)

        other = await context.new_page()
        other.on("pageerror", lambda error: errors.append(str(error)))
        await signed_in(other, url, alice)
        await expect(other.get_by_role("link", name="Audit")).to_be_hidden()
        await other.goto(f"{url}/console/audit")
        await expect(other.get_by_text("Only an admin key")).to_be_visible(timeout=WAIT_MS)
        assert errors == [] and blocked == []
