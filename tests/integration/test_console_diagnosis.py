"""The run page's diagnosis in a real browser (Debian's Chromium, every other host
blocked): above the timeline, its three answers with their categories and explanations,
links to the events they name, and the terminal cause appearing when the run ends."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from playwright.async_api import Locator, Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.tools.builtin.tech_radar import radar_tools
from app.config.settings import Settings
from app.main import create_app
from app.observability.otel_setup import Telemetry
from tests.support.backend import serving_app
from tests.support.browser import browsing
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import Harness, make_config

WAIT_MS = 20_000


@pytest.fixture
async def served(db: AsyncEngine, settings: Settings) -> AsyncIterator[tuple[str, Harness]]:
    """The service on a loopback port, and a client of it."""
    app = create_app(
        settings, config=make_config(), tools=radar_tools, telemetry=Telemetry(instrument=False)
    )
    async with (
        serving_app(app, lifespan="on") as url,
        httpx.AsyncClient(base_url=url, timeout=60) as client,
    ):
        h = Harness(app, client)
        await seed_radar(h)
        yield url, h


async def create(h: Harness, headers: dict[str, str], *script: Any, wait_s: float = 10) -> str:
    headers = {**headers, "Idempotency-Key": secrets.token_hex(8)}
    answer = await h.client.post("/v1/runs", headers=headers, json=run_body(*script, wait_s=wait_s))
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


async def run_page(page: Page, url: str, key: str, run_id: str) -> Locator:
    """Signs in on the run's page; its diagnosis table."""
    await page.goto(f"{url}/console/runs/{run_id}")
    await page.get_by_label("API key").fill(key)
    await page.get_by_role("button", name="Sign in").click()
    table = page.get_by_role("table", name="Diagnosis")
    await expect(table).to_be_visible(timeout=WAIT_MS)
    return table


def answer(table: Locator, label: str) -> Locator:
    return table.get_by_role("row").filter(has=table.page.get_by_role("rowheader", name=label))


async def test_the_run_page_shows_the_diagnosis_above_the_timeline(
    served: tuple[str, Harness],
) -> None:
    url, h = served
    headers = await h.key(subject="svc-shop", roles="caller")
    run_id = await create(
        h,
        headers,
        tool_calls(("c1", "search_technologies", {"query": 5})),
        tool_calls(("c1", "search_technologies", {"query": "database"})),
        final("PostgreSQL [source:s1]"),
    )
    diagnosis = (await h.client.get(f"/v1/runs/{run_id}/diagnosis", headers=headers)).json()
    first = diagnosis["first_deviation"]
    async with browsing(url) as (context, blocked):
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        table = await run_page(page, url, headers["Authorization"].removeprefix("Bearer "), run_id)

        row = answer(table, "First deviation")
        await expect(row).to_contain_text("invalid_arguments")
        await expect(row).to_contain_text(first["explanation"])
        await expect(answer(table, "Root cause")).to_contain_text(
            "None: the run recovered from every anomaly."
        )
        await expect(answer(table, "Terminal cause")).to_contain_text("final")

        # Above the timeline, and its link leads to the event it names.
        timeline = page.get_by_role("list", name="Timeline")
        boxes = [await table.bounding_box(), await timeline.bounding_box()]
        assert boxes[0] and boxes[1] and boxes[0]["y"] < boxes[1]["y"]
        # Clicked once the timeline is drawn (the diagnosis may come first): a fragment
        # names an element only if it is there when the link is followed.
        target = timeline.locator(f"li#event-{first['seq']}")
        await expect(target).to_have_attribute("data-type", "call.rejected")
        await row.get_by_role("link", name=f"Event {first['seq']} in the timeline").click()
        assert await target.evaluate("li => li.matches(':target')")
        assert page.url.endswith(f"/console/runs/{run_id}#event-{first['seq']}")
        assert errors == []
    assert blocked == []


async def test_the_terminal_cause_appears_when_the_run_ends(served: tuple[str, Harness]) -> None:
    url, h = served
    headers = await h.key(subject="svc-shop", roles="caller,approver")
    run_id = await create(
        h,
        headers,
        tool_calls(("c1", "get_technology", {"technology_id": "tech_nope"})),
        final("I could not find it.", delay_ms=8000),
        wait_s=0,
    )
    async with browsing(url) as (context, blocked):
        page = await context.new_page()
        table = await run_page(page, url, headers["Authorization"].removeprefix("Bearer "), run_id)
        terminal = answer(table, "Terminal cause")
        await expect(terminal).to_contain_text("The run has not finished.", timeout=WAIT_MS)
        await expect(answer(table, "Root cause")).to_contain_text("failed", timeout=WAIT_MS)

        # No reload: the page reads the diagnosis again when the run finishes.
        await expect(terminal).to_contain_text("final", timeout=WAIT_MS)
        await expect(terminal.get_by_role("link")).to_have_text(
            await page.locator("li[data-type='run.finished'] .seq").inner_text()
        )
        await expect(answer(table, "Root cause")).to_contain_text("get_technology")
    assert blocked == []
