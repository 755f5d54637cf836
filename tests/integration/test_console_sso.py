"""The console's "Sign in with SSO" in a real browser (Debian's Chromium; every host but the
service and the provider blocked), against a real OpenID Connect provider on loopback: the
authorization code flow with PKCE (S256), a server-side session in an HttpOnly, SameSite
cookie that no page script can read, CSRF tokens on every change, who is signed in,
sign-out, an expired session asking to sign in again, and the refusals said in words."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, expect
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from app.config.settings import Settings
from app.db.access.session_tables import console_session
from app.engine.access import sso as sso_engine
from tests.support.approvals import WRITER, move, row
from tests.support.browser import browsing
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import Harness, make_config, serving
from tests.support.oidc_issuer import AUDIENCE
from tests.support.oidc_provider import Provider, providing

WAIT_MS = 20_000
SECRET_ENV = "TG_TEST_SSO_SECRET"
CLIENT = "toolgate-console"


@dataclass
class Sso:
    url: str
    h: Harness
    op: Provider


def _config(issuer: str) -> Any:
    return parse_config(
        {
            "models": {"scripted": {"provider": "scripted"}},
            "agents": {"tech-radar": WRITER},
            "auth": {
                "oidc": {
                    "issuer": issuer,
                    "audience": AUDIENCE,
                    "tenant": "acme",
                    "roles": {"approvers": ["approver"]},
                    "client_id": CLIENT,
                    "client_secret_env": SECRET_ENV,
                }
            },
        },
        builtin_tools=SPECS,
    )


@asynccontextmanager
async def _served(settings: Settings, lifetime_s: float = 300) -> AsyncIterator[Sso]:
    async with providing(token_lifetime_s=lifetime_s) as op:
        config = _config(op.issuer)
        async with serving(settings, config) as (url, h):
            await seed_radar(h)
            op.client(
                CLIENT,
                "s3cret",
                redirect_uris=[f"{url}/console/sso/callback"],
                post_logout_redirect_uris=[f"{url}/console"],
            )
            op.user("alice", roles=["approvers"], name="Alice Doe", email="alice@example.com")
            op.user("mallory", roles=["visitors"], name="Mallory")
            yield Sso(url, h, op)


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "s3cret")


async def _sign_in(page: Page, sso: Sso, who: str, path: str = "/console") -> None:
    await page.goto(f"{sso.url}{path}")
    await page.get_by_role("link", name="Sign in with SSO").click()
    await page.get_by_role("button", name=f"Sign in as {who}").click()


async def _parked(sso: Sso) -> str:
    caller = await sso.h.key(subject="svc-shop", roles="caller")
    kafka = await row(sso.h, "Kafka")
    body = run_body(tool_calls(move(kafka["id"])), final("ok"))
    answer = await sso.h.client.post(
        "/v1/runs", headers={**caller, "Idempotency-Key": "sso-1"}, json=body
    )
    assert answer.status_code == 201 and answer.json()["status"] == "awaiting_approval"
    return answer.json()["pending_approvals"][0]["preview_id"]


async def _sessions(sso: Sso) -> int:
    async with sso.h.runtime.sessions() as session:
        count = select(func.count()).select_from(console_session)
        return int((await session.execute(count)).scalar_one())


async def test_a_person_signs_in_with_sso_approves_and_signs_out(
    db: AsyncEngine, settings: Settings
) -> None:
    async with _served(settings) as sso:
        preview_id = await _parked(sso)
        path = f"/console/previews/{preview_id}"
        async with browsing(sso.url, sso.op.url) as (context, blocked):
            page = await context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            callbacks: list[str] = []
            page.on(
                "request",
                lambda r: callbacks.append(r.url) if "/console/sso/callback" in r.url else None,
            )
            await _sign_in(page, sso, "Alice Doe", path)

            # Back where the person started, signed in as that person.
            await expect(page).to_have_url(f"{sso.url}{path}", timeout=WAIT_MS)
            await expect(page.locator("#who")).to_contain_text("Alice Doe", timeout=WAIT_MS)
            await expect(page.locator("#who")).to_contain_text("alice")

            # No token, nor the session's id, is readable by page scripts.
            stored = await page.evaluate(
                "() => JSON.stringify([document.cookie, {...sessionStorage}, {...localStorage}])"
            )
            assert "tg_session" not in stored and "eyJ" not in stored, stored
            [cookie] = [c for c in await context.cookies() if c["name"] == "tg_session"]
            assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"

            # PKCE: the challenge went to the provider, the verifier only to its token endpoint.
            [asked] = sso.op.authorize_requests
            assert asked["code_challenge_method"] == "S256" and "code_verifier" not in asked
            assert sso.op.last_token_request["code_verifier"]

            await page.get_by_role("button", name="Approve").click()
            await expect(page.locator("#preview-status")).to_have_text("approved", timeout=WAIT_MS)
            preview = await sso.h.client.get(
                f"/v1/previews/{preview_id}", headers=await sso.h.key(roles="approver")
            )
            assert preview.json()["decided_by"] == "alice"

            # The cookie alone changes nothing: every change needs the session's CSRF token.
            jar = {"tg_session": cookie["value"]}
            async with httpx.AsyncClient(base_url=sso.url, cookies=jar) as raw:
                assert (await raw.get("/v1/me")).json()["subject"] == "alice"
                forged = await raw.post(f"/v1/previews/{preview_id}/reject", json={"reason": "x"})
                assert forged.status_code == 403 and forged.json()["code"] == "forbidden"

            assert await _sessions(sso) == 1
            # The provider's answer is used once: sent again, it opens nothing.
            async with httpx.AsyncClient() as raw:
                replayed = await raw.get(callbacks[0])
            assert replayed.headers["location"] == "/console?sso=expired"
            assert await _sessions(sso) == 1
            await page.get_by_role("button", name="Sign out").click()
            await expect(page.get_by_role("link", name="Sign in with SSO")).to_be_visible(
                timeout=WAIT_MS
            )
            assert await _sessions(sso) == 0 and sso.op.logouts
            async with httpx.AsyncClient(base_url=sso.url, cookies=jar) as raw:
                assert (await raw.get("/v1/me")).status_code == 401
            assert errors == [] and blocked == []


async def test_an_expired_session_asks_to_sign_in_again(
    db: AsyncEngine, settings: Settings
) -> None:
    async with (
        _served(settings, lifetime_s=3) as sso,
        browsing(sso.url, sso.op.url) as (context, blocked),
    ):
        page = await context.new_page()
        await _sign_in(page, sso, "Alice Doe", "/console/runs")
        await expect(page.locator("#who")).to_contain_text("Alice Doe", timeout=WAIT_MS)
        [cookie] = [c for c in await context.cookies() if c["name"] == "tg_session"]
        async with httpx.AsyncClient(
            base_url=sso.url, cookies={"tg_session": cookie["value"]}
        ) as raw:
            for _ in range(100):  # the token's three seconds, polled
                if (await raw.get("/v1/me")).status_code == 401:
                    break
                await page.wait_for_timeout(100)
            else:
                raise AssertionError("the session outlived its token")
        await page.reload()
        await expect(page.get_by_role("link", name="Sign in with SSO")).to_be_visible(
            timeout=WAIT_MS
        )
        assert blocked == []


async def test_someone_elses_sign_in_brought_to_a_browser_opens_nothing(
    db: AsyncEngine, settings: Settings
) -> None:
    """Login CSRF: Mallory begins a sign-in, stops before its callback, and sends it to
    Alice; Alice's browser did not begin it, so it is refused, and nobody is signed in."""
    async with (
        _served(settings) as sso,
        browsing(sso.url, sso.op.url) as (context, blocked),
        httpx.AsyncClient(base_url=sso.url) as mallory,
    ):
        begun = await mallory.get("/console/sso/start")
        assert begun.status_code == 303 and "tg_login" in mallory.cookies
        form = await mallory.get(begun.headers["location"])
        fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', form.text))
        fields = {k: html.unescape(v) for k, v in fields.items()}
        chosen = await mallory.post(
            begun.headers["location"].split("?")[0], data={**fields, "user": "mallory"}
        )
        callback = chosen.headers["location"]
        assert "/console/sso/callback?code=" in callback
        page = await context.new_page()
        await page.goto(callback)
        await expect(page.get_by_role("alert")).to_contain_text(
            "begun in another browser", timeout=WAIT_MS
        )
        assert await _sessions(sso) == 0 and blocked == []


