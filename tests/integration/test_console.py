"""The approvers' console (`/console`) in a real browser (Debian's Chromium, every other
host blocked): sign-in, the live approval queue, a preview's decision by keyboard alone,
runs, tools, what the page refuses to render as markup, and the headers every console
response carries."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Dialog, Page, Request, Route, expect
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.tools.builtin.tech_radar import radar_tools
from app.api.routes.console import CSP
from app.config.settings import Settings
from app.db.radar import technologies
from app.db.tables import preview as preview_table
from app.domain.ids import new_id
from app.main import create_app
from app.observability.otel_setup import Telemetry
from tests.support.approvals import WRITER, ledger_size, move, moved_meanwhile, row
from tests.support.backend import serving_app
from tests.support.browser import browsing, counting_removed_facts
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import Harness, make_config
from tests.support.waiting import until

WAIT_MS = 20_000
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
XSS_IMG = "<img src=x onerror=alert(1)>"
XSS_SCRIPT = "<script>alert(2)</script>"
XSS_LINK = '<a href="javascript:alert(3)">javascript:alert(3)</a>'
XSS = f"{XSS_IMG} {XSS_SCRIPT} {XSS_LINK}"


async def _fresh_idempotency_key(request: httpx.Request) -> None:
    if request.method == "POST" and request.url.path == "/v1/runs":
        request.headers.setdefault("Idempotency-Key", secrets.token_hex(8))


@dataclass
class Console:
    """The service on a loopback port, a client for it, and keys of different subjects:
    a product backend's (caller), an approver's, an admin's."""

    url: str
    h: Harness
    caller: dict[str, str] = field(default_factory=dict)
    approver: dict[str, str] = field(default_factory=dict)
    admin: dict[str, str] = field(default_factory=dict)

    @property
    def api(self) -> httpx.AsyncClient:
        return self.h.client

    async def parked_run(self, *script: dict[str, Any], headers: Any = None) -> dict[str, Any]:
        answer = await self.api.post(
            "/v1/runs", headers=headers or self.caller, json=run_body(*script)
        )
        assert answer.status_code == 201, answer.text
        run = answer.json()
        assert run["status"] == "awaiting_approval", run
        return run

    async def park_kafka_move(self, headers: Any = None, **script: Any) -> tuple[str, str]:
        """A run that proposes moving Kafka to adopt: (run id, preview id)."""
        kafka = await row(self.h, "Kafka")
        run = await self.parked_run(
            tool_calls(move(kafka["id"])),
            final("Kafka is now in adopt [source:s1]", **script),
            headers=headers,
        )
        return run["id"], run["pending_approvals"][0]["preview_id"]


