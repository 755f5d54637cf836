"""A real browser for the page tests: Playwright driving Debian's Chromium
(`/usr/bin/chromium`; `make test` installs the package when it is missing). A missing browser
fails the test rather than skipping it: pages are only ever tested in a browser."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from playwright.async_api import BrowserContext, Page, Route, async_playwright, expect

CHROMIUM = "/usr/bin/chromium"
# As root, without a sandbox; no background traffic to hosts this machine cannot reach.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@asynccontextmanager
async def browsing(base_url: str, *also: str) -> AsyncIterator[tuple[BrowserContext, list[str]]]:
    """A browser context whose every request to anything but `base_url` (and the origins
    in `also`: an identity provider on loopback, say) is blocked (and listed): a page that
    needs the internet fails here."""
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing: install Debian's chromium"
    blocked: list[str] = []

    async def only_the_service(route: Route) -> Any:
        allowed = (base_url, *also, "blob:")
        if any(route.request.url.startswith(origin) for origin in allowed):
            await route.continue_()
        else:
            blocked.append(route.request.url)
            await route.abort()

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = await browser.new_context()
            await context.route("**/*", only_the_service)
            yield context, blocked
        finally:
            await browser.close()


def counting_removed_facts(status: str | None = None) -> str:
    """An init script: `window.factsRemoved` counts the facts (`dl.facts`) taken out of the
    page from its first script on (only those showing `status`, when given, in their
    `.status` element): a refresh that draws them again for nothing counts."""
    shown = 'facts.querySelector(".status")?.textContent'
    showing = "true" if status is None else f'{shown} === "{status}"'
    return f"""
window.factsRemoved = 0;
new MutationObserver((mutations) => {{
  for (const mutation of mutations) {{
    for (const node of mutation.removedNodes) {{
      if (!(node instanceof Element)) continue;
      const facts = node.matches("dl.facts") ? node : node.querySelector("dl.facts");
      if (facts && {showing}) window.factsRemoved += 1;
    }}
  }}
}}).observe(document, {{ childList: true, subtree: true }});
"""


async def signed_in(page: Page, url: str, headers: dict[str, str], path: str = "/console") -> None:
    """`page` at `path` of the console at `url`, signed in with the key in `headers`."""
    await page.goto(f"{url}{path}")
    await page.get_by_label("API key").fill(headers["Authorization"].removeprefix("Bearer "))
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=20_000)
