"""Revise then approve in the console, in a real browser (Debian's Chromium, every other host
blocked): the approver changes an argument in a form made from the tool's input schema,
gives a reason, lands on the new preview, approves and commits it; what changes is what the
new preview showed. A revision the service refuses is explained, and changes nothing."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import expect
from sqlalchemy.ext.asyncio import AsyncEngine

from app.config.settings import Settings
from tests.support.approvals import ledger_size, move, row, writer_console
from tests.support.browser import browsing, signed_in
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import Harness

WAIT_MS = 20_000


@pytest.fixture
async def served(db: AsyncEngine, settings: Settings) -> AsyncIterator[tuple[str, Harness]]:
    async with writer_console(settings) as served:
        yield served


async def test_an_approver_revises_a_call_in_a_form_then_approves_and_commits_it(
    served: tuple[str, Harness],
) -> None:
    url, h = served
    caller = await h.key(subject="svc-shop", roles="caller")
    alice = await h.key(subject="alice", roles="approver")
    kafka = await row(h, "Kafka")
    proposal = tool_calls(move(kafka["id"]))
    proposal["text"] = "Kafka runs in three of our services; it belongs in adopt."
    body = run_body(proposal, final("Kafka moved [source:s1]"))
    answer = await h.client.post(
        "/v1/runs", headers={**caller, "Idempotency-Key": secrets.token_hex(8)}, json=body
    )
    assert answer.status_code == 201 and answer.json()["status"] == "awaiting_approval"
    old = answer.json()["pending_approvals"][0]["preview_id"]

    async with browsing(url) as (context, blocked):
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await signed_in(page, url, alice, f"/console/previews/{old}")
        await expect(page.get_by_role("heading", name="Or revise the arguments")).to_be_visible(
            timeout=WAIT_MS
        )
        # Why the model asked, beside the call, and in the timeline's sentence.
        await expect(page.locator("#model-said")).to_have_text(proposal["text"])
        timeline = page.get_by_role("list", name="Timeline")
        await expect(timeline.locator("li[data-type='turn.completed']").first).to_contain_text(
            "the model proposed calls, saying: “Kafka runs in three"
        )
        ring = page.get_by_label("ring", exact=True)
        await expect(ring).to_have_value("0")  # adopt, as the model proposed
        await ring.select_option(label="hold")

        # Refused here first: no reason.
        await page.get_by_role("button", name="Revise").click()
        await expect(page.get_by_role("alert")).to_contain_text("A reason is required")

        # Refused by the service: a technology the tool cannot preview; nothing changes.
        technology = page.get_by_label("technology_id", exact=True)
        await technology.fill("tech_missing")
        await page.get_by_label("Why").fill("hold it until the audit")
        await page.get_by_role("button", name="Revise").click()
        await expect(page.get_by_role("alert")).to_contain_text(
            "could not preview", timeout=WAIT_MS
        )
        await expect(page.locator("#preview-status")).to_have_text("pending")
        assert page.url.endswith(f"/console/previews/{old}")

        await technology.fill(kafka["id"])
        await page.get_by_role("button", name="Revise").click()
        await expect(page).not_to_have_url(f"{url}/console/previews/{old}", timeout=WAIT_MS)
        new = page.url.rsplit("/", 1)[1]
        await expect(page.locator("#preview-revision")).to_have_text(
            "alice: hold it until the audit", timeout=WAIT_MS
        )
        await expect(page.locator("p.summary")).to_have_text("Move Kafka from trial to hold")
        await page.get_by_role("button", name="Approve").click()
        await expect(page.locator("#preview-status")).to_have_text("approved", timeout=WAIT_MS)
        await page.get_by_role("button", name="Commit").click()
        await expect(page.locator("#preview-status")).to_have_text("committed", timeout=WAIT_MS)
        timeline = page.get_by_role("list", name="Timeline")
        await expect(timeline.locator("li[data-type='call.revised']")).to_contain_text(
            "had its arguments revised by alice (hold it until the audit)", timeout=WAIT_MS
        )
        assert errors == [] and blocked == []

    old_preview = (await h.client.get(f"/v1/previews/{old}", headers=alice)).json()
    assert old_preview["status"] == "superseded" and old_preview["superseded_by"] == new
    moved = await row(h, "Kafka")
    assert moved["ring"] == "hold" and await ledger_size(h) == 1