def key_of(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


@pytest.fixture
async def console(db: AsyncEngine, settings: Settings) -> AsyncIterator[Console]:
    async with _console(settings) as made:
        yield made


@pytest.fixture
async def unswept_console(db: AsyncEngine, settings: Settings) -> AsyncIterator[Console]:
    """A console whose driver never polls during a test: nothing sweeps a preview the test
    lets lapse before the page decides on it."""
    async with _console(settings.model_copy(update={"driver_poll_s": 3600.0})) as made:
        yield made


@asynccontextmanager
async def _console(settings: Settings) -> AsyncIterator[Console]:
    app = create_app(
        settings,
        config=make_config({"tech-radar": WRITER}),
        tools=radar_tools,
        telemetry=Telemetry(instrument=False),
    )
    async with (
        serving_app(app, lifespan="on") as url,
        httpx.AsyncClient(
            base_url=url, timeout=60, event_hooks={"request": [_fresh_idempotency_key]}
        ) as client,
    ):
        h = Harness(app, client)
        await seed_radar(h)
        yield Console(
            url=url,
            h=h,
            caller=await h.key(subject="svc-shop", roles="caller"),
            approver=await h.key(subject="alice", roles="approver"),
            admin=await h.key(subject="root", roles="admin"),
        )


@dataclass
class Watch:
    """What a page did: dialogs it opened, errors it logged (a CSP violation is one),
    and the requests it sent."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)

    def sent(self, method: str, path_part: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and path_part in r.url]


def watch(page: Page) -> Watch:
    seen = Watch()

    async def on_dialog(dialog: Dialog) -> None:
        seen.dialogs.append(dialog.message)
        await dialog.dismiss()

    def on_console(message: Any) -> None:
        # The browser logs each non-2xx answer; those are expected (a bad key, a refusal).
        if message.type == "error" and "Failed to load resource" not in message.text:
            seen.errors.append(message.text)

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on("request", lambda request: seen.requests.append(request))
    return seen


@asynccontextmanager
async def opened(console: Console) -> AsyncIterator[tuple[Any, Page, Watch]]:
    """A browser context and a page in it (1280×800), watched; at the end, nothing was
    sent to another host, nothing failed and no dialog opened."""
    async with browsing(console.url) as (context, blocked):
        page = await context.new_page()
        await page.set_viewport_size({"width": 1280, "height": 800})
        seen = watch(page)
        yield context, page, seen
        assert seen.errors == []
        assert seen.dialogs == []
    assert blocked == []


async def sign_in(page: Page, console: Console, headers: dict[str, str], path: str = "/console"):  # type: ignore[no-untyped-def]
    await page.goto(f"{console.url}{path}")
    await page.get_by_label("API key").fill(key_of(headers))
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("button", name="Sign out")).to_be_visible(timeout=WAIT_MS)


async def screenshot(page: Page, name: str) -> None:
    """Writes docs/screenshots/<name>.png when TOOLGATE_SCREENSHOTS=1."""
    if os.environ.get("TOOLGATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


async def test_sign_in_keeps_the_key_in_session_storage_and_a_bad_key_shows_the_401(
    console: Console,
) -> None:
    key = key_of(console.approver)
    async with opened(console) as (_, page, seen):
        await page.goto(f"{console.url}/console")
        await expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=WAIT_MS)
        await page.get_by_label("API key").fill("tg_not-a-key")
        await page.get_by_role("button", name="Sign in").click()
        alert = page.get_by_role("alert")
        await expect(alert).to_contain_text("401", timeout=WAIT_MS)
        await expect(alert).to_contain_text("This API key was not accepted")
        assert await page.evaluate("() => sessionStorage.length") == 0

        await page.get_by_label("API key").fill(key)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("table", name="Approval queue")).to_be_visible(
            timeout=WAIT_MS
        )
        await expect(page.locator(".identity")).to_contain_text("Signed in as alice (approver)")
        stored = await page.evaluate("() => Object.values(sessionStorage)")
        assert stored == [key]
        assert await page.evaluate("() => localStorage.length") == 0
        nav = page.get_by_role("navigation")
        for name in ("Queue", "Runs", "Tools"):
            await expect(nav.get_by_role("link", name=name)).to_be_visible()

        # Never in an address; on every API request as a bearer token.
        assert all(key not in r.url for r in seen.requests)
        assert key not in page.url
        api_calls = [r for r in seen.requests if "/v1/" in r.url]
        assert api_calls
        signed_in = [r for r in api_calls if r.headers.get("authorization") == f"Bearer {key}"]
        assert len(signed_in) >= 2  # /v1/me, then the queue's own requests

        await page.get_by_role("button", name="Sign out").click()
        await expect(page.get_by_label("API key")).to_be_visible()
        assert await page.evaluate("() => sessionStorage.length") == 0


async def test_a_run_that_parks_appears_in_the_queue_without_a_reload(console: Console) -> None:
    async with opened(console) as (_, page, seen):
        await sign_in(page, console, console.approver)
        queue = page.get_by_role("table", name="Approval queue")
        await expect(queue).to_be_visible(timeout=WAIT_MS)
        await expect(queue.get_by_role("columnheader")).to_have_count(7)
        await expect(queue).to_contain_text("No previews with this status")
        # The stream is open before the run is created.
        await expect(page.get_by_text("Live: updates as they happen")).to_be_visible(
            timeout=WAIT_MS
        )
        navigations = len([r for r in seen.requests if r.is_navigation_request()])

        run_id, preview_id = await console.park_kafka_move()
        summary = queue.get_by_role("link", name="Move Kafka from trial to adopt")
        await expect(summary).to_be_visible(timeout=5_000)
        assert len([r for r in seen.requests if r.is_navigation_request()]) == navigations
        assert await summary.get_attribute("href") == f"/console/previews/{preview_id}"
        cells = (
            queue.get_by_role("row")
            .filter(has=page.get_by_role("link", name="Move Kafka from trial to adopt"))
            .get_by_role("cell")
        )
        await expect(cells.nth(0)).to_have_text("move_technology_ring")
        await expect(cells.nth(2)).to_have_text("svc-shop")
        await expect(cells.nth(3)).to_have_text(run_id)
        await expect(cells.nth(4)).to_have_text("$0.00")
        await expect(cells.nth(5)).to_have_text("high · approval required")
        countdown = cells.nth(6)
        first = await countdown.inner_text()
        assert first.endswith("s") and "m" in first  # e.g. "14m 59s"
        await expect(countdown).not_to_have_text(first, timeout=5_000)  # it counts down
        await screenshot(page, "queue")

        # The status filter: nothing approved yet; back to pending.
        await page.get_by_label("Status").select_option("approved")
        await expect(queue).to_contain_text("No previews with this status", timeout=WAIT_MS)
        assert page.url.endswith("/console?status=approved")
        await page.get_by_label("Status").select_option("pending")
        await expect(summary).to_be_visible(timeout=WAIT_MS)


async def test_approve_and_commit_with_the_keyboard_alone_then_the_run_finishes_live(
    console: Console,
) -> None:
    kafka = await row(console.h, "Kafka")
    run_id, preview_id = await console.park_kafka_move(delay_ms=1500)
    async with opened(console) as (context, page, seen):
        # The run's page, in a second tab, follows its timeline live.
        watcher = await context.new_page()
        watcher_seen = watch(watcher)
        await sign_in(watcher, console, console.approver, f"/console/runs/{run_id}")
        timeline = watcher.get_by_role("list", name="Timeline")
        await expect(timeline.locator("li[data-type='call.awaiting_approval']")).to_have_count(
            1, timeout=WAIT_MS
        )
        await expect(watcher.get_by_text("Live.", exact=True)).to_be_visible(timeout=WAIT_MS)

        # Sign in, open the preview, approve and commit: focus, Tab, Enter and Space only.
        await page.goto(f"{console.url}/console")
        await page.get_by_label("API key").focus()
        await page.keyboard.type(key_of(console.approver))
        await page.keyboard.press("Enter")
        queue = page.get_by_role("table", name="Approval queue")
        summary = queue.get_by_role("link", name="Move Kafka from trial to adopt")
        await expect(summary).to_be_visible(timeout=WAIT_MS)
        await summary.focus()
        await page.keyboard.press("Enter")
        await expect(page.get_by_role("heading", name="Preview", exact=True)).to_be_focused(
            timeout=WAIT_MS
        )
        assert page.url.endswith(f"/console/previews/{preview_id}")
        approve = page.get_by_role("button", name="Approve")
        await expect(approve).to_be_enabled(timeout=WAIT_MS)
        for _ in range(80):
            await page.keyboard.press("Tab")
            if await approve.evaluate("button => button === document.activeElement"):
                break
        else:
            raise AssertionError("Tab never reached the Approve button")
        await page.keyboard.press("Enter")
        status = page.locator("#preview-status")
        await expect(status).to_have_text("approved", timeout=WAIT_MS)
        commit = page.get_by_role("button", name="Commit")
        await expect(commit).to_be_focused()  # the next step has the focus
        await page.keyboard.press("Space")
        await expect(status).to_have_text("committed", timeout=WAIT_MS)
        await expect(
            page.get_by_role("status").filter(has_text="Committed by alice")
        ).to_be_visible()

        # The approval sent back the hash shown; the commit had a fresh Idempotency-Key.
        [approval] = seen.sent("POST", "/approve")
        shown = await page.locator("#content-hash").inner_text()
        assert approval.post_data_json == {"content_hash": shown}
        [committed] = seen.sent("POST", "/commit")
        assert len(committed.headers["idempotency-key"]) == 36
        assert all(r.headers.get("authorization") for r in seen.sent("POST", "/v1/"))

        # The watching tab saw the run finish without a reload.
        await expect(timeline.locator("li[data-type='run.finished']")).to_have_count(
            1, timeout=WAIT_MS
        )
        await expect(watcher.locator("#run-status")).to_have_text("finished", timeout=WAIT_MS)
        streamed = [
            r
            for r in watcher_seen.requests
            if r.headers.get("accept") == "text/event-stream" and f"/v1/runs/{run_id}" in r.url
        ]
        assert streamed, "the run's page did not follow its event stream"
        assert not [r for r in watcher_seen.requests if "/events?after=" in r.url]  # no polling
        assert watcher_seen.errors == [] and watcher_seen.dialogs == []

    moved = await row(console.h, "Kafka")
    assert (moved["ring"], moved["version"]) == ("adopt", kafka["version"] + 1)
    assert await ledger_size(console.h) == 1  # exactly one effect


async def test_a_commit_that_got_no_answer_is_sent_again_with_the_same_key(
    console: Console,
) -> None:
    kafka = await row(console.h, "Kafka")
    _, preview_id = await console.park_kafka_move()
    failed: list[str] = []

    async def fail_the_first(route: Route) -> None:
        if failed:
            await route.fallback()
            return
        failed.append(route.request.headers["idempotency-key"])
        await route.abort("connectionreset")  # the network drops it: no answer

    async with opened(console) as (_, page, seen):
        await page.route("**/v1/previews/*/commit", fail_the_first)
        await sign_in(page, console, console.approver, f"/console/previews/{preview_id}")
        await page.get_by_role("button", name="Approve").click()
        status = page.locator("#preview-status")
        await expect(status).to_have_text("approved", timeout=WAIT_MS)
        commit = page.get_by_role("button", name="Commit")
        await commit.click()
        alert = page.get_by_role("alert")
        await expect(alert).to_contain_text("The service did not answer", timeout=WAIT_MS)
        await expect(alert).to_contain_text("same Idempotency-Key")
        assert len(failed) == 1 and await ledger_size(console.h) == 0
        await commit.click()
        await expect(status).to_have_text("committed", timeout=WAIT_MS)
        first, second = seen.sent("POST", "/commit")
        assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
        assert first.post_data_json == second.post_data_json
    moved = await row(console.h, "Kafka")
    assert (moved["ring"], moved["version"]) == ("adopt", kafka["version"] + 1)
    assert await ledger_size(console.h) == 1


async def test_reject_needs_a_reason_and_then_the_page_shows_the_rejection(
    console: Console,
) -> None:
    _, preview_id = await console.park_kafka_move()
    async with opened(console) as (_, page, seen):
        await sign_in(page, console, console.approver, f"/console/previews/{preview_id}")
        reject = page.get_by_role("button", name="Reject")
        await expect(reject).to_be_enabled(timeout=WAIT_MS)
        await expect(page.get_by_role("list", name="Timeline")).to_contain_text(
            "call.awaiting_approval", timeout=WAIT_MS
        )
        await expect(page.get_by_role("table", name="What changes")).to_contain_text("adopt")
        await screenshot(page, "preview")
        await reject.click()
        await expect(page.get_by_role("alert")).to_contain_text("A reason is required")
        await expect(page.get_by_label("Reason")).to_be_focused()
        await page.get_by_label("Reason").fill("   ")
        await reject.click()
        await expect(page.get_by_role("alert")).to_contain_text("A reason is required")
        assert seen.sent("POST", "/reject") == []

        await page.get_by_label("Reason").fill("not before the architecture review")
        await reject.click()
        await expect(page.locator("#preview-status")).to_have_text("rejected", timeout=WAIT_MS)
        await expect(page.locator("#preview-reason")).to_have_text(
            "not before the architecture review"
        )
        await expect(
            page.get_by_role("status").filter(has_text="Rejected by alice")
        ).to_be_visible()
        await expect(page.get_by_role("button", name="Approve")).to_be_disabled()
        assert len(seen.sent("POST", "/reject")) == 1
    stored = (await console.api.get(f"/v1/previews/{preview_id}", headers=console.approver)).json()
    assert (stored["status"], stored["reason"]) == (
        "rejected",
        "not before the architecture review",
    )


async def test_self_approval_is_refused_in_an_alert(console: Console) -> None:
    both = await console.h.key(subject="svc-both", roles="caller,approver")
    _, preview_id = await console.park_kafka_move(headers=both)
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, both, f"/console/previews/{preview_id}")
        await page.get_by_role("button", name="Approve").click()
        alert = page.get_by_role("alert")
        await expect(alert).to_contain_text("403", timeout=WAIT_MS)
        await expect(alert).to_contain_text(
            "you created this run; another approver must approve it", ignore_case=True
        )
        await expect(page.locator("#preview-status")).to_have_text("pending")


async def _xss_technology(console: Console) -> str:
    tech_id = new_id("tech")
    async with console.h.runtime.sessions.begin() as session:
        await technologies.insert_missing(
            session,
            [
                {
                    "tenant_id": "acme",
                    "id": tech_id,
                    "name": f"Evil {XSS_IMG}",
                    "category": "xss",
                    "ring": "trial",
                    "description": f"{XSS}. Read more at javascript:alert(3)",
                    "version": 1,
                    "updated_at": datetime.now(UTC),
                }
            ],
        )
    return tech_id


async def test_model_text_tool_output_arguments_and_reasons_render_as_inert_text(
    console: Console,
) -> None:
    tech_id = await _xss_technology(console)
    answer = await console.api.post(
        "/v1/runs",
        headers=console.caller,
        json=run_body(
            tool_calls(("c1", "search_technologies", {"query": "xss"})),
            final(f"Found it: {XSS} [source:s1]"),
        ),
    )
    assert answer.status_code == 201 and answer.json()["status"] == "finished", answer.text
    answered = answer.json()["id"]
    parked = await console.parked_run(
        tool_calls(
            (
                "m1",
                "move_technology_ring",
                {"technology_id": tech_id, "ring": "adopt", "rationale": XSS},
            )
        ),
        final("done"),
    )
    preview_id = parked["pending_approvals"][0]["preview_id"]

    async def inert(page: Page) -> None:
        assert await page.locator("img").count() == 0
        assert await page.locator("body script").count() == 0
        assert await page.locator("a[href^='javascript']").count() == 0
        assert await page.locator("[onerror]").count() == 0

    async with opened(console) as (_, page, seen):
        # The run's page: the model's answer and the tool's output, literally.
        await sign_in(page, console, console.approver, f"/console/runs/{answered}")
        output = page.locator("#output-text")
        await expect(output).to_have_text(f"Found it: {XSS} [source:s1]", timeout=WAIT_MS)
        calls = page.get_by_role("table", name="Calls")
        await expect(calls).to_contain_text(f'"name": "Evil {XSS_IMG}"')
        await expect(calls).to_contain_text(f'"summary": "{XSS_IMG} {XSS_SCRIPT} <a href=')
        await expect(page.get_by_role("list", name="Citations")).to_contain_text("s1")
        await inert(page)

        # The queue's summary and the preview: arguments, impact, then a reason.
        await page.get_by_role("navigation").get_by_role("link", name="Queue").click()
        queue = page.get_by_role("table", name="Approval queue")
        link = queue.get_by_role("link", name=f"Move Evil {XSS_IMG} from trial to adopt")
        await expect(link).to_be_visible(timeout=WAIT_MS)
        assert await link.get_attribute("href") == f"/console/previews/{preview_id}"
        await inert(page)
        await link.click()
        await expect(page.locator(".summary")).to_have_text(
            f"Move Evil {XSS_IMG} from trial to adopt", timeout=WAIT_MS
        )
        arguments = page.get_by_label("Arguments", exact=True)
        await expect(arguments).to_contain_text(f'"rationale": "{XSS_IMG} {XSS_SCRIPT} <a href=')
        await expect(page.get_by_role("table", name="What changes")).to_contain_text("trial")
        await expect(page.locator("dl.facts").last).to_contain_text(XSS)
        await page.get_by_label("Reason").fill(f"no: {XSS}")
        await page.get_by_role("button", name="Reject").click()
        await expect(page.locator("#preview-reason")).to_have_text(f"no: {XSS}", timeout=WAIT_MS)
        await inert(page)
        assert seen.dialogs == []


async def test_a_caller_only_key_sees_no_approve_button_and_the_api_refuses_it(
    console: Console,
) -> None:
    run_id, preview_id = await console.park_kafka_move()
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.caller, f"/console/previews/{preview_id}")
        await expect(page.get_by_role("heading", name="Preview", exact=True)).to_be_visible(
            timeout=WAIT_MS
        )
        await expect(page.locator("#preview-status")).to_have_text("pending", timeout=WAIT_MS)
        await expect(page.get_by_role("button", name="Approve")).to_have_count(0)
        await expect(page.get_by_role("button", name="Reject")).to_have_count(0)
        await expect(page.get_by_text("does not have the approver role").first).to_be_visible()
        # The queue is for approvers: the page says so instead of failing.
        await page.get_by_role("navigation").get_by_role("link", name="Queue").click()
        await expect(page.get_by_role("table", name="Approval queue")).to_be_visible()
        await expect(page.get_by_text("cannot see the approval queue")).to_be_visible()
    preview = (await console.api.get(f"/v1/previews/{preview_id}", headers=console.caller)).json()
    refused = await console.api.post(
        f"/v1/previews/{preview_id}/approve",
        headers=console.caller,
        json={"content_hash": preview["content_hash"]},
    )
    assert refused.status_code == 403
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["type"].endswith("/forbidden")


async def test_every_console_response_has_the_policy_and_pages_open_directly(
    console: Console,
) -> None:
    run_id, preview_id = await console.park_kafka_move()
    api = console.api
    root = await api.get("/", follow_redirects=False)
    assert root.status_code in (302, 303, 307) and root.headers["location"] == "/console"
    for path in (
        "/console",
        "/console/",
        f"/console/runs/{run_id}",
        f"/console/previews/{preview_id}",
        "/console/tools",
        "/console/keys",
        "/console/no/such/page",
    ):
        page = await api.get(path)
        assert page.status_code == 200, path
        assert page.headers["content-type"].startswith("text/html")
        assert page.headers["content-security-policy"] == CSP
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "no-referrer"
        assert page.headers["cache-control"] == "no-store"
        assert "<script>" not in page.text and " on" not in page.text.split("<body>")[1]
    missing = await api.get("/console/assets/%2e%2e/%2e%2e/main.py")
    assert missing.status_code == 404
    assert missing.headers["content-security-policy"] == CSP
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert not any(p == "/" or p.startswith("/console") for p in paths)

    async with opened(console) as (_, page, _seen):
        responses: list[Any] = []
        page.on("response", lambda response: responses.append(response))
        await sign_in(page, console, console.approver, f"/console/runs/{run_id}")
        await expect(page.get_by_role("heading", name=f"Run {run_id}")).to_be_visible(
            timeout=WAIT_MS
        )
        await expect(page.locator("#run-status")).to_have_text("awaiting_approval")
        await expect(page.get_by_role("list", name="Timeline")).to_contain_text(
            "call.awaiting_approval", timeout=WAIT_MS
        )
        await page.goto(f"{console.url}/console/previews/{preview_id}")  # still signed in
        await expect(page.locator("#preview-status")).to_have_text("pending", timeout=WAIT_MS)
        await expect(page.get_by_role("list", name="Timeline")).to_contain_text(
            "preview.created", timeout=WAIT_MS
        )
        await page.goto(f"{console.url}/")
        await expect(page).to_have_url(f"{console.url}/console")
        await expect(page.get_by_role("table", name="Approval queue")).to_be_visible(
            timeout=WAIT_MS
        )
        console_responses = [r for r in responses if "/console" in r.url]
        assert len(console_responses) >= 8  # the shells and every script and stylesheet
        for response in console_responses:
            assert await response.header_value("content-security-policy") == CSP, response.url


async def test_an_admin_disables_and_enables_a_tool(console: Console) -> None:
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.approver, "/console/tools")
        tools = page.get_by_role("table", name="Tools")
        await expect(tools.get_by_role("row")).to_have_count(4, timeout=WAIT_MS)
        await expect(tools.get_by_role("button")).to_have_count(0)  # not an admin
        await page.get_by_role("button", name="Sign out").click()

        await page.get_by_label("API key").fill(key_of(console.admin))
        await page.get_by_role("button", name="Sign in").click()
        row_ = tools.get_by_role("row").filter(has_text="search_technologies")
        await expect(row_.get_by_role("cell").nth(5)).to_have_text("yes", timeout=WAIT_MS)
        await expect(
            tools.get_by_role("row")
            .filter(has_text="move_technology_ring")
            .get_by_role("cell")
            .nth(2)
        ).to_have_text("high")
        await page.get_by_role("button", name="Disable search_technologies").click()
        await expect(row_.get_by_role("cell").nth(5)).to_have_text("no", timeout=WAIT_MS)
        listed = (await console.api.get("/v1/tools", headers=console.admin)).json()["items"]
        assert {t["name"]: t["enabled"] for t in listed}["search_technologies"] is False

        enable = page.get_by_role("button", name="Enable search_technologies")
        await expect(enable).to_be_focused()  # the same button, relabelled
        await page.keyboard.press("Enter")
        await expect(row_.get_by_role("cell").nth(5)).to_have_text("yes", timeout=WAIT_MS)
        listed = (await console.api.get("/v1/tools", headers=console.admin)).json()["items"]
        assert {t["name"]: t["enabled"] for t in listed}["search_technologies"] is True


async def test_an_admin_makes_a_key_sees_it_once_and_revokes_it(console: Console) -> None:
    async with opened(console) as (context, page, seen):
        await sign_in(page, console, console.approver, "/console/keys")
        await expect(page.get_by_text("Only an admin key")).to_be_visible(timeout=WAIT_MS)
        nav = page.get_by_role("navigation")
        await expect(nav.get_by_role("link", name="Keys")).to_be_hidden()
        await page.get_by_role("button", name="Sign out").click()
        await page.get_by_label("API key").fill(key_of(console.admin))
        await page.get_by_role("button", name="Sign in").click()
        await expect(nav.get_by_role("link", name="Keys")).to_be_visible(timeout=WAIT_MS)
        keys = page.get_by_role("table", name="Keys")
        await expect(keys.get_by_role("row")).to_have_count(4, timeout=WAIT_MS)
        await expect(keys.get_by_role("row").filter(has_text="(this key)")).to_contain_text("root")

        await page.get_by_label("Name").fill("ci bot")
        await page.get_by_role("checkbox", name="caller").check()
        await page.get_by_role("checkbox", name="radar:read").check()
        await page.get_by_role("button", name="Create key").click()
        shown = page.get_by_label("The new API key")
        await expect(shown).to_have_value(re.compile(r"^tg_"), timeout=WAIT_MS)
        await expect(page.get_by_role("heading", name='Key "ci bot" made')).to_be_focused()
        await expect(page.get_by_text("shown only this once")).to_be_visible()
        key = await shown.input_value()
        [post] = seen.sent("POST", "/v1/keys")
        assert post.headers.get("idempotency-key")
        me = (await console.api.get("/v1/me", headers={"Authorization": f"Bearer {key}"})).json()
        assert me["roles"] == ["caller"] and me["scopes"] == ["radar:read"]
        await context.grant_permissions(["clipboard-read", "clipboard-write"])
        await page.get_by_role("button", name="Copy").click()
        assert await page.evaluate("() => navigator.clipboard.readText()") == key
        ci_row = keys.get_by_role("row").filter(has_text="ci bot")
        await expect(ci_row).to_contain_text(key[:11] + "…", timeout=WAIT_MS)
        assert key not in await keys.inner_text()
        await page.get_by_role("button", name="Done, hide the key").click()
        await expect(shown).to_have_count(0)
        assert key not in await page.content()

        await page.get_by_role("button", name="Revoke ci bot", exact=True).click()
        await page.get_by_role("button", name="Revoke ci bot now").click()
        await expect(ci_row).to_have_count(0, timeout=WAIT_MS)
        refused = await console.api.get("/v1/me", headers={"Authorization": f"Bearer {key}"})
        assert refused.status_code == 401
        await page.get_by_label("Show revoked keys").check()
        await expect(ci_row).to_contain_text("revoked", timeout=WAIT_MS)

        # Revoking the key the console signed in with signs it out.
        await page.get_by_role("button", name="Revoke root", exact=True).click()
        await expect(page.get_by_text("This is the key you are signed in with")).to_be_visible()
        await page.get_by_role("button", name="Revoke root now").click()
        await expect(page.get_by_label("API key")).to_be_visible(timeout=WAIT_MS)
        assert await page.evaluate("() => sessionStorage.length") == 0
        answer = await console.api.get("/v1/me", headers=console.admin)
        assert answer.status_code == 401


async def test_the_runs_list_filters_and_a_runs_page_shows_output_usage_and_calls(
    console: Console,
) -> None:
    done = await console.api.post(
        "/v1/runs",
        headers=console.caller,
        json=run_body(
            tool_calls(
                ("c1", "search_technologies", {"query": "database"}),
                ("c2", "no_such_tool", {}),
                usage=(120, 20),
            ),
            final("PostgreSQL is in adopt [source:s1]", usage=(300, 22)),
        ),
    )
    assert done.status_code == 201 and done.json()["status"] == "finished", done.text
    finished = done.json()["id"]
    parked, _ = await console.park_kafka_move()
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.approver, "/console/runs")
        runs = page.get_by_role("table", name="Runs")
        await expect(runs.get_by_role("link", name=finished)).to_be_visible(timeout=WAIT_MS)
        await expect(runs.get_by_role("link", name=parked)).to_be_visible()
        await page.get_by_label("Status").select_option("finished")
        await expect(runs.get_by_role("link", name=parked)).to_have_count(0, timeout=WAIT_MS)
        await expect(runs.get_by_role("link", name=finished)).to_be_visible()
        assert page.url.endswith("/console/runs?status=finished")
        # A reload that finds the same runs keeps their rows (a row swapped under the
        # pointer loses its click).
        row = runs.get_by_role("link", name=finished)
        await row.evaluate("a => { a.kept = true; }")
        async with page.expect_response(lambda r: "agent=tech-radar" in r.url):
            await page.get_by_label("Agent").select_option("tech-radar")
        await expect(page).to_have_url(
            f"{console.url}/console/runs?status=finished&agent=tech-radar"
        )
        await expect(runs).not_to_have_attribute("aria-busy", "true")
        assert await row.evaluate("a => a.kept === true")

        await runs.get_by_role("link", name=finished).click()
        await expect(page.get_by_role("heading", name=f"Run {finished}")).to_be_visible(
            timeout=WAIT_MS
        )
        await expect(page.locator("#run-status")).to_have_text("finished")
        await expect(page.locator("dl.facts").first).to_contain_text("final")
        await expect(page.locator("#output-text")).to_have_text(
            "PostgreSQL is in adopt [source:s1]"
        )
        await expect(page.get_by_role("list", name="Citations")).to_contain_text(
            "s1 — search_technologies"
        )
        usage = page.get_by_role("table", name="Usage against limits")
        await expect(usage.get_by_role("row", name="Steps")).to_contain_text("2")
        await expect(usage.get_by_role("row", name="Steps")).to_contain_text("8")
        await expect(usage.get_by_role("row", name="Tokens")).to_contain_text("462 (420 + 42)")
        calls = page.get_by_role("table", name="Calls")
        c1 = calls.locator("tr[data-call='c1']")
        c2 = calls.locator("tr[data-call='c2']")
        await expect(c1.get_by_role("cell").nth(3)).to_have_text("succeeded")
        await expect(c1.get_by_role("cell").nth(5)).to_have_text("s1")
        await expect(c2.get_by_role("cell").nth(3)).to_have_text("rejected")
        await expect(c2.get_by_role("cell").nth(4)).to_contain_text("unknown_tool")
        timeline = page.get_by_role("list", name="Timeline")
        await expect(timeline.locator("li[data-type='run.finished']")).to_have_count(1)
        await expect(page.get_by_text("The run has finished.")).to_be_visible()

        # Back to the list with the browser's own history: the filters are in the address.
        await page.go_back()
        await expect(page.get_by_label("Status")).to_have_value("finished", timeout=WAIT_MS)
        await expect(page.get_by_label("Agent")).to_have_value("tech-radar")


async def test_a_version_conflict_says_so_and_links_to_the_new_preview(console: Console) -> None:
    kafka = await row(console.h, "Kafka")
    _, preview_id = await console.park_kafka_move()
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.approver, f"/console/previews/{preview_id}")
        await page.get_by_role("button", name="Approve").click()
        await expect(page.locator("#preview-status")).to_have_text("approved", timeout=WAIT_MS)
        await moved_meanwhile(console.h, kafka["id"], "assess")
        await page.get_by_role("button", name="Commit").click()
        alert = page.get_by_role("alert")
        await expect(alert).to_contain_text("409 version-conflict", timeout=WAIT_MS)
        await expect(alert).to_contain_text("A new preview was made")
        await expect(page.locator("#preview-status")).to_have_text("superseded")
        await alert.get_by_role("link", name="Review the new preview").click()
        await expect(page.locator(".summary")).to_have_text(
            "Move Kafka from assess to adopt", timeout=WAIT_MS
        )
        await expect(page.locator("#preview-status")).to_have_text("pending")
        assert preview_id not in page.url
    assert await ledger_size(console.h) == 0


async def test_an_expired_preview_says_so_and_what_happens_next(
    unswept_console: Console,
) -> None:
    # Without a poller, the lapsed preview is not swept (and the page not refreshed to
    # "expired") before the approver's decision reaches the service.
    console = unswept_console
    _, preview_id = await console.park_kafka_move()
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.approver, f"/console/previews/{preview_id}")
        await expect(page.locator("#preview-status")).to_have_text("pending", timeout=WAIT_MS)
        # The page is whole once its heading has the focus (after its timeline is read):
        # a key pressed before that could land on the heading instead of the button.
        heading = page.get_by_role("heading", name="Preview", exact=True)
        await expect(heading).to_be_focused(timeout=WAIT_MS)
        async with console.h.runtime.sessions.begin() as session:  # its time runs out
            await session.execute(
                update(preview_table)
                .where(preview_table.c.id == preview_id)
                .values(expires_at=datetime(2000, 1, 1, tzinfo=UTC))
            )
        await page.get_by_role("button", name="Approve").focus()
        await page.keyboard.press("Enter")
        alert = page.get_by_role("alert")
        await expect(alert).to_contain_text("410", timeout=WAIT_MS)
        await expect(alert).to_contain_text("This preview expired before your decision.")
        await expect(alert).to_contain_text("Nothing to do")
    assert await ledger_size(console.h) == 0


async def test_a_key_revoked_mid_session_is_asked_to_sign_in_again(console: Console) -> None:
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.approver, "/console/tools")
        await expect(page.get_by_role("table", name="Tools")).to_be_visible(timeout=WAIT_MS)
        # Revoked by an admin (the process forgets the principal it kept at once).
        listed = await console.api.get("/v1/keys", headers=console.admin)
        [alice] = [k["id"] for k in listed.json()["items"] if k["subject"] == "alice"]
        revoked = await console.api.delete(f"/v1/keys/{alice}", headers=console.admin)
        assert revoked.status_code == 204
        await page.get_by_role("navigation").get_by_role("link", name="Runs").click()
        alert = page.get_by_role("alert")
        await expect(alert).to_contain_text("401", timeout=WAIT_MS)
        await expect(alert).to_contain_text("Sign in again")
        await alert.get_by_role("button", name="Sign in again").click()
        await expect(page.get_by_label("API key")).to_be_focused()
        assert page.url.endswith("/console/runs")  # where it goes on after signing in
        assert await page.evaluate("() => sessionStorage.length") == 0


async def test_the_stream_parser_takes_frames_split_anywhere(console: Console) -> None:
    """The console's SSE parser (sse.js), in the browser: comments, CRLF, a frame split
    across reads (even between "\\r" and "\\n"), multi-line data, an id without data."""
    chunks = [
        ": ping\n\nid: 3\r\nevent: run.fin",
        'ished\ndata: {"seq":3}\r',
        "\n\r\nid: 4\n\nid: 5\ndata: a\ndata: b\n\n",
    ]
    async with opened(console) as (_, page, _seen):
        await page.goto(f"{console.url}/console")
        frames = await page.evaluate(
            """async (chunks) => {
                const { parseFrames } = await import("/console/assets/sse.js");
                const frames = [];
                let rest = "";
                for (const chunk of chunks) rest = parseFrames(rest + chunk, (f) => frames.push(f));
                return { frames, rest };
            }""",
            chunks,
        )
    assert frames == {
        "frames": [
            {"id": "3", "event": "run.finished", "data": '{"seq":3}'},
            {"id": "4", "event": "message", "data": ""},
            {"id": "5", "event": "message", "data": "a\nb"},
        ],
        "rest": "",
    }


async def polled_until(page: Page, every_ms: int, shown: Any) -> None:
    """Moves the page's clock on by its polling interval until `shown` is visible (each
    poll's answer given a second of real time to arrive)."""
    for _ in range(15):
        await page.clock.run_for(every_ms)
        try:
            await expect(shown).to_be_visible(timeout=1_000)
            return
        except AssertionError:
            continue
    await expect(shown).to_be_visible(timeout=1)


async def test_refused_streams_fall_back_to_polling(console: Console) -> None:
    """A 429 from a stream (the service's stream limit) leaves the console working: the
    queue is read every 10 s and a run's timeline every 2 s."""
    refused: list[str] = []

    async def no_streams(route: Route) -> None:
        if "text/event-stream" not in route.request.headers.get("accept", ""):
            await route.fallback()
            return
        refused.append(route.request.url)
        await route.fulfill(
            status=429,
            headers={"Retry-After": "5", "Content-Type": "application/problem+json"},
            body='{"type": "https://toolgate.example/problems/rate-limited", "title": '
            '"Rate limited", "status": 429, "detail": "too many streams"}',
        )

    async with opened(console) as (_, page, _seen):
        await page.route("**/v1/**", no_streams)
        # The page's timers on a clock the test moves: its 10 s and 2 s polls without
        # waiting for them.
        await page.clock.install()
        await sign_in(page, console, console.approver)
        queue = page.get_by_role("table", name="Approval queue")
        await expect(
            page.get_by_text("Live updates unavailable; refreshing every 10 s.")
        ).to_be_visible(timeout=WAIT_MS)
        run_id, preview_id = await console.park_kafka_move(delay_ms=500)
        summary = queue.get_by_role("link", name="Move Kafka from trial to adopt")
        await polled_until(page, 10_000, summary)

        await page.goto(f"{console.url}/console/runs/{run_id}")
        timeline = page.get_by_role("list", name="Timeline")
        await expect(timeline.locator("li[data-type='call.awaiting_approval']")).to_have_count(
            1, timeout=WAIT_MS
        )
        await expect(
            page.get_by_text("Live updates unavailable; checking every 2 s.")
        ).to_be_visible(timeout=WAIT_MS)
        preview = (
            await console.api.get(f"/v1/previews/{preview_id}", headers=console.approver)
        ).json()
        approved = await console.api.post(
            f"/v1/previews/{preview_id}/approve",
            headers=console.approver,
            json={"content_hash": preview["content_hash"]},
        )
        assert approved.status_code == 200
        committed = await console.api.post(
            f"/v1/previews/{preview_id}/commit",
            headers={**console.approver, "Idempotency-Key": "fallback-1"},
            json={"wait_s": 0},
        )
        assert committed.status_code == 200, committed.text
        await polled_until(page, 2_000, timeline.locator("li[data-type='run.finished']"))
        await expect(page.locator("#run-status")).to_have_text("finished", timeout=WAIT_MS)
    assert any("/v1/events" in url for url in refused)
    assert any(f"/v1/runs/{run_id}/events" in url for url in refused)


async def test_the_status_filters_offer_the_served_enums(console: Console) -> None:
    """The queue's and the runs' filters list the statuses of the served OpenAPI document
    (from the generated schema.js), in its order."""
    schemas = (await console.api.get("/openapi.json")).json()["components"]["schemas"]
    values = "options => options.map((o) => o.value)"
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.approver)
        await expect(page.get_by_role("table", name="Approval queue")).to_be_visible(
            timeout=WAIT_MS
        )
        queue = await page.get_by_label("Status").locator("option").evaluate_all(values)
        assert queue == schemas["PreviewStatus"]["enum"]
        await page.get_by_role("navigation").get_by_role("link", name="Runs").click()
        await expect(page.get_by_role("table", name="Runs")).to_be_visible(timeout=WAIT_MS)
        runs = await page.get_by_label("Status").locator("option").evaluate_all(values)
        assert runs == ["", *schemas["RunStatus"]["enum"]]


