"""The run page of a run that continues another (`continue_from`), in a real browser
(Debian's Chromium, every other host blocked): it says which run it continues, as a link
that opens that run's page; and the page's refresh leaves the run's facts as they are
when the run did not change (a link drawn again under a click would lose the click)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import expect
from sqlalchemy.ext.asyncio import AsyncEngine

from app.config.settings import Settings
from tests.support.browser import browsing, counting_removed_facts
from tests.support.factories import final
from tests.support.harness import Harness, make_config, serving

WAIT_MS = 20_000


@pytest.fixture
async def served(db: AsyncEngine, settings: Settings) -> AsyncIterator[tuple[str, Harness]]:
    async with serving(settings, make_config()) as both:
        yield both


async def _create(h: Harness, headers: dict[str, str], body: dict[str, object]) -> str:
    answer = await h.client.post(
        "/v1/runs", headers={**headers, "Idempotency-Key": secrets.token_hex(8)}, json=body
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"] == "finished"
    return str(answer.json()["id"])


async def test_the_run_page_links_to_the_run_it_continues(served: tuple[str, Harness]) -> None:
    url, h = served
    headers = await h.key(subject="svc-shop", roles="caller")
    earlier = await _create(
        h, headers, {"agent": "tech-radar", "input": "Which rings?", "script": [final("part")]}
    )
    body = {"agent": "tech-radar", "continue_from": earlier, "script": [final("whole")]}
    later = await _create(h, headers, body)
    async with browsing(url) as (context, blocked):
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.add_init_script(counting_removed_facts())
        await page.goto(f"{url}/console/runs/{later}")
        await page.get_by_label("API key").fill(headers["Authorization"].removeprefix("Bearer "))
        await page.get_by_role("button", name="Sign in").click()

        facts = page.locator("dl.facts")
        await expect(facts).to_contain_text("Continued from", timeout=WAIT_MS)
        back = facts.get_by_role("link", name=earlier)
        await expect(back).to_have_attribute("href", f"/console/runs/{earlier}")
        # The calls are drawn by the refresh that follows the first drawing of the facts.
        await expect(page.get_by_text("No calls yet.")).to_be_visible(timeout=WAIT_MS)
        assert await page.evaluate("window.factsRemoved") == 0
        await back.click()
        await expect(page.get_by_role("heading", level=1)).to_have_text(
            f"Run {earlier}", timeout=WAIT_MS
        )
        # The earlier run continues nothing.
        await expect(page.locator("dl.facts")).not_to_contain_text("Continued from")
        assert errors == []
    assert blocked == []
