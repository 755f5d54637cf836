"""The console's "Sign in with SSO" (SPEC §3.9): the browser's trip to the identity
provider and back, the session it opens, and sign-out. Browser addresses under
`/console/sso/`, not part of the API document; the API itself takes the session's cookie
as it takes a key (`deps.get_principal`), with a CSRF token on every unsafe request."""

from __future__ import annotations

import secrets
from typing import Annotated, Any
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Header, Query, Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.api.deps import RuntimeDep
from app.api.problems import ProblemError
from app.api.routes.console import HEADERS
from app.config.auth_configs import loopback
from app.engine.access import sso
from app.engine.process.runtime import Runtime

router = APIRouter(include_in_schema=False)

_NO_STORE = {**HEADERS, "Cache-Control": "no-store"}
Param = Annotated[str | None, Query(max_length=2048)]


def _base(rt: Runtime, request: Request) -> str:
    return (rt.settings.public_url or str(request.base_url)).rstrip("/")


def _redirect_uri(rt: Runtime, request: Request) -> str:
    """Where the provider sends the person back: the configured `redirect_uri`, else the
    service's public URL's (or this request's) `/console/sso/callback`."""
    assert rt.oidc is not None
    configured = rt.oidc.config.redirect_uri
    return configured or f"{_base(rt, request)}/console/sso/callback"


def _console_path(path: str | None) -> str:
    """A console page to come back to; anything else (another host, a scheme) is the queue."""
    ok = (
        path is not None
        and path.startswith("/console")
        and not path.startswith("//")
        and "\\" not in path
        and path.isprintable()
        and not path.startswith("/console/sso")
    )
    return path if ok and path is not None else "/console"


def _back(reason: str) -> RedirectResponse:
    """The console's sign-in page, saying why the sign-in did not work (a word of ours,
    never the provider's text)."""
    return RedirectResponse(f"/console?sso={reason}", status_code=303, headers=_NO_STORE)


def _secure(rt: Runtime, request: Request) -> bool:
    """Cookies are `Secure` unless the console is served over plain http on loopback (a
    developer's machine): behind a TLS proxy the browser sees https, whatever this hop is."""
    parts = urlsplit(_base(rt, request))
    return not (parts.scheme == "http" and loopback(parts.hostname or ""))


def _enabled(rt: Runtime) -> bool:
    return rt.oidc is not None and rt.oidc.config.client_id is not None


@router.get("/console/sso/start")
async def sso_start(rt: RuntimeDep, request: Request, next: Param = None) -> Response:  # noqa: A002
    if not _enabled(rt):
        return _back("off")
    try:
        made = await sso.start(
            rt, redirect_uri=_redirect_uri(rt, request), next_path=_console_path(next)
        )
    except sso.SignInRefused as refused:
        return _back(refused.reason)
    answer = RedirectResponse(made.url, status_code=303, headers=_NO_STORE)
    # Lax: sent on the provider's top-level redirect back, and only to the callback.
    answer.set_cookie(
        sso.LOGIN_COOKIE,
        made.browser,
        max_age=sso.LOGIN_S,
        path="/console/sso/callback",
        secure=_secure(rt, request),
        httponly=True,
        samesite="lax",
    )
    return answer


@router.get("/console/sso/callback")
async def sso_callback(
    rt: RuntimeDep, request: Request, code: Param = None, state: Param = None, error: Param = None
) -> Response:
    if not _enabled(rt):
        return _back("off")
    if error is not None:
        return _back("denied")
    if not code or not state:
        return _back("expired")
    browser = request.cookies.get(sso.LOGIN_COOKIE, "")
    try:
        back = _redirect_uri(rt, request)
        signed = await sso.finish(rt, code=code, state=state, browser=browser, redirect_uri=back)
    except sso.SignInRefused as refused:
        return _ended_login(_back(refused.reason))
    # A session this browser held before ends: one browser, one session.
    await sso.sign_out_quietly(rt, request.cookies.get(sso.COOKIE, ""))
    answer = RedirectResponse(signed.next_path, status_code=303, headers=_NO_STORE)
    answer.set_cookie(
        sso.COOKIE,
        signed.cookie,
        expires=signed.session.expires_at,
        path="/",
        secure=_secure(rt, request),
        httponly=True,
        samesite="strict",
    )
    return _ended_login(answer)


def _ended_login(answer: Response) -> Response:
    answer.delete_cookie(sso.LOGIN_COOKIE, path="/console/sso/callback", httponly=True)
    return answer


@router.get("/console/sso/session")
async def sso_session(rt: RuntimeDep, request: Request) -> JSONResponse:
    """Whether SSO is offered, and the signed-in person's session (with its CSRF token,
    which only this origin's pages can read), or null."""
    enabled = _enabled(rt)
    found = await sso.session_of(rt, request.cookies.get(sso.COOKIE, "")) if enabled else None
    shown: dict[str, Any] | None = None
    if found is not None:
        shown = {
            "tenant": found.tenant_id,
            "subject": found.subject,
            "name": found.name,
            "roles": found.roles,
            "scopes": found.scopes,
            "expires_at": found.expires_at.isoformat(),
            "csrf_token": found.csrf_token,
        }
    return JSONResponse({"enabled": enabled, "session": shown}, headers=_NO_STORE)


@router.post("/console/sso/sign-out")
async def sso_sign_out(
    rt: RuntimeDep,
    request: Request,
    csrf: Annotated[str | None, Header(alias=sso.CSRF_HEADER)] = None,
) -> JSONResponse:
    """Ends the session (its CSRF token required) and clears its cookie; answers the
    provider's end-session address, for the console to end the provider's session too."""
    cookie = request.cookies.get(sso.COOKIE, "")
    found = await sso.session_of(rt, cookie)
    if found is None:
        raise ProblemError("unauthenticated", "no session to sign out of", headers=_NO_STORE)
    if csrf is None or not secrets.compare_digest(csrf.encode(), found.csrf_token.encode()):
        raise ProblemError(
            "forbidden", f"send the session's CSRF token as {sso.CSRF_HEADER}", headers=_NO_STORE
        )
    end_session = await sso.sign_out(rt, cookie)
    if end_session is not None:  # the provider's session ends too, and it sends them back
        assert rt.oidc is not None
        back = {
            "client_id": rt.oidc.config.client_id,
            "post_logout_redirect_uri": f"{_base(rt, request)}/console",
        }
        joiner = "&" if "?" in end_session else "?"
        end_session = f"{end_session}{joiner}{urlencode(back)}"
    answer = JSONResponse({"end_session_url": end_session}, headers=_NO_STORE)
    answer.delete_cookie(sso.COOKIE, path="/", httponly=True, samesite="strict")
    return answer