async def test_problems_are_explained_by_their_code_and_members_not_their_detail(
    console: Console,
) -> None:
    """explain.js, in the browser: the same detail text ("the run's creator may not
    approve its calls") means a self-approval only when the preview is the key's own, and
    a version conflict links to the new preview only when `new_preview_id` names one."""
    async with opened(console) as (_, page, _seen):
        await page.goto(f"{console.url}/console")
        words = await page.evaluate(
            """async () => {
                const { Problem } = await import("/console/assets/api.js");
                const { explain } = await import("/console/assets/explain.js");
                const me = { tenant: "acme", subject: "alice", roles: ["approver"], scopes: null };
                const theirs = { requested_by: "svc-shop", run_id: "run_1" };
                const own = { requested_by: "alice", run_id: "run_1" };
                const problem = (code, status, extra = {}) => new Problem({
                    type: `https://toolgate.example/problems/${code}`,
                    code,
                    title: code,
                    detail: "the run's creator may not approve its calls",
                    ...extra,
                }, status);
                const approving = (preview) => ({ action: "approve", preview, me });
                const committing = { action: "commit", preview: theirs, me };
                return {
                    theirs: explain(problem("forbidden", 403), approving(theirs)).what,
                    own: explain(problem("forbidden", 403), approving(own)).what,
                    renamed: explain(problem("invalid-state", 409), approving(own)).what,
                    superseded: explain(
                        problem("version-conflict", 409, { new_preview_id: "prv_2" }),
                        committing,
                    ).links,
                    failed: explain(problem("version-conflict", 409), committing).links,
                };
            }"""
        )
    assert words["theirs"] == (
        "Your key may not do this (the run's creator may not approve its calls)."
    )
    assert words["own"] == "You created this run, so you may not approve its calls."
    assert words["renamed"].startswith("This cannot be done in the current state")
    assert words["superseded"] == [["/console/previews/prv_2", "Review the new preview"]]
    assert words["failed"] == [["/console/runs/run_1", "Open the run"]]


