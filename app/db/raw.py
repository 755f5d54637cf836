"""The hot path's few statements, sent on asyncpg itself.

SQLAlchemy's execution layer (its execution context, parameter processing, result
wrapping, the greenlet it runs in) costs about as much CPU again as asyncpg's own work on
a short statement, and even a bare checkout of a pooled connection runs in a greenlet of
its own (a 16 KiB frame stack mapped and unmapped each time). The statements every step or
request sends (a batch of step writes, the API key lookup, a run's creation, the built-in
search) are plain SQL with positional parameters, written once. Each goes on a connection
of a small pool of asyncpg connections (`db.hot_pool`) that the service attaches to its
engine (`attach`): the same
database, the same connection settings, each statement on its own (no transaction, so
nothing to reset when a connection goes back). Without an attached pool (a CLI, a test's
engine), a statement goes to the driver connection of a pooled SQLAlchemy connection.

What callers see stays SQLAlchemy's: a driver error is translated as SQLAlchemy would
(`DBAPIError` with `connection_invalidated`), and a connection found dropped is invalidated
so that the pool does not hand it out again. Observers (`listen`) see each statement before
it is sent and after its answer, as SQLAlchemy's cursor events do for the others.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import asyncpg
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.hot_pool import HotPool
from app.domain.errors import ToolgateError

Observer = Callable[[str, Sequence[Any]], None]
#: Observers by connection pool (an engine and its `execution_options` copies share one)
#: and by moment.
_OBSERVERS: dict[tuple[int, str], list[Observer]] = {}


def listen(engine: AsyncEngine, when: str, observer: Observer) -> Callable[[], None]:
    """Calls `observer(sql, args)` `when` ("before" or "after") each raw statement sent on
    `engine`'s pool; an exception it raises takes the statement's place. Returns what
    stops it."""
    key = (id(engine.sync_engine.pool), when)
    _OBSERVERS.setdefault(key, []).append(observer)

    def stop() -> None:
        _OBSERVERS[key].remove(observer)
        if not _OBSERVERS[key]:
            del _OBSERVERS[key]

    return stop


def _observe(on: AsyncEngine, when: str, sql: str, args: Sequence[Any]) -> None:
    if _OBSERVERS:
        for observer in _OBSERVERS.get((id(on.sync_engine.pool), when), ()):
            observer(sql, args)


def _from_driver(
    engine: AsyncEngine, sql: str, args: Sequence[Any], error: Exception, closed: bool
) -> Any:
    """An asyncpg error as SQLAlchemy would have raised it (a network error as it is),
    invalidated when it closed the connection, as SQLAlchemy's `is_disconnect` says."""
    dialect = engine.dialect
    dbapi = dialect.loaded_dbapi
    translate = dbapi._asyncpg_error_translate
    kind = next((translate[k] for k in type(error).__mro__ if k in translate), None)
    if kind is None and isinstance(error, asyncpg.InterfaceError | OSError):
        kind, closed = dbapi.InterfaceError, True  # the connection is gone: an outage
    if kind is None:
        return error
    translated = kind(error.args[0] if error.args else str(error), error)
    invalid = closed or isinstance(error, asyncpg.ConnectionDoesNotExistError)
    return sa_exc.DBAPIError.instance(
        sql,
        tuple(args),
        translated,
        dbapi.Error,
        connection_invalidated=invalid or dialect.is_disconnect(translated, None, None),
        dialect=dialect,
    )


#: The hot path's few statements are planned once per connection: their plans do not
#: depend on their parameters (a batch's JSON, a key's hash, one run's insert), and
#: planning a batch of nine CTEs again on every execution cost Postgres more than
#: running it. A plan kept must not bet on the tables' size when it was made: every one
#: of these statements reaches its rows by key, a few at a time, but the planner guesses
#: a JSON array's rows at 100 and, on a new or small table, hashed the whole run table
#: for each batch and kept doing so as it grew (docs/performance.md). So their pool
#: plans with nested loops and index scans only (where an index serves).
_PLANNED_ONCE = {
    "plan_cache_mode": "force_generic_plan",
    "enable_hashjoin": "off",
    "enable_mergejoin": "off",
    "enable_seqscan": "off",
}
#: The hot pools attached to engines, by the engine's SQLAlchemy pool, and how long a
#: statement waits for one of their connections (as the engine's own pool does).
_POOLS: dict[int, tuple[HotPool, float]] = {}
#: Options of SQLAlchemy's asyncpg dialect that a URL may carry, which asyncpg does not take.
_NOT_ASYNCPGS = {"prepared_statement_cache_size", "prepared_statement_name_func", "async_fallback"}


