"""Engine and session factory. Repositories flush; only use cases commit.

No pre-ping: a checkout costs no round trip. A connection found dropped when it is used
is invalidated by SQLAlchemy, and `retrying` runs the transaction again once on a fresh
connection, but only when it failed before its COMMIT was sent (after that the outcome
is unknown, and the lease-conditional writes decide).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Row, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
#: How the service's connections show in pg_stat_activity.
APPLICATION_NAME = "toolgate"
#: asyncpg's own statement cache, and SQLAlchemy's in its asyncpg adapter, both off.
_UNCACHED = {"statement_cache_size": 0, "prepared_statement_cache_size": 0}


def pool_size_for(*, max_active_runs: int, http_concurrency: int) -> int:
    """Connections one process needs. A step holds a connection only for its one short
    transaction, never across a model or tool call, so a quarter of the runs and of the
    requests in flight at once is ample; plus one for lease upkeep and the driver."""
    return max(4, -(-max_active_runs // 4) + -(-http_concurrency // 4) + 1)


def make_engine(
    url: str,
    *,
    pool_size: int = 10,
    pool_timeout_s: float = 30.0,
    cache_statements: bool = True,
) -> AsyncEngine:
    """`pool_timeout_s`: how long a checkout waits for a free connection before its caller
    sees an outage (a request: 503; a step: the run is handed back, never failed).

    `cache_statements=False` is for a pooler in transaction mode: neither SQLAlchemy nor
    asyncpg keeps a prepared statement, so asyncpg uses the unnamed statement and parses it
    again in the same message batch as its execution. Nothing named is left on a server
    connection that the next transaction (ours or another client's) may get, and a
    statement outside a transaction cannot be split across two server connections. The
    cost: each statement is parsed and described every time (see docs/decisions.md)."""
    uncached = {} if cache_statements else _UNCACHED
    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size // 2,
        pool_pre_ping=False,
        # The connection used last first: its prepared statements and their plans are
        # warm, and idle ones beyond what the load needs stay idle (FIFO, the default,
        # would prepare every statement on every pooled connection in turn).
        pool_use_lifo=True,
        pool_timeout=pool_timeout_s,
        connect_args={**_driver_connect_args(cache_statements=cache_statements), **uncached},
    )
    # A connection the server closed while it sat in the pool (a restart, a blip) is never
    # handed out: the pool opens another, whichever statement comes first (no round trip).
    event.listen(engine.sync_engine.pool, "checkout", _not_closed)
    return engine


def _not_closed(_dbapi: Any, record: Any, _proxy: Any) -> None:
    if record.driver_connection.is_closed():
        raise sa_exc.DisconnectionError("the server closed this pooled connection")


def _driver_connect_args(*, cache_statements: bool) -> dict[str, Any]:
    """asyncpg's connection settings of the engine's connections."""
    return {
        "timeout": 5,
        "command_timeout": 30,
        "server_settings": {"application_name": APPLICATION_NAME},
        **({} if cache_statements else {"statement_cache_size": 0}),
    }


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def retrying(
    sessions: async_sessionmaker[AsyncSession],
    work: Callable[..., Awaitable[T]],
    *args: Any,
    **kwargs: Any,
) -> T:
    """Runs `work(session, *args, **kwargs)` in one transaction and commits; once more on a
    fresh connection when the first one turned out to be dropped before anything was
    committed."""
    for attempt in (1, 2):
        async with sessions() as session:
            try:
                await session.begin()
                result = await work(session, *args, **kwargs)
            except sa_exc.DBAPIError as exc:
                if attempt == 2 or not exc.connection_invalidated:
                    raise
                log.info("a pooled database connection had dropped; trying on a fresh one")
                continue
            # Not retried: a failure during COMMIT leaves the outcome unknown.
            await session.commit()
            return result
    raise AssertionError("unreachable")


async def retrying_alone(
    single: AsyncEngine, work: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any
) -> T:
    """`retrying` for work of statements that each stand alone (on an AUTOCOMMIT engine:
    `alone`): `work(single, ...)`, once more when
    the connection it got turned out to be dropped."""
    for attempt in (1, 2):
        try:
            return await work(single, *args, **kwargs)
        except sa_exc.DBAPIError as exc:
            if attempt == 2 or not exc.connection_invalidated:
                raise
            log.info("a pooled database connection had dropped; trying on a fresh one")
    raise AssertionError("unreachable")


async def alone(
    target: AsyncSession | AsyncConnection | AsyncEngine, sql: str, args: Sequence[Any]
) -> Sequence[Row[Any]]:
    """The rows of `sql`, plain SQL with positional arguments, sent as it is (no statement
    for SQLAlchemy to build a cache key of). On an engine it stands alone, on a pooled
    connection in autocommit: one round trip, no BEGIN or COMMIT (the hot path's
    statements: a batch of step writes, a request's key lookup). On a session or
    connection it joins their transaction."""
    if isinstance(target, AsyncEngine):
        async with target.connect() as connection:
            if target.get_execution_options().get("isolation_level") != "AUTOCOMMIT":
                await connection.execution_options(isolation_level="AUTOCOMMIT")
            return await alone(connection, sql, args)
    if isinstance(target, AsyncSession):
        target = await target.connection()
    result = await target.exec_driver_sql(sql, tuple(args))
    return result.all() if result.returns_rows else []
