"""The API docs work offline: `/docs` and `/redoc` render the operations in a real browser
with every request to anything but the service blocked. And `GET /v1/me` tells a client
what its key may do."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.config.settings import Settings
from app.main import create_app
from tests.support.backend import serving_app
from tests.support.browser import browsing
from tests.support.harness import Harness, make_config


@pytest.fixture
async def service(settings: Settings) -> AsyncIterator[str]:
    app = create_app(settings, config=make_config(), run_driver=False)
    async with serving_app(app, lifespan="on") as url:
        yield url


async def test_swagger_ui_shows_the_operations_without_internet(service: str) -> None:
    async with browsing(service) as (context, blocked):
        page = await context.new_page()
        await page.goto(f"{service}/docs")
        await page.wait_for_selector(".opblock", timeout=20_000)
        assert await page.locator(".opblock").count() >= 15
        assert await page.get_by_text("/v1/runs", exact=True).count() >= 1
    assert blocked == []


async def test_redoc_shows_the_reference_without_internet(service: str) -> None:
    async with browsing(service) as (context, blocked):
        page = await context.new_page()
        await page.goto(f"{service}/redoc")
        # (Locators, not page-evaluated scripts: the page's policy forbids eval.)
        await page.locator("[data-section-id]").nth(15).wait_for(state="attached", timeout=20_000)
        assert await page.get_by_role("heading", name="Create Run").count() >= 1
        assert await page.title() == "Toolgate — API reference"
    # Its footer logo (a CDN address in the bundle) is refused by the page's policy, before
    # any request: nothing reached the network guard either.
    assert blocked == []


async def test_me_tells_a_key_its_tenant_subject_roles_and_scopes(harness: Harness) -> None:
    headers = await harness.key(subject="alice", roles="approver", scopes=["radar:read"])
    answer = await harness.client.get("/v1/me", headers=headers)
    assert answer.status_code == 200
    assert answer.json() == {
        "tenant": "acme",
        "subject": "alice",
        "roles": ["approver"],
        "scopes": ["radar:read"],
    }
    assert (await harness.client.get("/v1/me")).status_code == 401


async def test_the_consoles_files_are_not_served_a_second_time_without_its_policy(
    harness: Harness,
) -> None:
    assert (await harness.client.get("/static/vendor/redoc/redoc.standalone.js")).status_code == 200
    assert (await harness.client.get("/static/console/app.js")).status_code == 404
    served = await harness.client.get("/console/assets/app.js")
    assert served.status_code == 200 and "Content-Security-Policy" in served.headers
