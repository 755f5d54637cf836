"""The database URL as an operator gives it, as the engine takes it, and said in words:
where it points (never its user or password) and why a connection to it failed."""

from __future__ import annotations

import socket

from sqlalchemy import exc as sa_exc
from sqlalchemy import text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from app.domain.errors import ToolgateError

DRIVER = "postgresql+asyncpg"
#: Schemes that name a Postgres server without a driver, as managed offerings and libpq
#: tools hand them out; this build always talks to it through asyncpg.
_PLAIN = ("postgresql", "postgres")
EXAMPLE = "postgresql://user:password@host:5432/database"


class UnusableUrl(ToolgateError, ValueError):
    """The URL cannot be used; the message never holds the URL (it may hold a password)."""


class Unreachable(ToolgateError):
    """A connection to the database could not be made; the message says where and why."""


def normalized(raw: str) -> str:
    """The URL with the asyncpg driver, and libpq's `sslmode` as asyncpg's `ssl` (the same
    values). UnusableUrl when it is no Postgres URL."""
    url = original = _parsed(raw)
    if url.drivername in _PLAIN:
        url = url.set(drivername=DRIVER)
    elif url.drivername != DRIVER:
        raise UnusableUrl(
            f"the scheme {url.drivername!r} is not supported: use postgresql:// "
            f"(or postgresql+asyncpg://), e.g. {EXAMPLE}"
        )
    if "sslmode" in url.query and "ssl" not in url.query:
        mode = url.query["sslmode"]
        url = url.difference_update_query(["sslmode"]).update_query_dict({"ssl": mode})
    # Left as written when nothing changed: rendering would re-quote the password.
    return raw if url == original else url.render_as_string(hide_password=False)


def _parsed(raw: str) -> URL:
    try:
        return make_url(raw)
    except (sa_exc.ArgumentError, ValueError):
        raise UnusableUrl(f"not a database URL; expected one like {EXAMPLE}") from None


def where(raw: str | URL) -> str:
    """`host:port/database`, or the socket folder for a Unix-socket URL."""
    url = make_url(raw)
    socket_dir = url.query.get("host")
    if url.host is None and socket_dir:
        return f"the Unix socket in {socket_dir}, database {url.database or ''}"
    return f"{url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"


async def check(engine: AsyncEngine) -> None:
    """One round trip; Unreachable, in words, when the database does not answer."""
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
    except Exception as exc:
        raise Unreachable(f"no connection to {where(engine.url)}: {_why(exc)}") from None


def _why(exc: BaseException) -> str:
    cause = exc.orig if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None else exc
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused (is the server running, on this port?)"
    if isinstance(cause, socket.gaierror):
        return "the host name does not resolve"
    if isinstance(cause, TimeoutError):
        return "no answer in time"
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate in ("28P01", "28000"):
        return "the server refused the login (user or password)"
    if sqlstate == "3D000":
        return "the server has no such database"
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror.lower()
    # The driver's own words (a server's message names no password); never a traceback.
    return f"{type(cause).__name__}: {cause}".rstrip(": ")
