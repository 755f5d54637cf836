"""The console's sign-in through the identity provider (SPEC §3.9): the authorization code
flow with PKCE (S256), and the server-side session it opens.

`start` keeps a login (its PKCE verifier and nonce, by the hash of its `state`) in the
database, so that the provider may send the person back to any replica, and answers where
to send the browser. `finish` takes that login once, exchanges the code (with the
verifier, the client's secret when it has one), checks the id token (signature, issuer,
audience = the client, nonce) and the access token as any token is checked, and opens a
session: a random id in an HttpOnly, SameSite cookie, stored only as its hash beside the
principal the token named, a CSRF token, and the token's expiry, which ends it. No token
is kept, shown to the page, or logged."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import httpx

from app.db.access import console_sessions
from app.db.access.console_sessions import Login, Session
from app.db.session import retrying
from app.domain.errors import ToolgateError
from app.domain.tools.specs import Principal
from app.engine.access.oidc import OidcVerifier

if TYPE_CHECKING:  # the runtime's own modules import this one: no cycle at run time
    from app.engine.process.runtime import Runtime

log = logging.getLogger(__name__)

#: The session cookie's name, and the one that binds a sign-in under way to its browser.
COOKIE = "tg_session"
LOGIN_COOKIE = "tg_login"
#: The header an unsafe request signed in by the cookie sends its session's CSRF token in.
CSRF_HEADER = "X-CSRF-Token"
#: How long a sign-in may take at the provider.
LOGIN_S = 600
#: The longest session, whatever its token says.
MOST_SESSION = timedelta(hours=12)
EXCHANGE_TIMEOUT_S = 10.0


class SignInRefused(ToolgateError):
    """Why a sign-in did not open a session, as a word the console explains: `denied` (at
    the provider), `expired` (the login is unknown, used or too old), `exchange` (the
    provider did not give tokens for the code), `invalid` (a token did not verify),
    `no-role` (the token grants no role here)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class SignedIn:
    cookie: str
    session: Session
    next_path: str


def _hash(value: str) -> str:
    return "sha256:" + hashlib.sha256(value.encode()).hexdigest()


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _oidc(rt: Runtime) -> OidcVerifier:
    oidc = rt.oidc
    if oidc is None or oidc.config.client_id is None:
        raise SignInRefused("off")
    return oidc


@dataclass(frozen=True)
class Started:
    """Where to send the browser, and the cookie that binds the sign-in to it."""

    url: str
    browser: str


async def start(rt: Runtime, *, redirect_uri: str, next_path: str) -> Started:
    """The provider's authorization endpoint, asked for a code bound to a new login's
    `state`, nonce and PKCE challenge, and to this browser (`Started.browser`, a cookie:
    a callback another browser brings — someone else's sign-in — opens nothing)."""
    oidc = _oidc(rt)
    endpoint = await oidc.endpoint("authorization_endpoint")
    if endpoint is None:
        raise SignInRefused("exchange")
    state, nonce, browser = (secrets.token_urlsafe(n) for n in (32, 24, 32))
    verifier = secrets.token_urlsafe(64)  # 86 characters, within RFC 7636's 43..128
    now = rt.clock.now()
    expires = now + timedelta(seconds=LOGIN_S)
    login = Login(_hash(state), verifier, nonce, _hash(browser), next_path, expires)
    async with rt.sessions.begin() as session:
        await console_sessions.begin_login(session, login, now)
    config = oidc.config
    query = {
        "response_type": "code",
        "client_id": config.client_id,
        "redirect_uri": redirect_uri,
        "scope": " ".join(config.scopes),
        "state": state,
        "nonce": nonce,
        "code_challenge": _challenge(verifier),
        "code_challenge_method": "S256",
    }
    return Started(f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}", browser)


