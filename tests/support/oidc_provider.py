"""An OpenID Connect provider on loopback, for the console's sign-in tests: the
authorization code flow with PKCE (S256 only, and required), a plain HTML sign-in page a
browser test clicks through, a token endpoint that checks what a real one checks, and
RP-initiated logout. Its keys, JWKS and token minting are the `Issuer`'s, so the access
tokens it issues verify against the service's own verifier like any issuer's.

Deliberately left out: provider sessions (every `/authorize` shows the page), `prompt`,
refresh tokens, userinfo, public clients."""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import re
import secrets
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit, urlunsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.support.backend import serving_app
from tests.support.oidc_issuer import AUDIENCE, Issuer

CODE_LIFETIME_S = 60.0
#: RFC 7636 §4.1, §4.2: a verifier, and so an S256 challenge, is 43-128 unreserved chars.
PKCE_TEXT = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
#: What the sign-in page carries from the authorization request to the person's answer.
OAUTH_PARAMS = ("response_type", "client_id", "redirect_uri", "scope", "state", "nonce")
AUTHORIZE_PARAMS = (*OAUTH_PARAMS, "code_challenge", "code_challenge_method")
#: The user's claims the ID token repeats (the access token carries them all).
PROFILE_CLAIMS = ("name", "email", "email_verified", "preferred_username")
#: Names `Issuer.token` takes as its own arguments: a claim so named would never be a claim.
RESERVED = frozenset({"kid", "key", "algorithm", "lifetime_s"})
#: RFC 6749 §5.1: nothing on the way may keep a token response.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: the S256 challenge a verifier answers."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def pkce_pair() -> tuple[str, str]:
    """A fresh (code_verifier, code_challenge), as a client makes one per sign-in."""
    verifier = secrets.token_urlsafe(48)
    return verifier, s256(verifier)


@dataclass(frozen=True)
class Client:
    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    post_logout_redirect_uris: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuthRequest:
    """An authorization request that passed every check: what a code gets bound to."""

    client: Client
    redirect_uri: str
    scope: str
    state: str | None
    nonce: str | None
    code_challenge: str


@dataclass(frozen=True)
class Grant:
    request: AuthRequest
    subject: str
    issued_at: float  # time.monotonic(): a test moving the wall clock does not age codes
    auth_time: int


