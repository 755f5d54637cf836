"""A stepper's hold on one run, and the stop signal for its in-flight work.

Leases are renewed per process, not per run (`LeaseKeeper`: one statement every
`lease_s / 3` for every lease the process holds, on the database's clock); a cancel
reaches the holder through LISTEN/NOTIFY, with that statement as the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from app.db.errors import is_unavailable
from app.db.lifecycle import leases as leases_repo
from app.domain.errors import ToolgateError
from app.engine.process.outage import outage
from app.engine.process.runtime import Runtime

if TYPE_CHECKING:
    from app.domain.lifecycle.records import Run

log = logging.getLogger(__name__)
T = TypeVar("T")


class Interrupted(ToolgateError):
    """In-flight work stopped: the run was cancelled or its lease was lost."""


class NotStarted(Interrupted):
    """The run was already stopping: the work was never started."""


@dataclass
class Lease:
    """Held from a successful claim. `valid_until` (the event loop's monotonic clock) is a
    conservative bound of the lease's expiry, counted from before the statement that set
    it: past it nothing new starts, whatever the database says later."""

    rt: Runtime
    tenant_id: str
    run_id: str
    token: str
    valid_until: float
    #: Seconds the run waited, runnable, before this claim took it up (telemetry only).
    queued_s: float = 0.0
    lost: bool = False
    cancel_seen: bool = False
    #: A child reserved part of the run's budgets while this lease held it: its turns
    #: are no longer held back (`commit.hold`), so each write learns the reservations.
    children_seen: bool = False
    #: Told of the run as committed by a write the stepper does not see end (a held turn
    #: sent alone while its reads go on), so that a waiter sees it too.
    progress: Callable[[Run], None] = lambda run: None
    #: A cancel seen or the lease lost, and not rearmed since.
    _halted: bool = False
    #: The guarded waits in flight: a stop wakes each of them at once.
    _wakers: set[asyncio.Future[str]] = field(default_factory=set)
    #: This process lost its liveness lock (`engine.process.liveness`): nothing new starts
    #: until it holds it again; work in flight goes on, written as its token allows.
    fenced: bool = False
    #: Set when the fence is lifted or the run is halted (a cancel, a loss): what a fenced
    #: wait wakes on.
    _woken: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def key(self) -> tuple[str, str]:
        return (self.tenant_id, self.run_id)

    @property
    def lapsed(self) -> bool:
        return self.lost or asyncio.get_running_loop().time() >= self.valid_until

    @property
    def stopping(self) -> bool:
        """Cancel seen, lease lost, lapsed or fenced: nothing new may start."""
        return self._halted or self.lapsed or self.fenced

    def check(self) -> None:
        """Raises Interrupted when the run is stopping (cancel seen, lease lost, lapsed or
        fenced)."""
        if self.stopping:
            raise Interrupted()

    def interrupt(self) -> None:
        """Stops in-flight work of this run at once (a cancel seen by this process)."""
        self.cancel_seen = True
        self._halt()

    def lose(self) -> None:
        self.lost = True
        self._halt()

    def _halt(self) -> None:
        self._halted = True
        self._woken.set()
        for waker in self._wakers:
            _wake(waker, _STOPPED)

    def fence(self) -> None:
        self.fenced = True
        if not self._halted:
            self._woken.clear()

    def unfence(self) -> None:
        self.fenced = False
        self._woken.set()

    async def until_unfenced(self) -> None:
        """Until the fence is lifted, the run is halted (a cancel, a loss), or the lease
        lapses (past `valid_until`)."""
        left = self.valid_until - asyncio.get_running_loop().time()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._woken.wait(), max(0.0, left))

    def rearm(self) -> None:
        if not self.lost:
            self._halted = False
            if self.fenced:
                self._woken.clear()

    def renewed(self, valid_until: float) -> None:
        self.valid_until = max(self.valid_until, valid_until)

    async def guarded(self, work: Awaitable[T], timeout_s: float) -> T:
        """Awaits `work` unless the run is stopped first (Interrupted) or `timeout_s`
        passes (TimeoutError); the work is cancelled in both cases. Work is not even
        started once the run is stopping. Work that has finished is its answer, whatever
        woke the wait: a result is never dropped for a stop that came with it."""
        if self._halted:
            if asyncio.iscoroutine(work):
                work.close()
            raise NotStarted()
        task = asyncio.ensure_future(work)
        # One future woken by whichever comes first (the work's end, a stop, the timer):
        # a model call and a tool call each pass here, and `asyncio.wait` on the work and
        # a task waiting for the stop cost two tasks and their callbacks more.
        loop = asyncio.get_running_loop()
        waker: asyncio.Future[str] = loop.create_future()
        done = functools.partial(_wake, waker, _DONE)
        task.add_done_callback(done)
        timer = loop.call_later(max(0.0, timeout_s), _wake, waker, _TIMED_OUT)
        self._wakers.add(waker)
        try:
            why = await waker
        except asyncio.CancelledError:
            task.cancel()  # our own task is going away: the work must not outlive it
            raise
        finally:
            timer.cancel()
            self._wakers.discard(waker)
            task.remove_done_callback(done)
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if why == _STOPPED:
            raise Interrupted()
        raise TimeoutError()


_DONE, _STOPPED, _TIMED_OUT = "done", "stopped", "timed out"


def _wake(waker: asyncio.Future[str], why: str, *_: object) -> None:
    if not waker.done():
        waker.set_result(why)


async def hand_back(rt: Runtime, tenant_id: str, run_id: str, token: str) -> None:
    """Releases the run's lease if `token` still holds it: any driver may claim it now."""
    async with rt.sessions.begin() as session:
        await leases_repo.release(session, tenant_id=tenant_id, run_id=run_id, token=token)


async def hand_back_claim(rt: Runtime, claim_id: str) -> None:
    """Releases every lease the poller's claim `claim_id` took and still holds."""
    async with rt.sessions.begin() as session:
        await leases_repo.release_claim(session, owner=rt.owner, claim_id=claim_id)


@contextlib.contextmanager
def released_if_unanswered(rt: Runtime, release: Callable[[], Awaitable[object]]) -> Iterator[None]:
    """For a statement that takes a lease for this process: when the database fails to
    answer it, it may have committed with its answer lost, leaving the lease held here by
    nobody who advances the run. `release` (conditional on the lease's token) is then owed
    (`engine.process.deferred`) and goes in once the database answers, so that a driver
    takes the run up at once rather than when its lease lapses."""
    try:
        yield
    except Exception as exc:
        if is_unavailable(exc):
            rt.deferred.owe(release)
        raise


class LeaseKeeper:
    """Renews every lease this process holds with one statement every `lease_s / 3`; the
    same statement answers which of those runs a client asked to cancel, and which
    leases were lost (another process took the run after they lapsed)."""

    def __init__(self, rt: Runtime, held: Callable[[], Iterable[Lease]]) -> None:
        self.rt = rt
        self._held = held

    async def renew_once(self) -> None:
        # A fenced lease is not renewed: a process taken over as dead must not keep what
        # the takeover let lapse.
        leases = {held.key: held for held in self._held() if not (held.lost or held.fenced)}
        if not leases:
            return
        lease_s = self.rt.settings.lease_s
        sent = asyncio.get_running_loop().time()
        async with self.rt.sessions.begin() as session:
            still_held = await leases_repo.renew_all(
                session,
                held=[(*key, lease.token) for key, lease in leases.items()],
                lease_s=lease_s,
                db_time=self.rt.db_time,
            )
        for key, lease in leases.items():
            if key not in still_held:
                lease.lose()
                continue
            lease.renewed(sent + lease_s)
            if still_held[key] and not lease.cancel_seen:
                lease.interrupt()

    async def run_forever(self) -> None:
        every = self.rt.settings.lease_s / 3
        while True:
            await asyncio.sleep(every)
            try:
                await self.renew_once()
            except Exception as exc:  # the database blinked: the leases hold until they lapse
                if is_unavailable(exc):
                    outage.seen(exc)
                else:
                    log.warning("lease upkeep failed; trying again", exc_info=True)
            else:
                outage.over()