async def test_a_console_page_asks_for_nothing_it_does_not_get_and_shows_its_icon(
    console: Console,
) -> None:
    async with opened(console) as (_, page, _seen):
        failed: list[str] = []
        logged: list[str] = []
        page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
        page.on("console", lambda message: logged.append(message.text))
        await page.goto(f"{console.url}/console")
        await expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=WAIT_MS)
        icon = await page.evaluate(
            """async () => {
                const link = document.querySelector('link[rel="icon"]');
                const answer = await fetch(link.href);
                return [answer.status, answer.headers.get('content-type')];
            }"""
        )
        assert icon == [200, "image/svg+xml"]
        assert failed == []
        assert not [text for text in logged if "404" in text or "Failed to load" in text]


#: The preview reads started and finished (`window.fetch`, read to its end).
_COUNT_PREVIEW_READS = """
window.previewReads = { started: 0, done: 0 };
const fetched = window.fetch;
window.fetch = async (...args) => {
  const preview = new URL(String(args[0]), location.href).pathname.startsWith("/v1/previews/");
  if (preview) window.previewReads.started += 1;
  const response = await fetched(...args);
  if (!preview) return response;
  const text = response.text.bind(response);
  response.text = async () => {
    try {
      return await text();
    } finally {
      window.previewReads.done += 1;
    }
  };
  return response;
};
"""


