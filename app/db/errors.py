"""Which database failures are an outage (retry later) rather than a bug."""

from __future__ import annotations

import errno

from asyncpg.exceptions import TargetServerAttributeNotMatched
from sqlalchemy import exc as sa_exc

#: Connection exceptions, insufficient resources, operator intervention (shutdown), and
#: read_only_sql_transaction: a write met a standby (during a failover, before its
#: promotion; through a pooler, or a URL without target_session_attrs=read-write).
_UNAVAILABLE_SQLSTATE_PREFIXES = ("08", "53", "57P01", "57P02", "57P03", "25006")


def is_unavailable(exc: BaseException) -> bool:
    """The database is unreachable (as opposed to a bug): connection refused, pool
    timeouts, a dropped connection, no server that accepts writes (a failover)."""
    # Connection refused/reset, a connect or pool timeout: network errnos only, not every
    # OSError, and not InterfaceError (misusing a connection is a bug, not an outage).
    if isinstance(exc, (ConnectionError, TimeoutError, sa_exc.TimeoutError)):
        return True
    if isinstance(exc, OSError) and exc.errno in _NETWORK_ERRNOS:
        return True
    if no_writable_host(exc):
        return True
    if isinstance(exc, sa_exc.DBAPIError):
        return (
            bool(exc.connection_invalidated)
            or isinstance(exc, sa_exc.OperationalError)
            or ("connection" in type(exc.orig).__name__.lower())
            or _unavailable_sqlstate(getattr(exc.orig, "sqlstate", None))
        )
    return _unavailable_sqlstate(getattr(exc, "sqlstate", None))


def is_database_outage(exc: BaseException) -> bool:
    """An outage met by a statement (through the engine), not by something else that
    talks over a network: a tool's own connection refused is the tool's failure."""
    return isinstance(exc, sa_exc.SQLAlchemyError) and is_unavailable(exc)


def no_writable_host(exc: BaseException) -> bool:
    """Several hosts, none of which suits `target_session_attrs` (read-write: none is a
    primary yet), as asyncpg says it, or as SQLAlchemy wraps that."""
    orig = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    return isinstance(orig, TargetServerAttributeNotMatched) or isinstance(
        getattr(orig, "__cause__", None), TargetServerAttributeNotMatched
    )


_NETWORK_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ETIMEDOUT,
        errno.ENOENT,
    }  # ENOENT: a Unix socket that is not there (yet)
)


def _unavailable_sqlstate(sqlstate: object) -> bool:
    return isinstance(sqlstate, str) and sqlstate.startswith(_UNAVAILABLE_SQLSTATE_PREFIXES)


def is_lock_timeout(exc: BaseException) -> bool:
    """A lock not granted within the transaction's `lock_timeout` (worth a retry)."""
    orig = getattr(exc, "orig", exc)
    return getattr(orig, "sqlstate", None) == LOCK_NOT_AVAILABLE


LOCK_NOT_AVAILABLE = "55P03"
