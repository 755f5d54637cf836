"""The hot path's connection pool: a connection that answered is reused as it is; one whose
statement may still be in flight (its caller cancelled) is closed, never handed on; one the
server closed is dropped when next taken; a full pool makes callers wait their turn, and
bounds the wait."""

from __future__ import annotations

import asyncio
import inspect

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from app.db.hot_pool import HotPool, PoolClosed


@pytest.fixture
def connect(database_url: str):  # type: ignore[no-untyped-def]
    dsn = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    opened: list[asyncpg.Connection] = []

    async def open_one() -> asyncpg.Connection:
        connection = await asyncpg.connect(dsn)
        opened.append(connection)
        return connection

    open_one.opened = opened  # type: ignore[attr-defined]
    return open_one


async def _soon(check) -> bool:  # type: ignore[no-untyped-def]
    """Whether `check()` (a bool, or an awaitable of one) comes true within 5 s."""
    for _ in range(100):
        answer = check()
        if await answer if inspect.isawaitable(answer) else answer:
            return True
        await asyncio.sleep(0.05)
    return False


async def _backend_gone(pid: int, dsn_connect) -> bool:  # type: ignore[no-untyped-def]
    watcher = await dsn_connect()
    try:
        query = "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $1"
        return await _soon(lambda: watcher.fetchval(query, pid))
    finally:
        await watcher.close()


async def _closed_soon(connection: asyncpg.Connection) -> bool:
    return await _soon(connection.is_closed)


async def test_a_connection_that_answered_is_reused_also_after_a_server_error(connect) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=4)
    first = await pool.acquire(5)
    assert await first.fetchval("SELECT 1") == 1
    pool.release(first)
    again = await pool.acquire(5)
    assert again is first
    with pytest.raises(asyncpg.DivisionByZeroError):
        await again.fetchval("SELECT 1 / 0")
    pool.release(again)  # the server's error ended the statement
    assert (pool.size, pool.idle) == (1, 1)
    assert await (await pool.acquire(5)).fetchval("SELECT 2") == 2
    assert len(connect.opened) == 1
    await pool.close()


async def _size_soon(pool: HotPool, size: int) -> bool:
    """Whether the pool's places come down to `size` (a closing connection holds one)."""
    return await _soon(lambda: pool.size == size)


async def test_a_connection_left_mid_statement_is_closed_not_reused(connect) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=4)
    connection = await pool.acquire(5)
    pid = connection.get_server_pid()
    sleeping = asyncio.create_task(connection.fetch("SELECT pg_sleep(30)"))
    await asyncio.sleep(0.2)
    sleeping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sleeping
    pool.release(connection, answered=False)
    assert pool.idle == 0
    assert await _backend_gone(pid, connect)  # its sleep does not go on for 30 s
    assert await _closed_soon(connection) and await _size_soon(pool, 0)
    fresh = await pool.acquire(5)
    assert fresh is not connection and await fresh.fetchval("SELECT 1") == 1
    await pool.close()


async def test_a_connection_the_server_closed_is_dropped_when_next_taken(connect) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=4)
    connection = await pool.acquire(5)
    pool.release(connection)
    killer = await connect()
    await killer.execute("SELECT pg_terminate_backend($1)", connection.get_server_pid())
    assert await _closed_soon(connection)
    fresh = await pool.acquire(5)
    assert fresh is not connection
    assert await fresh.fetchval("SELECT 1") == 1
    assert pool.size == 1
    await killer.close()
    await pool.close()


async def test_an_idle_connection_past_its_age_is_closed_not_used(connect) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=4, max_idle_s=0.05)
    old = await pool.acquire(5)
    pool.release(old)
    await asyncio.sleep(0.1)
    fresh = await pool.acquire(5)
    assert fresh is not old and await fresh.fetchval("SELECT 1") == 1
    assert await _closed_soon(old) and await _size_soon(pool, 1)
    await pool.close()