async def attach(
    engine: AsyncEngine,
    *,
    max_size: int,
    connect_args: Mapping[str, Any],
    plan_once: bool = True,
    acquire_timeout_s: float = 30.0,
) -> None:
    """Gives `engine` (and its `execution_options` copies) a pool of asyncpg connections for the hot
    path's statements: the engine URL's database, `connect_args` as the engine's own
    connections have them. It connects lazily, like the engine: start-up needs no database.
    `plan_once`: straight at Postgres (a pooler refuses startup parameters it does not
    know, and without prepared statements there is no plan to keep anyway)."""
    _, params = engine.dialect.create_connect_args(engine.url)
    params = {k: v for k, v in params.items() if k not in _NOT_ASYNCPGS}
    settings = {**connect_args.get("server_settings", {}), **(_PLANNED_ONCE if plan_once else {})}
    options = {**params, **connect_args, "server_settings": settings}

    def connect() -> Awaitable[asyncpg.Connection]:
        return asyncpg.connect(**options)

    _POOLS[id(engine.sync_engine.pool)] = (HotPool(connect, max_size), acquire_timeout_s)


async def detach(engine: AsyncEngine) -> None:
    attached = _POOLS.pop(id(engine.sync_engine.pool), None)
    if attached is not None:
        await attached[0].close()


async def fetch(target: AsyncEngine | AsyncConnection, sql: str, *args: Any) -> list[Any]:
    """`sql`'s rows (asyncpg records: by index or by name), on a connection of the pool
    attached to `target` (an engine), or on `target`'s driver connection."""
    if isinstance(target, AsyncEngine):
        attached = _POOLS.get(id(target.sync_engine.pool))
        if attached is None:
            async with target.connect() as connection:
                return await fetch(connection, sql, *args)
        _observe(target, "before", sql, args)
        for attempt in (1, 2):
            try:
                rows = await _on_pool(target, *attached, sql, args)
            except _NeverRan as never:
                error = never.__cause__
                if attempt == 2:
                    raise _from_driver(target, sql, args, error, True) from error
                continue  # the server had ended that connection: the statement never ran
            _observe(target, "after", sql, args)
            return rows
    # No pool attached (statement tracing on, a CLI, a test's engine): SQLAlchemy sends it,
    # so its cursor events (the tracer's, the tests') see it and its errors are its own.
    return list(await target.exec_driver_sql(sql, tuple(args)))


#: What a statement is answered with when the server ended its connection (an operator's
#: or a restart's `pg_terminate_backend`) before the statement committed: whether it had
#: not been read yet or was aborted, nothing of it stands, so it is sent again on another
#: connection. (A connection lost mid-statement is not this: that outcome is unknown.)
_NEVER_RAN = (asyncpg.AdminShutdownError, BrokenPipeError)


class _NeverRan(ToolgateError):
    """The statement did not run (its cause says why): it may be sent again."""


def _never_ran(error: BaseException) -> bool:
    """`error`, or what it came from (asyncpg reports a terminated backend as a lost
    connection whose context is the server's notice), shows the statement never ran."""
    seen: BaseException | None = error
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, _NEVER_RAN):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _on_pool(
    engine: AsyncEngine, pool: HotPool, timeout_s: float, sql: str, args: Any
) -> list[Any]:
    try:
        acquired = await pool.acquire(timeout_s)
    except TimeoutError as exc:  # all busy: as the engine's pool says it
        raise sa_exc.TimeoutError("no connection of the hot path's pool came free") from exc
    answered = False
    try:
        rows = await acquired.fetch(sql, *args)
        answered = True
        return rows
    except Exception as error:
        # An error of the server's ends the statement: the connection is ready for the
        # next one (or closed, when the server is ending it). Any other (a broken
        # connection, a cancel) may leave the statement in flight: it is not reused.
        answered = isinstance(error, asyncpg.PostgresError) and not isinstance(
            error, asyncpg.PostgresConnectionError
        )
        if _never_ran(error):
            raise _NeverRan() from error
        raise _from_driver(engine, sql, args, error, acquired.is_closed()) from error
    finally:
        pool.release(acquired, answered=answered)


class Compiled:
    """A SQLAlchemy statement built once (bind parameters only, none expanding), compiled
    once for the driver: its SQL, its parameters' order and their bind processors (a JSONB
    value's encoding, say), so that each execution only orders and converts values."""

    def __init__(self, statement: Any, dialect: Any) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql: str = compiled.string
        processors = compiled._bind_processors
        names = compiled.positiontup or ()
        self._order = [(name, processors.get(name)) for name in names]
        #: The values written into the statement itself (`literal(1)`, a constant).
        self._fixed = {
            name: bind.value
            for name, bind in compiled.binds.items()
            if name in names and bind.value is not None and bind.callable is None
        }

    def args(self, params: Mapping[str, Any]) -> list[Any]:
        fixed = self._fixed
        return [
            value if convert is None else convert(value)
            for name, convert in self._order
            for value in (params[name] if name in params else fixed[name],)
        ]


_COMPILED: dict[int, tuple[Any, Compiled]] = {}


async def execute(
    connection: AsyncEngine | AsyncConnection, statement: Any, params: Mapping[str, Any]
) -> list[Any]:
    """`fetch` for a statement built once (kept alive by its builder's cache): compiled on
    its first use, then sent as plain SQL with positional arguments."""
    entry = _COMPILED.get(id(statement))
    if entry is None or entry[0] is not statement:
        entry = (statement, Compiled(statement, connection.dialect))
        _COMPILED[id(statement)] = entry
    compiled = entry[1]
    return await fetch(connection, compiled.sql, *compiled.args(params))