async def test_a_preview_page_reloaded_without_a_change_keeps_what_it_shows(
    console: Console,
) -> None:
    # Rejected, the run goes on to its final answer 1.5 s later; that run.finished reloads
    # the preview, unchanged: drawn again, its run link would lose a click under way.
    _, preview_id = await console.park_kafka_move(delay_ms=1500)
    async with opened(console) as (_, page, _seen):
        await page.add_init_script(counting_removed_facts("rejected"))
        await page.add_init_script(_COUNT_PREVIEW_READS)
        await sign_in(page, console, console.approver, f"/console/previews/{preview_id}")
        await expect(page.locator("#preview-status")).to_have_text("pending", timeout=WAIT_MS)
        rejected = await console.api.post(
            f"/v1/previews/{preview_id}/reject", headers=console.approver, json={"reason": "no"}
        )
        assert rejected.status_code == 200, rejected.text
        await expect(page.locator("#preview-status")).to_have_text("rejected", timeout=WAIT_MS)
        timeline = page.get_by_role("list", name="Timeline")
        await expect(timeline).to_contain_text("run.finished", timeout=WAIT_MS)

        # The reload run.finished started (with the event's row) has been read and drawn.
        # Polled from here: a string predicate that Playwright polls in the page is eval'd
        # there, which the console's CSP (script-src 'self') refuses.
        async def all_read() -> bool:
            return bool(
                await page.evaluate("window.previewReads.done === window.previewReads.started")
            )

        await until(all_read, timeout_s=WAIT_MS / 1000, what="the preview's reads drawn")
        reads = await page.evaluate("window.previewReads.started")
        assert reads >= 3  # the first, the rejection's, and run.finished's
        assert await page.evaluate("window.factsRemoved") == 0