async def test_sso_off_and_a_bad_csrf_header_are_answered_not_crashed(
    db: AsyncEngine, settings: Settings
) -> None:
    async with (
        serving(settings, make_config({"tech-radar": WRITER})) as (url, _h),
        httpx.AsyncClient(base_url=url) as raw,
    ):
        for path in ("/console/sso/start", "/console/sso/callback?code=a&state=b"):
            off = await raw.get(path)
            assert off.status_code == 303 and off.headers["location"] == "/console?sso=off"
        answer = (await raw.get("/console/sso/session")).json()
        assert answer == {"enabled": False, "session": None}
    async with _served(settings) as sso, httpx.AsyncClient(base_url=sso.url) as raw:
        now = sso.h.runtime.clock.now()
        async with sso.h.runtime.sessions.begin() as session:
            await session.execute(
                console_session.insert().values(
                    id_hash=sso_engine._hash("a-cookie"),
                    tenant_id="acme",
                    subject="alice",
                    roles=["approver"],
                    csrf_token="the-token",
                    created_at=now,
                    expires_at=now + timedelta(hours=1),
                )
            )
        raw.cookies.set("tg_session", "a-cookie")
        for token in (b"\xe9", b"wrong"):
            odd = await raw.post("/console/sso/sign-out", headers={"X-CSRF-Token": token})
            assert odd.status_code == 403 and odd.json()["code"] == "forbidden", token
            api = await raw.post(
                "/v1/tools/search_technologies/disable", headers={"X-CSRF-Token": token}
            )
            assert api.status_code == 403, token
        assert (await raw.get("/v1/me")).json()["subject"] == "alice"


async def test_refusals_are_said_and_open_no_session(db: AsyncEngine, settings: Settings) -> None:
    async with (
        _served(settings) as sso,
        browsing(sso.url, sso.op.url) as (context, blocked),
    ):
        page = await context.new_page()
        await _sign_in(page, sso, "Mallory")  # verifies, but no role here
        await expect(page.get_by_role("alert")).to_contain_text("no role", timeout=WAIT_MS)
        sso.op.decline = True
        await _sign_in(page, sso, "Alice Doe")
        await expect(page.get_by_role("alert")).to_contain_text("declined", timeout=WAIT_MS)
        assert blocked == []
        async with httpx.AsyncClient(base_url=sso.url) as raw:
            forged = await raw.get("/console/sso/callback?code=abc&state=made-up")
            assert (
                forged.status_code == 303 and forged.headers["location"] == "/console?sso=expired"
            )
            away = await raw.get("/console/sso/start?next=https://evil.example/")
            assert away.status_code == 303 and away.headers["location"].startswith(sso.op.url)
        assert await _sessions(sso) == 0