async def test_a_full_pool_hands_the_next_connection_to_the_first_waiter(connect) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=2)
    a, b = await pool.acquire(5), await pool.acquire(5)
    first = asyncio.create_task(pool.acquire(5))
    second = asyncio.create_task(pool.acquire(5))
    await asyncio.sleep(0.05)
    assert not first.done() and not second.done() and pool.waiting == 2
    pool.release(b)
    assert await first is b
    pool.release(a, answered=False)  # closed: the second waiter opens one in its place
    c = await second
    assert c not in (a, b) and await c.fetchval("SELECT 1") == 1
    assert pool.size == 2 and len(connect.opened) == 3 and a.is_closed()
    await pool.close()


async def _full_with_a_waiter(connect):  # type: ignore[no-untyped-def]
    """A pool of one connection, held, and a caller already waiting for it."""
    pool = HotPool(connect, max_size=1)
    held = await pool.acquire(5)
    waiter = asyncio.create_task(pool.acquire(5))
    await asyncio.sleep(0.05)
    assert pool.waiting == 1
    return pool, held, waiter


async def test_a_freed_place_is_the_first_waiters_not_a_newcomers(connect) -> None:  # type: ignore[no-untyped-def]
    pool, held, waiter = await _full_with_a_waiter(connect)
    held.terminate()
    pool.release(held)  # closed already: its place goes to the waiter at once
    newcomer = asyncio.create_task(pool.acquire(5))  # before the waiter has run
    opened = await waiter
    await asyncio.sleep(0.05)
    assert not newcomer.done() and pool.size == 1  # never two connections for one place
    pool.release(opened)
    assert await newcomer is opened
    assert len(connect.opened) == 2
    await pool.close()


async def test_a_connection_that_closed_on_its_way_to_a_waiter_is_replaced(connect) -> None:  # type: ignore[no-untyped-def]
    pool, held, waiter = await _full_with_a_waiter(connect)
    pool.release(held)  # handed to the waiter...
    held.terminate()  # ...and gone before it runs
    got = await waiter
    assert got is not held and await got.fetchval("SELECT 1") == 1
    assert pool.size == 1
    await pool.close()


async def test_a_wait_for_a_full_pool_is_bounded(connect) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=1)
    held = await pool.acquire(5)
    with pytest.raises(TimeoutError):
        await pool.acquire(0.1)
    assert pool.waiting == 0  # the timed-out wait left no trace
    pool.release(held)
    assert (pool.size, pool.idle) == (1, 1)
    assert await pool.acquire(0.1) is held
    await pool.close()


async def test_a_connection_handed_to_a_waiter_cancelled_meanwhile_stays_in_the_pool(
    connect,
) -> None:  # type: ignore[no-untyped-def]
    pool, held, waiter = await _full_with_a_waiter(connect)
    pool.release(held)  # handed to the waiter, which is cancelled before it resumes
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert (pool.size, pool.idle) == (1, 1)
    assert await pool.acquire(0.1) is held
    await pool.close()


async def test_a_place_passed_to_a_waiter_cancelled_meanwhile_goes_to_the_next(connect) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=1)
    held = await pool.acquire(5)
    first = asyncio.create_task(pool.acquire(5))
    second = asyncio.create_task(pool.acquire(5))
    await asyncio.sleep(0.05)
    held.terminate()
    pool.release(held)  # closed already: its place goes to the first waiter at once
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    opened = await second
    assert opened is not held and await opened.fetchval("SELECT 1") == 1
    assert pool.size == 1
    await pool.close()


async def test_closing_closes_idle_connections_fails_waiters_and_those_in_use_on_return(
    connect,
) -> None:  # type: ignore[no-untyped-def]
    pool = HotPool(connect, max_size=2)
    idle, busy = await pool.acquire(5), await pool.acquire(5)
    pool.release(idle)
    pool_full = HotPool(connect, max_size=1)
    only = await pool_full.acquire(5)
    waiting = asyncio.create_task(pool_full.acquire(5))
    await asyncio.sleep(0.05)
    await pool_full.close()
    with pytest.raises(PoolClosed):
        await waiting
    pool_full.release(only)
    await pool.close()
    assert idle.is_closed() and not busy.is_closed() and pool.size == 1
    pool.release(busy)
    assert await _closed_soon(busy) and await _closed_soon(only)
    assert await _size_soon(pool, 0) and await _size_soon(pool_full, 0)
    with pytest.raises(PoolClosed):
        await pool.acquire(5)
