"""The connections the hot path's single statements go out on (`db.raw`).

asyncpg's own pool cost 21–54 µs of CPU a statement over a held connection on this
service's box, more than the statement's own client side: every release runs in a new task
behind `asyncio.shield` and awaits a reset, every acquire wraps a `wait_for`. The hot path
needs none of that: each statement runs on its own (no transaction, no LISTEN, no SET), so
a connection that answered is ready for the next one as it is. Here taking an idle
connection and putting it back are plain list operations, with no task and no await.

What asyncpg's pool did on release that still matters is done by the one releasing: a
connection whose statement did not end with the server's answer (the caller was cancelled
mid-statement, the connection broke, the driver gave up) may still have a query in flight,
so it is closed (once asyncpg's cancel of that query has landed), never handed on; its
place counts until it is closed, so the pool never holds more than `max_size`. One the
server closed is dropped when it is next taken, and one idle for longer than
`MAX_IDLE_S` (a firewall or NAT may have forgotten it without a word) is closed then.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Awaitable, Callable

import asyncpg

from app.domain.errors import ToolgateError

Connect = Callable[[], Awaitable[asyncpg.Connection]]
#: How long closing one connection may wait for its cancelled statement and goodbye.
CLOSE_TIMEOUT_S = 5.0
#: An idle connection older than this is closed when next taken, not used (asyncpg's pool
#: closed them after the same time).
MAX_IDLE_S = 300.0


class PoolClosed(ToolgateError):
    """The pool was closed (the service is stopping)."""


class HotPool:
    def __init__(self, connect: Connect, max_size: int, max_idle_s: float = MAX_IDLE_S) -> None:
        self._connect = connect
        self.max_size = max_size
        self.max_idle_s = max_idle_s
        #: Idle connections, each with when it was put back (`time.monotonic`).
        self._idle: list[tuple[asyncpg.Connection, float]] = []
        #: Places taken: connections open, being opened, or being closed.
        self.size = 0
        #: Who waits for a connection, first come first served: handed a connection, or
        #: None for a place of its own to open one in (already counted in `size`).
        self._waiters: collections.deque[asyncio.Future[asyncpg.Connection | None]] = (
            collections.deque()
        )
        self._closed = False
        #: Connections being closed (in the background, see `_retire`).
        self._retiring: set[asyncio.Task[None]] = set()

    @property
    def idle(self) -> int:
        return len(self._idle)

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self, timeout_s: float) -> asyncpg.Connection:
        """A connection of the pool, opened when none is idle and the pool is not full; when
        it is full, the first one put back (or the first free place). TimeoutError after
        `timeout_s`."""
        idle = self._idle
        while idle:
            connection, since = idle.pop()  # the most recently used: its caches are warm
            if connection.is_closed():
                self._vacate()
            elif time.monotonic() - since > self.max_idle_s:
                self._retire(connection)
            else:
                return connection
        if self._closed:
            raise PoolClosed()
        async with asyncio.timeout(timeout_s):
            if self.size < self.max_size:
                self.size += 1
                return await self._open()
            handed = await self._wait()
            if handed is None or handed.is_closed():
                return await self._open()  # in the place it (or the closed one) held
            return handed

    async def _open(self) -> asyncpg.Connection:
        """A new connection in a place already counted; the place is given up if it fails."""
        try:
            return await self._connect()
        except BaseException:
            self._vacate()
            raise

    async def _wait(self) -> asyncpg.Connection | None:
        future: asyncio.Future[asyncpg.Connection | None] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiters.append(future)
        try:
            return await future
        except BaseException:
            if not future.done() or future.cancelled():
                with contextlib.suppress(ValueError):
                    self._waiters.remove(future)
            elif future.exception() is None:
                # Handed something just as the wait ended: it goes on to the next one.
                handed = future.result()
                if handed is None:
                    self._vacate()
                else:
                    self.release(handed)
            raise

    def release(self, connection: asyncpg.Connection, *, answered: bool = True) -> None:
        """Puts `connection` back. `answered`: its last statement ended with the server's
        answer (rows or an error of the server's), so nothing of it is still in flight;
        otherwise, or when it is closed or in a transaction, it is closed, not reused."""
        if self._closed or not answered or connection.is_closed() or connection.is_in_transaction():
            self._retire(connection)
        elif not self._hand(connection):
            self._idle.append((connection, time.monotonic()))

    def _retire(self, connection: asyncpg.Connection) -> None:
        """Closes `connection` in the background and gives its place up once it is closed.
        Not `terminate`: asyncpg has already sent the server a cancel of a statement its
        caller gave up on, and a graceful close waits for it to land, so the statement does
        not go on running (or waiting for a lock) on behalf of no one."""
        if connection.is_closed():
            self._vacate()
            return
        task = asyncio.get_running_loop().create_task(connection.close(timeout=CLOSE_TIMEOUT_S))
        self._retiring.add(task)
        task.add_done_callback(self._retired)

    def _retired(self, task: asyncio.Task[None]) -> None:
        self._retiring.discard(task)
        if not task.cancelled():
            task.exception()  # closing failed: asyncpg has aborted it, nothing is left to do
        self._vacate()

    def _vacate(self) -> None:
        """A place is free: the first waiter opens a connection in it, else it is given up."""
        if not self._hand(None):
            self.size -= 1

    def _hand(self, what: asyncpg.Connection | None) -> bool:
        """Gives the first live waiter `what`; False when nobody waits."""
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(what)
                return True
        return False

    async def close(self) -> None:
        """Closes the idle connections; those in use are closed as they come back, and
        whoever waits is told the pool is closed."""
        self._closed = True
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(PoolClosed())
        idle, self._idle = self._idle, []
        for connection, _ in idle:
            self._retire(connection)
        await asyncio.gather(*self._retiring, return_exceptions=True)
