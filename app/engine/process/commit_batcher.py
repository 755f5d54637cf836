"""Group commit: a process's step writes of many runs, the runs its requests create, and
the Idempotency-Key answers of its finished requests go to Postgres together as one
statement (`db.lifecycle.step_writes`), so that many steps cost one round trip and one commit.

One batch is in flight at a time, on a connection the batcher holds (checked out of the
engine's pool once, in autocommit, taken again only when it was found broken): no
checkout a batch, and the statement is prepared and planned once. A write that finds no
batch in flight is sent on the event loop's next turn, with any others that became ready
on this one: a lone run waits for nothing. While a batch is in flight, writes collect in
the open batch, which is sent as soon as the batch in flight comes back (in statements of
at most `commit_batch_max` writes).

Each write stays conditional on its own run's lease (an answer on its key's claim, a new
run on its key's binding): one whose lease is gone gets StaleWrite alone, a birth whose
binding did not take hold learns None alone. When Postgres refuses the batch statement (a
deadlock, a constraint one write broke), nothing of it was committed, so each of its
writes is tried again alone and fails, or commits, on its own. When the connection fails,
the outcome of the statement is unknown, as for a step written alone: every write of the
batch gets the error, and its stepper hands its run back or reads it afresh.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.lifecycle import step_writes
from app.db.lifecycle.step_writes import Answer, Applied, Birth, Born, StaleWrite, StepWrite
from app.observability.metrics import Metrics

log = logging.getLogger(__name__)


Write = StepWrite | Answer | Birth


@dataclass
class _Pending:
    write: Write
    done: asyncio.Future[Any]
    since: float


@dataclass
class _Batch:
    items: list[_Pending] = field(default_factory=list)
    runs: set[tuple[str, str]] = field(default_factory=set)

    def holds(self, write: Write) -> bool:
        return isinstance(write, StepWrite) and (write.tenant_id, write.run_id) in self.runs

    def add(self, item: _Pending) -> None:
        self.items.append(item)
        if isinstance(item.write, StepWrite):
            self.runs.add((item.write.tenant_id, item.write.run_id))


class CommitBatcher:
    def __init__(self, engine: AsyncEngine, metrics: Metrics, *, max_size: int = 64) -> None:
        self._engine = engine
        self._metrics = metrics
        self._max = max_size
        self._open = _Batch()
        #: Batches closed (full, or holding a run the next write is of), sent in order.
        self._ready: collections.deque[_Batch] = collections.deque()
        #: The task sending batches one after another, while there are any.
        self._sender: asyncio.Task[None] | None = None
        self._connection: AsyncConnection | None = None
        #: The driver's connection under it, which knows when the server has closed it.
        self._driver: Any = None

    async def write(self, write: StepWrite) -> Applied:
        """Commits a step's `write` (with whatever others join its batch); StaleWrite when
        its run's lease was gone."""
        applied: Applied = await self._enqueue(write)
        return applied

    async def create(self, birth: Birth) -> Born | None:
        """Creates a new run (with whatever others join its batch); None when its key's
        binding did not take hold (nothing was made)."""
        born: Born | None = await self._enqueue(birth)
        return born

    async def answer(self, answer: Answer) -> None:
        """Keeps an Idempotency-Key's answer, if its request still holds the key's claim."""
        await self._enqueue(answer)

    async def close(self) -> None:
        """Stops sending (writers still waiting get CancelledError) and gives the held
        connection back."""
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
        await self._let_go()

    def _enqueue(self, write: Write) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        if self._open.holds(write):
            self._close_open()  # never two writes of one run in one statement
        done: asyncio.Future[Any] = loop.create_future()
        self._open.add(_Pending(write, done, loop.time()))
        if len(self._open.items) >= self._max:
            self._close_open()
        if self._sender is None:
            # Runs from the loop's next turn, with what else is ready by then.
            self._sender = loop.create_task(self._send_all())
        return done

    def _close_open(self) -> None:
        if self._open.items:
            self._ready.append(self._open)
            self._open = _Batch()

    async def _send_all(self) -> None:
        try:
            while True:
                if self._ready:
                    batch = self._ready.popleft()
                elif self._open.items:
                    batch, self._open = self._open, _Batch()
                else:
                    return
                await self._commit(batch.items)
        finally:
            self._sender = None
            # Cancelled (a shutdown): no writer is left waiting for an answer.
            for batch in [*self._ready, self._open]:
                for item in batch.items:
                    item.done.cancel()
            self._ready.clear()
            self._open = _Batch()

    async def _commit(self, items: list[_Pending]) -> None:
        loop = asyncio.get_running_loop()
        try:
            self._metrics.commit_batch(len(items), loop.time() - items[0].since)
            await self._apply(items)
        finally:
            for item in items:
                item.done.cancel()  # nothing if it was settled

    async def _held(self) -> AsyncConnection:
        """The batcher's connection, taken from the engine's pool when it has none, or
        when the one it holds was closed while idle (the server restarted, or ended it):
        a statement is never sent on a connection known to be gone."""
        if self._driver is not None and self._driver.is_closed():
            await self._let_go(broken=True)
        if self._connection is None:
            connection = await self._engine.connect()
            try:
                await connection.execution_options(isolation_level="AUTOCOMMIT")
            except BaseException:
                await connection.close()
                raise
            self._connection = connection
            self._driver = (await connection.get_raw_connection()).driver_connection
        return self._connection

    async def _let_go(self, *, broken: bool = False) -> None:
        """Gives the held connection back; `broken` (it may be mid-statement): closed
        for good, never handed out again."""
        connection, self._connection, self._driver = self._connection, None, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await (connection.invalidate() if broken else connection.close())

    async def _apply(self, items: list[_Pending]) -> None:
        writes = [i for i in items if isinstance(i.write, StepWrite)]
        births = [i for i in items if isinstance(i.write, Birth)]
        answers = [i.write for i in items if isinstance(i.write, Answer)]
        try:
            found, born = await step_writes.apply_batch(
                await self._held(),
                [i.write for i in writes],  # type: ignore[misc]
                answers,
                [i.write for i in births],  # type: ignore[misc]
            )
        except (sa_exc.DBAPIError, step_writes.Unencodable) as exc:
            # Refused by Postgres, or a write that cannot be encoded (nothing was sent).
            # Anything else, raised after the statement may have committed, is an unknown
            # outcome for every write: none is sent again.
            invalidated = getattr(exc, "connection_invalidated", False)
            if invalidated:
                await self._let_go()  # the next batch goes on a fresh connection
            if len(items) == 1 or invalidated:
                _fail(items, exc)
                return
            # Refused whole, so nothing of it was committed: each write on its own.
            log.info("a batch of %d writes was refused; writing each alone", len(items))
            for item in items:
                await self._apply([item])
            return
        except asyncio.CancelledError as exc:
            _fail(items, exc)
            await self._let_go(broken=True)  # it may be mid-statement
            raise
        except Exception as exc:  # a pool timeout, an outage: each writer decides
            _fail(items, exc)
            await self._let_go(broken=True)
            return
        for item, applied in zip(writes, found, strict=True):
            if applied is None:
                _settle(item, exception=StaleWrite(item.write.run_id))  # type: ignore[union-attr]
            else:
                _settle(item, result=applied)
        for item, made in zip(births, born, strict=True):
            _settle(item, result=made)
        for item in items:
            if isinstance(item.write, Answer):
                _settle(item, result=None)


def _settle(item: _Pending, *, result: Any = None, exception: BaseException | None = None) -> None:
    if item.done.done():
        return  # its waiter was cancelled; what was committed stays
    if exception is not None:
        item.done.set_exception(exception)
    else:
        item.done.set_result(result)


def _fail(items: list[_Pending], exc: BaseException) -> None:
    """Fails every item not settled yet."""
    for item in items:
        with contextlib.suppress(asyncio.InvalidStateError):
            _settle(item, exception=exc)
