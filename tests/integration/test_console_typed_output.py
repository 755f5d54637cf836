"""The run page of a typed agent's run in a real browser (Debian's Chromium, every other
host blocked): beside the answer's text it shows the typed document the answer was checked
to be; an untyped run's page shows no such section."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from app.config.settings import Settings
from tests.support.browser import browsing
from tests.support.factories import final, run_body
from tests.support.harness import DEFAULT_AGENT, Harness, make_config, serving

WAIT_MS = 20_000
VERDICT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ring", "reasons"],
    "properties": {
        "ring": {"type": "string", "enum": ["adopt", "trial", "assess", "hold"]},
        "reasons": {"type": "array", "items": {"type": "string"}},
    },
}
AGENTS = {
    "tech-radar": DEFAULT_AGENT,
    "ring-judge": {"model": "scripted", "instructions": "Judge.", "output_schema": VERDICT},
}


@pytest.fixture
async def served(db: AsyncEngine, settings: Settings) -> AsyncIterator[tuple[str, Harness]]:
    async with serving(settings, make_config(AGENTS)) as both:
        yield both


async def _finished(h: Harness, headers: dict[str, str], body: dict[str, object]) -> str:
    answer = await h.client.post(
        "/v1/runs", headers={**headers, "Idempotency-Key": secrets.token_hex(8)}, json=body
    )
    assert answer.status_code == 201 and answer.json()["termination_reason"] == "final"
    return str(answer.json()["id"])


async def _open(page: Page, url: str, run_id: str, key: str | None = None) -> None:
    """The run's page; `key`: sign in first (the page keeps the key after that)."""
    await page.goto(f"{url}/console/runs/{run_id}")
    if key is not None:
        await page.get_by_label("API key").fill(key)
        await page.get_by_role("button", name="Sign in").click()
    await expect(page.locator("#output-text")).to_be_visible(timeout=WAIT_MS)


async def test_the_run_page_shows_the_typed_document(served: tuple[str, Harness]) -> None:
    url, h = served
    headers = await h.key(subject="svc-shop", roles="caller")
    verdict = {"ring": "trial", "reasons": ["two teams run it", "no incident yet"]}
    body = run_body(
        final('{"ring": "soon"}'),  # rejected: the page shows only the answer that fit
        {"type": "final", "data": verdict},
        agent="ring-judge",
    )
    typed = await _finished(h, headers, body)
    untyped = await _finished(h, headers, run_body(final("Kafka is in trial.")))
    key = headers["Authorization"].removeprefix("Bearer ")
    async with browsing(url) as (context, blocked):
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await _open(page, url, typed, key)

        await expect(page.get_by_role("heading", name="Typed output")).to_be_visible()
        document = page.get_by_label("Typed output", exact=True)
        await expect(document).to_contain_text('"two teams run it"')
        assert json.loads(await document.inner_text()) == verdict
        assert json.loads(await page.locator("#output-text").inner_text()) == verdict

        await _open(page, url, untyped)
        await expect(page.locator("#output-text")).to_have_text("Kafka is in trial.")
        await expect(page.get_by_role("heading", name="Typed output")).to_have_count(0)
        assert errors == []
    assert blocked == []