@dataclass
class Provider:
    #: The keys (kid `k1`), the JWKS (and its fetch count) and the minting.
    signer: Issuer
    audience: str = AUDIENCE
    token_lifetime_s: float = 300
    code_lifetime_s: float = CODE_LIFETIME_S
    kid: str = "k1"
    #: Set by a test: the person declines, and the client gets `access_denied`.
    decline: bool = False
    clients: dict[str, Client] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What a test asserts on: each request as received, in order.
    authorize_requests: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    logouts: list[dict[str, str]] = field(default_factory=list)
    codes_issued: int = 0
    tokens_issued: int = 0
    #: Each refused token request's error and why (`invalid_grant: code already used`).
    token_refusals: list[str] = field(default_factory=list)
    _codes: dict[str, Grant] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.signer.url

    @property
    def issuer(self) -> str:
        return self.signer.issuer

    @property
    def last_token_request(self) -> dict[str, str]:
        return self.token_requests[-1]

    def client(
        self,
        client_id: str,
        client_secret: str,
        redirect_uris: Iterable[str],
        post_logout_redirect_uris: Iterable[str] = (),
    ) -> Client:
        registered = Client(
            client_id, client_secret, tuple(redirect_uris), tuple(post_logout_redirect_uris)
        )
        self.clients[client_id] = registered
        return registered

    def user(self, subject: str, /, **claims: Any) -> None:
        """A person who can sign in; `claims` go into the access token as they are."""
        if RESERVED & claims.keys():
            raise ValueError(f"claims cannot be named {sorted(RESERVED & claims.keys())}")
        self.users[subject] = claims

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self._discovery),
                Route("/jwks", self.signer._jwks),
                Route("/authorize", self._sign_in_page, methods=["GET"]),
                Route("/authorize", self._signed_in, methods=["POST"]),
                Route("/token", self._token, methods=["POST"]),
                Route("/logout", self._logout, methods=["GET"]),
            ]
        )

    async def _discovery(self, request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.url}/authorize",
                "token_endpoint": f"{self.url}/token",
                "jwks_uri": f"{self.url}/jwks",
                "end_session_endpoint": f"{self.url}/logout",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "scopes_supported": ["openid", "profile", "email"],
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code"],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_basic",
                    "client_secret_post",
                ],
                "id_token_signing_alg_values_supported": ["RS256"],
            }
        )

    def _authorization(self, params: Mapping[str, str]) -> AuthRequest | Response:
        """The request, or how it is refused. RFC 6749 §4.1.2.1: with an unknown client or
        redirect URI the person is told, never redirected (else: an open redirector);
        every other fault goes back to the client, with its `state`."""
        client = self.clients.get(params.get("client_id", ""))
        redirect_uri = params.get("redirect_uri", "")
        if client is None or redirect_uri not in client.redirect_uris:
            return _page("Sign-in refused", "Unknown client, or unregistered redirect_uri.", 400)
        state = params.get("state")
        fault = _fault(params)
        if fault is not None:
            error, description = fault
            return _redirect(redirect_uri, error=error, error_description=description, state=state)
        return AuthRequest(
            client,
            redirect_uri,
            params["scope"],
            state,
            params.get("nonce"),
            params["code_challenge"],
        )

    async def _sign_in_page(self, request: Request) -> Response:
        params = dict(request.query_params)
        self.authorize_requests.append(params)
        found = self._authorization(params)
        if isinstance(found, Response):
            return found
        hidden = "".join(
            f'<input type="hidden" name="{name}" value="{html.escape(params[name])}">'
            for name in AUTHORIZE_PARAMS
            if name in params
        )
        buttons = "".join(
            f'<p><button type="submit" name="user" value="{html.escape(subject)}">'
            f"Sign in as {html.escape(str(claims.get('name', subject)))}</button></p>"
            for subject, claims in self.users.items()
        )
        client_id = html.escape(found.client.client_id)
        body = f'<p>{client_id} asks you to sign in.</p><form method="post" action="/authorize">'
        return _page("Sign in", f"{body}{hidden}{buttons}</form>")

    async def _signed_in(self, request: Request) -> Response:
        """The person's answer. The form is checked again as a new request: its hidden
        fields are whatever the browser sent back."""
        form = await _form(request)
        found = self._authorization(form)
        if isinstance(found, Response):
            return found
        if self.decline:
            return _redirect(found.redirect_uri, error="access_denied", state=found.state)
        subject = form.get("user", "")
        if subject not in self.users:
            return _page("Sign-in refused", "No such user.", 400)
        code = secrets.token_urlsafe(32)
        self._codes[code] = Grant(found, subject, time.monotonic(), int(time.time()))
        self.codes_issued += 1
        return _redirect(found.redirect_uri, code=code, state=found.state)

    async def _token(self, request: Request) -> Response:
        form = await _form(request)
        self.token_requests.append(form)
        client = self._authenticated(request.headers.get("authorization"), form)
        if client is None:
            return self._refused("invalid_client", "client authentication failed", 401)
        if form.get("grant_type") != "authorization_code":
            return self._refused("unsupported_grant_type", "authorization_code only")
        grant = self._redeemed(form, client)
        if isinstance(grant, str):
            return self._refused("invalid_grant", grant)
        self.tokens_issued += 1
        return JSONResponse(self._tokens(grant), headers=NO_STORE)

    def _authenticated(self, authorization: str | None, form: Mapping[str, str]) -> Client | None:
        basic = _basic(authorization)
        if basic is not None and "client_secret" in form:
            return None  # RFC 6749 §2.3: one authentication method per request
        client_id, secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
        client = self.clients.get(client_id)
        if client is None or form.get("client_id", client_id) != client_id:
            return None
        if not hmac.compare_digest(secret.encode(), client.client_secret.encode()):
            return None
        return client

    def _redeemed(self, form: Mapping[str, str], client: Client) -> Grant | str:
        """The code's grant, or why not. A code is spent when first presented, whatever
        follows (RFC 6749 §4.1.2): a failed attempt leaves nothing to retry or guess at."""
        grant = self._codes.pop(form.get("code", ""), None)
        if grant is None:
            return "unknown code, or already used"
        verifier = form.get("code_verifier", "")
        if time.monotonic() - grant.issued_at >= self.code_lifetime_s:
            return "code expired"
        if grant.request.client.client_id != client.client_id:
            return "code issued to another client"
        if form.get("redirect_uri") != grant.request.redirect_uri:
            return "redirect_uri differs from the authorization request's"
        if not PKCE_TEXT.fullmatch(verifier):
            return "code_verifier missing or malformed"
        if not hmac.compare_digest(s256(verifier), grant.request.code_challenge):
            return "code_verifier does not match the code_challenge"
        return grant

    def _tokens(self, grant: Grant) -> dict[str, Any]:
        claims = self.users[grant.subject]
        client_id = grant.request.client.client_id
        access = self.signer.token(
            kid=self.kid,
            lifetime_s=self.token_lifetime_s,
            # RFC 9068's claims; no `scope`: the service would take it as the tool scopes.
            **{
                **claims,
                "sub": grant.subject,
                "aud": self.audience,
                "nbf": int(time.time()),
                "client_id": client_id,
                "jti": secrets.token_hex(8),
            },
        )
        profile = {name: claims[name] for name in PROFILE_CLAIMS if name in claims}
        id_token = self.signer.token(
            kid=self.kid,
            lifetime_s=self.token_lifetime_s,
            **{
                **profile,
                "sub": grant.subject,
                "aud": client_id,
                "azp": client_id,
                "nonce": grant.request.nonce,  # None: none was sent, and none is put
                "auth_time": grant.auth_time,
            },
        )
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(self.token_lifetime_s),
            "id_token": id_token,
            "scope": grant.request.scope,
        }

    def _refused(self, error: str, why: str, status: int = 400) -> JSONResponse:
        self.token_refusals.append(f"{error}: {why}")
        headers = dict(NO_STORE)
        if status == 401:  # RFC 6749 §5.2
            headers["WWW-Authenticate"] = 'Basic realm="oidc"'
        body = {"error": error, "error_description": why}
        return JSONResponse(body, status_code=status, headers=headers)

    async def _logout(self, request: Request) -> Response:
        """RP-initiated logout: back only to a registered URI (of `client_id`'s, if given)."""
        params = dict(request.query_params)
        target = params.get("post_logout_redirect_uri")
        if target is None:
            self.logouts.append(params)
            return _page("Signed out", "You are signed out.")
        named = self.clients.get(params.get("client_id", ""))
        clients = [named] if named is not None else self.clients.values()
        if target not in {uri for c in clients for uri in c.post_logout_redirect_uris}:
            return _page("Sign-out refused", "Unregistered post_logout_redirect_uri.", 400)
        self.logouts.append(params)
        return _redirect(target, state=params.get("state"))


