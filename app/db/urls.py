"""The database URL as an operator gives it, as the engine takes it, and said in words:
where it points (never its user or password) and why a connection to it failed."""

from __future__ import annotations

import re
import socket

from sqlalchemy import exc as sa_exc
from sqlalchemy import text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.errors import no_writable_host
from app.domain.errors import ToolgateError

DRIVER = "postgresql+asyncpg"
#: Schemes that name a Postgres server without a driver, as managed offerings and libpq
#: tools hand them out; this build always talks to it through asyncpg.
_PLAIN = ("postgresql", "postgres")
EXAMPLE = "postgresql://user:password@host:5432/database"
#: libpq's multi-host form, `scheme://[user[:password]@]h1[:p1],h2[:p2]/db?...`: a comma in
#: the host part, which SQLAlchemy's URL parser takes for part of a port.
_HOST_LIST = re.compile(
    r"(?P<scheme>[\w+.-]+)://(?:(?P<auth>[^@/?]*)@)?(?P<hosts>[^/?@]*,[^/?@]*)(?P<rest>[/?].*)?",
    re.DOTALL,
)
_HOST_PORT = re.compile(r"(?P<host>[A-Za-z0-9_.-]+)(?::(?P<port>\d+))?")


class UnusableUrl(ToolgateError, ValueError):
    """The URL cannot be used; the message never holds the URL (it may hold a password)."""


class Unreachable(ToolgateError):
    """A connection to the database could not be made; the message says where and why."""


def normalized(raw: str) -> str:
    """The URL with the asyncpg driver, and libpq's `sslmode` as asyncpg's `ssl` (the same
    values); libpq's multi-host form (`postgresql://u@h1:p1,h2:p2/db`) as the dialect's
    (`postgresql+asyncpg://u@/db?host=h1:p1&host=h2:p2`, each host with its port, 5432
    unless given). UnusableUrl when it is no Postgres URL."""
    host_list = _HOST_LIST.fullmatch(raw)
    url = original = _with_hosts(host_list) if host_list else _parsed(raw)
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
    if url == original and not host_list:
        return raw
    return url.render_as_string(hide_password=False)


def _with_hosts(found: re.Match[str]) -> URL:
    """libpq's host list moved into the query, as `host=h:p` pairs."""
    pairs = []
    for spec in found["hosts"].split(","):
        host_port = _HOST_PORT.fullmatch(spec.strip())
        if host_port is None:
            raise UnusableUrl(
                "a host of the list is not host[:port] (a name or an IPv4 address; IPv6 "
                f"addresses are not supported in a list), e.g. {_EXAMPLE_LIST}"
            )
        pairs.append(("host", f"{host_port['host']}:{host_port['port'] or 5432}"))
    auth = f"{found['auth']}@" if found["auth"] is not None else ""
    url = _parsed(f"{found['scheme']}://{auth}{found['rest'] or ''}")
    if "host" in url.query or "port" in url.query:
        raise UnusableUrl(f"the hosts are given twice (in the query too), e.g. {_EXAMPLE_LIST}")
    return url.update_query_pairs(pairs, append=True)


_EXAMPLE_LIST = "postgresql://user:password@db-a:5432,db-b:5432/database"


def _parsed(raw: str) -> URL:
    try:
        return make_url(raw)
    except (sa_exc.ArgumentError, ValueError):
        raise UnusableUrl(f"not a database URL; expected one like {EXAMPLE}") from None


def where(raw: str | URL) -> str:
    """`host:port/database`; `h1:p1,h2:p2/database` for several hosts (the first that
    suits `target_session_attrs` is used); the socket folder for a Unix-socket URL."""
    url = make_url(raw)
    database = url.database or ""
    if url.host is not None or "host" not in url.query:
        return f"{url.host or 'localhost'}:{url.port or 5432}/{database}"
    given = url.query["host"]
    hosts = list(given) if isinstance(given, tuple) else given.split(",")
    if len(hosts) == 1 and hosts[0].startswith("/"):
        return f"the Unix socket in {hosts[0]}, database {database}"
    ports = str(url.query.get("port") or "").split(",")
    if len(ports) != len(hosts):
        ports = [ports[0]] * len(hosts)
    named = [h if ":" in h else f"{h}:{p or 5432}" for h, p in zip(hosts, ports, strict=True)]
    return f"{','.join(named)}/{database}"


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
    if no_writable_host(exc):
        return "no server accepts writes (each one is a standby or read-only)"
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate in ("28P01", "28000"):
        return "the server refused the login (user or password)"
    if sqlstate == "3D000":
        return "the server has no such database"
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror.lower()
    # The driver's own words (a server's message names no password); never a traceback.
    return f"{type(cause).__name__}: {cause}".rstrip(": ")