async def test_a_preview_says_what_the_run_was_asked_and_by_which_agent(console: Console) -> None:
    """What an approver needs to decide is why the call is asked: the run's input, and
    the calls that led to it."""
    kafka = await row(console.h, "Kafka")
    run = await console.parked_run(
        tool_calls(("c0", "search_technologies", {"query": "kafka"})),
        tool_calls(("c1", "nowhere", {})),
        tool_calls(move(kafka["id"], call_id="c2")),
        final("Kafka is now in adopt [source:s1]"),
    )
    preview_id = run["pending_approvals"][0]["preview_id"]
    async with opened(console) as (_, page, _seen):
        await sign_in(page, console, console.approver, f"/console/previews/{preview_id}")
        asked = page.locator("section.asked")
        await expect(asked).to_contain_text("The agent tech-radar was asked:", timeout=WAIT_MS)
        await expect(page.locator("#run-input")).to_have_text("Which databases are in adopt?")
        await expect(asked.locator("ol.led-here li")).to_have_text(
            [
                "step 1: search_technologies — succeeded",
                "step 2: nowhere — rejected (unknown_tool)",
            ]
        )
        # The timeline reads as sentences, each raw event one click away.
        succeeded = page.locator("ol.timeline li[data-type='call.succeeded']")
        await expect(succeeded.locator(".event-sentence")).to_have_text(
            re.compile(r"^Call c0( \(search_technologies\))? succeeded\.$")
        )
        refused = page.locator("ol.timeline li[data-type='call.rejected'] .event-sentence")
        await expect(refused).to_contain_text("Call c1")
        await expect(refused).to_contain_text("was refused: unknown_tool.")
        raw = succeeded.locator("details .event-data")
        await expect(raw).to_be_hidden()
        await succeeded.locator("summary").click()
        await expect(raw).to_contain_text("call_id: c0")