def _fault(params: Mapping[str, str]) -> tuple[str, str] | None:
    """What makes an authorization request from a known client unacceptable, if anything.
    RFC 7636 §4.3: a missing method means `plain`, which is refused like any but S256."""
    if params.get("response_type") != "code":
        return "unsupported_response_type", "only response_type=code"
    if "openid" not in params.get("scope", "").split():
        return "invalid_scope", "scope must include openid"
    if params.get("code_challenge_method") != "S256":
        return "invalid_request", "PKCE is required, with code_challenge_method=S256"
    if not PKCE_TEXT.fullmatch(params.get("code_challenge", "")):
        return "invalid_request", "code_challenge missing or malformed"
    return None


def _basic(authorization: str | None) -> tuple[str, str] | None:
    """RFC 6749 §2.3.1: id and secret, each form-urlencoded, in Basic. Unreadable
    credentials are empty ones: they fail like a wrong secret."""
    scheme, _, value = (authorization or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except ValueError:
        return "", ""
    client_id, _, secret = decoded.partition(":")
    return unquote_plus(client_id), unquote_plus(secret)


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {name: value for name, value in form.items() if isinstance(value, str)}


def _redirect(uri: str, **params: str | None) -> RedirectResponse:
    """`uri` with `params` added to the query it has (RFC 6749 §3.1.2 keeps it)."""
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [(name, value) for name, value in params.items() if value is not None]
    return RedirectResponse(urlunsplit(parts._replace(query=urlencode(query))), status_code=302)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{body}</body></html>",
        status_code=status,
        headers={"Cache-Control": "no-store"},
    )


@asynccontextmanager
async def providing(
    *, token_lifetime_s: float = 300, audience: str = AUDIENCE
) -> AsyncIterator[Provider]:
    """A provider serving on a free loopback port (in this event loop), with key `k1`,
    and no client or user yet."""
    signer = Issuer()
    signer.add_key("k1")
    running = Provider(signer, audience=audience, token_lifetime_s=token_lifetime_s)
    async with serving_app(running.app()) as url:
        signer.url = url
        yield running
