"""The run page's parent and child runs in a real browser (Debian's Chromium, every other
host blocked): a run that delegated lists its child as a link, and the child's page links
back to its parent."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import expect
from sqlalchemy.ext.asyncio import AsyncEngine

from app.config.settings import Settings
from tests.support.browser import browsing
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config, serving

WAIT_MS = 20_000
ASK_JUDGE = {"kind": "agent", "agent": "judge", "description": "Ask the ring judge."}
AGENTS = {
    "tech-radar": {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], "ask_judge"]},
    "judge": {"model": "scripted", "instructions": "Say which ring.", "tools": []},
}


@pytest.fixture
async def served(db: AsyncEngine, settings: Settings) -> AsyncIterator[tuple[str, Harness]]:
    async with serving(settings, make_config(AGENTS, tools={"ask_judge": ASK_JUDGE})) as both:
        yield both


async def test_the_run_page_links_a_runs_children_and_its_parent(
    served: tuple[str, Harness],
) -> None:
    url, h = served
    headers = await h.key(subject="svc-shop", roles="caller")
    delegate = tool_calls(("d1", "ask_judge", {"input": "Kafka?"}))
    delegate["calls"][0]["script"] = [final("trial")]
    body = run_body(delegate, final("The judge says trial."))
    answer = await h.client.post(
        "/v1/runs", headers={**headers, "Idempotency-Key": secrets.token_hex(8)}, json=body
    )
    assert answer.status_code == 201 and answer.json()["termination_reason"] == "final"
    parent_id = answer.json()["id"]
    listed = await h.client.get(f"/v1/runs?parent_run_id={parent_id}", headers=headers)
    [child] = listed.json()["items"]
    async with browsing(url) as (context, blocked):
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{url}/console/runs/{parent_id}")
        await page.get_by_label("API key").fill(headers["Authorization"].removeprefix("Bearer "))
        await page.get_by_role("button", name="Sign in").click()

        children = page.get_by_role("list", name="Child runs")
        await expect(children).to_be_visible(timeout=WAIT_MS)
        item = children.locator(f"li[data-run='{child['id']}']")
        await expect(item).to_contain_text("judge")
        await expect(item).to_contain_text("final")
        await item.get_by_role("link").click()

        await expect(page).to_have_url(f"{url}/console/runs/{child['id']}", timeout=WAIT_MS)
        parent_link = page.get_by_role("link", name=parent_id)
        await expect(parent_link).to_be_visible(timeout=WAIT_MS)
        await expect(page.get_by_role("list", name="Child runs")).to_have_count(0)
        await expect(page.get_by_text("No child runs.")).to_be_visible()
        await parent_link.click()
        await expect(page).to_have_url(f"{url}/console/runs/{parent_id}", timeout=WAIT_MS)
        await expect(page.get_by_role("list", name="Child runs")).to_be_visible(timeout=WAIT_MS)
        assert errors == [] and blocked == []