async def finish(
    rt: Runtime, *, code: str, state: str, browser: str, redirect_uri: str
) -> SignedIn:
    """The session the provider's answer opens, in the browser that began the sign-in;
    SignInRefused says why not."""
    oidc = _oidc(rt)
    async with rt.sessions.begin() as session:
        login = await console_sessions.take_login(session, _hash(state), rt.clock.now())
    if login is None:
        raise SignInRefused("expired")
    if not secrets.compare_digest(login.browser_hash.encode(), _hash(browser).encode()):
        raise SignInRefused("browser")  # someone else's sign-in, brought here: refused
    tokens = await _exchange(oidc, code=code, verifier=login.verifier, redirect_uri=redirect_uri)
    id_claims = await oidc.claims(str(tokens.get("id_token", "")), oidc.config.client_id or "")
    if id_claims is None or id_claims.get("nonce") != login.nonce:
        raise SignInRefused("invalid")
    access = str(tokens.get("access_token", ""))
    claims = await oidc.claims(access, oidc.config.audience)
    principal = None if claims is None else oidc.principal_of(claims)
    if claims is None or principal is None:
        raise SignInRefused("invalid")
    if not principal.roles:
        raise SignInRefused("no-role")
    return await _opened(rt, principal, claims, id_claims, login.next_path)


async def _opened(
    rt: Runtime,
    principal: Principal,
    claims: dict[str, Any],
    id_claims: dict[str, Any],
    next_path: str,
) -> SignedIn:
    now = rt.clock.now()
    expires = min(datetime.fromtimestamp(int(claims["exp"]), UTC), now + MOST_SESSION)
    name = id_claims.get("name") or id_claims.get("email")
    cookie = secrets.token_urlsafe(32)
    made = Session(
        id_hash=_hash(cookie),
        tenant_id=principal.tenant_id,
        subject=principal.subject,
        roles=sorted(principal.roles),
        scopes=None if principal.scopes is None else sorted(principal.scopes),
        name=name[:200] if isinstance(name, str) and name.isprintable() else None,
        csrf_token=secrets.token_urlsafe(32),
        created_at=now,
        expires_at=expires,
    )
    async with rt.sessions.begin() as session:
        await console_sessions.start_session(session, made)
    return SignedIn(cookie, made, next_path)


async def _exchange(
    oidc: OidcVerifier, *, code: str, verifier: str, redirect_uri: str
) -> dict[str, Any]:
    """The provider's tokens for `code` (client_secret_basic when the client has a
    secret, else a public client's `client_id` in the form)."""
    config = oidc.config
    endpoint = await oidc.endpoint("token_endpoint")
    if endpoint is None:
        raise SignInRefused("exchange")
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }
    secret = os.environ.get(config.client_secret_env) if config.client_secret_env else None
    auth = None
    if secret:
        auth = httpx.BasicAuth(config.client_id or "", secret)
    else:
        form["client_id"] = config.client_id or ""
    try:
        answer = await oidc.http.post(endpoint, data=form, auth=auth, timeout=EXCHANGE_TIMEOUT_S)
        answer.raise_for_status()
        tokens = answer.json()
    except (httpx.HTTPError, ValueError) as exc:
        log.warning("the identity provider gave no tokens for a code (%s)", type(exc).__name__)
        raise SignInRefused("exchange") from None
    if not isinstance(tokens, dict):
        raise SignInRefused("exchange")
    return tokens


async def session_of(rt: Runtime, cookie: str) -> Session | None:
    """The session this cookie opens, while it has not expired."""
    if not cookie or len(cookie) > 100:
        return None
    return await retrying(rt.reads, console_sessions.find, _hash(cookie), rt.clock.now())


async def sign_out_quietly(rt: Runtime, cookie: str) -> None:
    """Ends the session this cookie names, if any (a browser signing in again)."""
    if cookie and len(cookie) <= 100:
        async with rt.sessions.begin() as session:
            await console_sessions.end(session, _hash(cookie))


async def sign_out(rt: Runtime, cookie: str) -> str | None:
    """Ends the session; answers the provider's end-session address, when it has one."""
    async with rt.sessions.begin() as session:
        await console_sessions.end(session, _hash(cookie))
    oidc = rt.oidc
    return None if oidc is None else await oidc.endpoint("end_session_endpoint")


def principal_of(session: Session) -> Principal:
    return Principal(
        tenant_id=session.tenant_id,
        subject=session.subject,
        roles=frozenset(session.roles),
        scopes=None if session.scopes is None else frozenset(session.scopes),
    )
