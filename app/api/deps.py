"""Dependencies: the runtime, the driver and the principal behind the API key."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.api.event_stream import Streams
from app.api.problems import ProblemError
from app.domain.tools.specs import Principal
from app.engine.access import sso
from app.engine.access.keys import KEY_PREFIX, authenticate
from app.engine.driver import Driver
from app.engine.process.runtime import Runtime

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer tg_...`")


# Async, though they await nothing: FastAPI runs a plain `def` dependency in a worker
# thread, a thread hop (and a futex round) on every request.
async def get_runtime(request: Request) -> Runtime:
    return request.app.state.runtime


async def get_driver(request: Request) -> Driver:
    return request.app.state.driver


async def get_streams(request: Request) -> Streams:
    return request.app.state.streams


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
DriverDep = Annotated[Driver, Depends(get_driver)]
StreamsDep = Annotated[Streams, Depends(get_streams)]


async def get_principal(
    rt: RuntimeDep,
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    if credentials is None and sso.COOKIE in request.cookies:
        return await _signed_in(rt, request)
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise ProblemError(
            "unauthenticated",
            "send an API key as `Authorization: Bearer ...`",
            headers={"WWW-Authenticate": "Bearer"},
        )
    bearer = credentials.credentials
    principal = await _principal(rt, bearer, known=True)
    if principal is None:
        refused = (
            "the API key is not valid" if _is_key(rt, bearer) else "the access token is not valid"
        )
        raise ProblemError("unauthenticated", refused, headers={"WWW-Authenticate": "Bearer"})
    if not principal.roles:
        raise ProblemError("forbidden", "the access token grants no role in Toolgate")
    return principal


#: Methods that change nothing: a session's cookie alone opens them.
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


async def _signed_in(rt: Runtime, request: Request) -> Principal:
    """A person signed in to the console (SPEC §3.9): the session its cookie names, with
    the session's CSRF token on every request that may change something (a cookie is
    sent by the browser whoever asks; the token only by this origin's pages)."""
    found = await sso.session_of(rt, request.cookies.get(sso.COOKIE, ""))
    if found is None:
        raise ProblemError("unauthenticated", "the session has ended: sign in again")
    if request.method not in _SAFE:
        sent = request.headers.get(sso.CSRF_HEADER, "")
        if not secrets.compare_digest(sent.encode(), found.csrf_token.encode()):
            raise ProblemError("forbidden", f"send the session's CSRF token as {sso.CSRF_HEADER}")
    return sso.principal_of(found)


def _is_key(rt: Runtime, bearer: str) -> bool:
    """An API key, or (with `auth.oidc`) a person's access token."""
    return rt.oidc is None or bearer.startswith(KEY_PREFIX)


async def _principal(rt: Runtime, bearer: str, *, known: bool) -> Principal | None:
    """The bearer's principal, or None when it opens nothing. `known`: a key's may come
    from the keys looked up lately; a token is verified each time (it may have expired)."""
    if not _is_key(rt, bearer):
        assert rt.oidc is not None
        return await rt.oidc.principal(bearer)
    cache = rt.known_keys if known else None
    return await authenticate(rt.single, bearer, rt.db_time, known=cache)


async def key_recheck(
    rt: RuntimeDep,
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Callable[[], Awaitable[bool]]:
    """For a long response (an event stream): whether the request's key still opens it,
    with a reader's role, so a key revoked meanwhile stops it. Looked up each time: a
    notification missed by this process does not keep a stream open."""
    key = credentials.credentials if credentials is not None else ""
    cookie = request.cookies.get(sso.COOKIE, "") if credentials is None else ""

    async def still_valid() -> bool:
        if cookie:  # a signed-in person's stream ends with the session
            found = await sso.session_of(rt, cookie)
            return found is not None and bool(set(found.roles) & set(READER_ROLES))
        principal = await _principal(rt, key, known=False)
        return principal is not None and bool(principal.roles & set(READER_ROLES))

    return still_valid


KeyRecheckDep = Annotated[Callable[[], Awaitable[bool]], Depends(key_recheck)]


def require(*roles: str):  # type: ignore[no-untyped-def]
    async def check(principal: Annotated[Principal, Depends(get_principal)]) -> Principal:
        if roles and not principal.roles & set(roles):
            raise ProblemError("forbidden", f"this operation needs the role {' or '.join(roles)}")
        return principal

    return check


READER_ROLES = ("caller", "approver")
CallerDep = Annotated[Principal, Depends(require("caller"))]
ReaderDep = Annotated[Principal, Depends(require(*READER_ROLES))]
AnyRoleDep = Annotated[Principal, Depends(require())]
AdminDep = Annotated[Principal, Depends(require("admin"))]
