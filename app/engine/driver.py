"""The in-process driver: one task per run this process advances; a poller that claims
runs nobody advances (their client stopped waiting, or their holder's lease lapsed);
lease upkeep for every run held here in one statement; cancels from any process through
LISTEN/NOTIFY; and waiting for a run to settle for a request's `wait_s`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Iterator
from typing import Any

from app.db.access import keys as keys_repo
from app.db.errors import is_unavailable
from app.db.lifecycle import events as events_repo
from app.db.lifecycle import leases as leases_repo
from app.db.lifecycle import runs
from app.db.limits import lineage
from app.db.session import retrying
from app.db.tools import mcp_declarations as mcp_declarations_repo
from app.db.tools import switches
from app.domain.lifecycle.claim_window import ClaimWindow
from app.domain.lifecycle.records import Run
from app.domain.lifecycle.run_changes import Sweep
from app.domain.lifecycle.status import ACTIVE_RUN_STATUSES
from app.engine.events.listener import Listener, named
from app.engine.limits import retention
from app.engine.process.lease import (
    Lease,
    LeaseKeeper,
    hand_back,
    hand_back_claim,
    released_if_unanswered,
)
from app.engine.process.liveness import Liveness
from app.engine.process.outage import outage
from app.engine.process.runtime import Runtime
from app.engine.steps.state import RunState
from app.engine.steps.stepper import claim, drive, lease_for, load_state, new_lease_token
from app.engine.webhooks.sender import WebhookSender
from app.observability.telemetry import background

log = logging.getLogger(__name__)
Key = tuple[str, str]
#: How often a waiter looks at a run advanced by another process.
POLL_FLOOR_S = 0.2
#: How often writes owed since an outage are tried again.
OWED_EVERY_S = 0.5
#: How often expired Idempotency-Key records are deleted.
PURGE_EVERY_S = 60.0


class Driver:
    #: What a use case waiting on a run reads for `POLL_FLOOR_S` (the facade's waiters).
    poll_floor_s = POLL_FLOOR_S

    def __init__(
        self,
        rt: Runtime,
        *,
        listen_url: str | None = None,
        webhooks: WebhookSender | None = None,
    ) -> None:
        self.rt = rt
        self.webhooks = webhooks
        self._tasks: dict[Key, asyncio.Task[None]] = {}
        self._leases: dict[Key, Lease] = {}
        #: The newest state of each run advanced here (and of finished ones still awaited).
        self._latest: dict[Key, Run] = {}
        #: One event per waiting request, set on each step this process commits (True) or
        #: only when the run stops being advanced: finished, parked, or let go (False).
        self._waiters: dict[Key, dict[asyncio.Event, bool]] = {}
        self._background: list[asyncio.Task[None]] = []
        self._reserved = 0
        self.window = ClaimWindow(born=rt.clock.monotonic())  # what the poll may take up
        self.keeper = LeaseKeeper(rt, lambda: list(self._leases.values()))
        channels = {
            runs.CANCEL_CHANNEL: self._on_cancel,
            lineage.RESERVED_CHANNEL: self._on_reserved,
            switches.CHANNEL: self._on_tools_switched,
            mcp_declarations_repo.CHANNEL: rt.mcp_declarations.on_notification,
            keys_repo.REVOKED_CHANNEL: rt.known_keys.on_notification,
            events_repo.CHANNEL: rt.events.on_notification,
        }
        self.liveness = Liveness(rt, lambda: list(self._leases.values()))
        self.listener = (
            Listener(
                listen_url,
                channels,
                not_from_self=frozenset({events_repo.CHANNEL}),
                on_connect=self.liveness.hold,
                on_lost=self.liveness.lost,
            )
            if listen_url
            else None
        )
        if self.listener is not None:
            rt.known_keys.listen_through(self.listener.ready.is_set)

    @property
    def free_slots(self) -> int:
        return self.rt.settings.max_active_runs - len(self._tasks) - self._reserved

    def _claimable(self) -> int:
        return self.window.room(len(self._tasks), self.free_slots, self.rt.clock.monotonic())

    def reserve(self) -> bool:
        """Holds a slot for a run about to be created leased here (concurrent creates must
        not all count the same free slot); give it back with `unreserve` before `adopt`."""
        if self.free_slots <= 0:
            return False
        self._reserved += 1
        return True

    def unreserve(self) -> None:
        self._reserved -= 1

    # -- advancing -------------------------------------------------------------------
    def kick(self, tenant_id: str, run_id: str) -> None:
        """Starts advancing the run here unless this process already does."""
        key = (tenant_id, run_id)
        if key in self._tasks or self.free_slots <= 0:
            return
        self._start(key, self._claim_and_drive(key))

    def run_child(self, tenant_id: str, run_id: str) -> None:
        """Starts advancing a delegated child here, past `max_active_runs` if need be: its
        parent holds a slot here and waits for it (counted, it could leave none free)."""
        key = (tenant_id, run_id)
        if key not in self._tasks:
            self._start(key, self._claim_and_drive(key))

    def is_advancing(self, tenant_id: str, run_id: str) -> bool:
        return (tenant_id, run_id) in self._tasks

    def adopt(self, lease: Lease, state: RunState) -> None:
        """Advances a run this process claimed itself (e.g. leased to it at creation)."""
        self._start(lease.key, self._drive(lease, state))

    def take_up(self, lease: Lease, run: Run) -> None:
        """Reads a run claimed here, then advances it (hands it back if it does not load)."""
        self._start(lease.key, self._load_and_drive(lease, run))

    def _start(self, key: Key, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work, name=f"run:{key[1]}")
        self._tasks[key] = task
        task.add_done_callback(lambda t, k=key: self._done(k, t))

    def _done(self, key: Key, task: asyncio.Task[None]) -> None:
        # Only forget what this task owned: a request's kick and the poller may race to
        # start the same run, and the loser must not unregister the winner.
        if self._tasks.get(key) is task:
            del self._tasks[key]
            self._leases.pop(key, None)
            latest = self._latest.get(key)
            if key not in self._waiters or latest is None or latest.status in ACTIVE_RUN_STATUSES:
                self._latest.pop(key, None)  # only a finished run's state outlives its task
        self._wake(key, ended=True)
        if not task.cancelled() and task.exception() is not None:
            log.error("advancing a run failed", exc_info=task.exception())

    @property
    def live(self) -> bool:  # holds its liveness lock (always, without a listener)
        return self.listener is None or self.rt.live

    async def _claim_and_drive(self, key: Key) -> None:
        claimed = await claim(self.rt, *key)
        if claimed is not None:
            await self._load_and_drive(*claimed)

    async def _load_and_drive(self, lease: Lease, run: Run) -> None:
        # Held from the claim on: renewed, and reachable by a cancel, while the history loads.
        self._leases[lease.key] = lease
        try:
            state = await load_state(self.rt, run)
        except BaseException:
            self._forget(lease)
            await self._release(lease)
            raise
        await self._drive(lease, state)

    async def _drive(self, lease: Lease, state: RunState) -> None:
        key = lease.key
        self._leases[key] = lease
        if not self.live:
            lease.fence()  # taken while this process may pass for dead
        try:
            await drive(lease, state, on_progress=lambda run: self._progress(key, run))
        finally:
            self._forget(lease)

    def _forget(self, lease: Lease) -> None:
        if self._leases.get(lease.key) is lease:
            del self._leases[lease.key]

    async def _release(self, lease: Lease) -> None:
        with contextlib.suppress(Exception):  # else the lease simply lapses
            await hand_back(self.rt, lease.tenant_id, lease.run_id, lease.token)

    def _progress(self, key: Key, run: Run) -> None:
        self._latest[key] = run
        self.window.stepped(self.rt.settings.max_active_runs)
        self._wake(key, ended=run.status not in ACTIVE_RUN_STATUSES)

    def _wake(self, key: Key, *, ended: bool) -> None:
        for event, every_step in self._waiters.get(key, {}).items():
            if every_step or ended:
                event.set()

    def interrupt(self, tenant_id: str, run_id: str) -> None:
        """A cancel arrived: stop the run's in-flight work now, if it is advanced here."""
        lease = self._leases.get((tenant_id, run_id))
        if lease is not None:
            lease.interrupt()

    def _on_cancel(self, payload: str) -> None:
        if payload:
            self.interrupt(*named(payload))

    def _on_reserved(self, payload: str) -> None:
        lease = self._leases.get(named(payload))
        if lease is not None:
            lease.children_seen = True

    def _on_tools_switched(self, tenant_id: str) -> None:
        self.rt.disabled_tools.forget(tenant_id)

    # -- waiting ---------------------------------------------------------------------
    async def wait(
        self, tenant_id: str, run_id: str, wait_s: float, known: Run | None = None
    ) -> Run:
        """The run once it leaves queued/running, or as it stands after `wait_s`. A run
        advanced here is answered from its holder's state, without a database read."""
        key = (tenant_id, run_id)
        loop = asyncio.get_running_loop()
        end = loop.time() + wait_s
        record = known
        # Only the end wakes it: a step that leaves the run running changes nothing here.
        with self.watching(tenant_id, run_id, every_step=False) as event:
            while True:
                event.clear()
                latest = self._latest.get(key)
                if latest is not None:
                    # The holder's state, unless what the caller knows is newer (a cancel
                    # it just recorded, say).
                    if record is None or latest.version >= record.version:
                        record = latest
                elif record is None or key not in self._tasks:
                    record = await self._read(tenant_id, run_id)
                left = end - loop.time()
                if record.status not in ACTIVE_RUN_STATUSES or left <= 0:
                    return record
                # Advanced here, every step (and the end) signals; advanced elsewhere, only
                # a fresh look tells, so look again every POLL_FLOOR_S.
                timeout = left if key in self._tasks else min(left, POLL_FLOOR_S)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await event.wait()

    @contextlib.contextmanager
    def watching(
        self, tenant_id: str, run_id: str, *, every_step: bool = True
    ) -> Iterator[asyncio.Event]:
        """An event set on each step this process commits for the run (or, not
        `every_step`, only on one that leaves it finished or parked), and when this
        process stops advancing it."""
        key = (tenant_id, run_id)
        event = asyncio.Event()
        self._waiters.setdefault(key, {})[event] = every_step
        try:
            yield event
        finally:
            waiters = self._waiters[key]
            waiters.pop(event, None)
            if not waiters:
                del self._waiters[key]
                if key not in self._tasks:
                    self._latest.pop(key, None)

    async def _read(self, tenant_id: str, run_id: str) -> Run:
        record = await retrying(self.rt.sessions, runs.get, tenant_id, run_id)
        assert record is not None
        return record

    # -- polling ---------------------------------------------------------------------
    def _quiet(self) -> contextlib.AbstractContextManager[Any]:
        return background(traced=self.rt.settings.trace_background)

    def start(self, *, poll: bool = True) -> None:
        """Lease upkeep and the listener always run (runs created here are renewed and
        hear cancels); the poller and webhook sender optionally. Quiet unless asked."""
        if poll:
            self._spawn("driver-poller", self._poll_forever())
        with self._quiet():
            if poll:
                self._spawn("purge", self._purge_forever())
            if poll and self.webhooks is not None:
                self._spawn("webhooks", self.webhooks.run_forever())
            self._spawn("leases", self.keeper.run_forever())
            self._spawn("owed-writes", self._pay_forever())
            self._spawn("events", self.rt.events.publish_forever(self._announce))
            if self.listener is not None:
                self._spawn("listener", self.listener.run_forever())

    def _spawn(self, name: str, work: Coroutine[Any, Any, None]) -> None:
        self._background.append(asyncio.create_task(work, name=name))

    async def _announce(self, payload: str) -> None:
        # Without a listener connection (or while it reconnects) other processes' streams
        # learn of these events from their poll.
        if self.listener is not None:
            await self.listener.notify(events_repo.CHANNEL, payload)

    async def _pay_forever(self) -> None:
        """Owed writes (see `engine.process.deferred`) go in as soon as the database takes them."""
        while True:
            await asyncio.sleep(OWED_EVERY_S)
            if len(self.rt.deferred) and await self.rt.deferred.pay():
                outage.over()

    async def _poll_forever(self) -> None:
        while True:
            try:
                # Not live (the listener is down): claims nothing, and says nothing of the
                # database either way.
                if self.live:
                    if self.listener is not None:
                        with self._quiet():
                            await self.liveness.take_over_dead()
                    if self.free_slots > 0:
                        await self.poll_once()
                        outage.over()  # the database answered: runs waiting on it go on
            except Exception as exc:
                self._failed(exc, "the driver's poll")
            await asyncio.sleep(self.rt.settings.driver_poll_s)

    async def _purge_forever(self) -> None:
        """Retention, a pass a minute, beside the poll: a long purge never holds up claims."""
        while True:
            try:
                with self._quiet():
                    await retention.purge_all(self.rt)
            except Exception as exc:
                self._failed(exc, "the purge")
            await asyncio.sleep(PURGE_EVERY_S)

    def _failed(self, exc: Exception, what: str) -> None:
        if is_unavailable(exc):
            outage.seen(exc)
        else:
            log.warning("%s failed; trying again", what, exc_info=True)

    async def poll_once(self) -> int:
        """Claims what its window allows (and sweeps parked runs due), then drives it."""
        free = self.free_slots
        if free <= 0 or not self.live:
            return 0
        rt = self.rt
        sent = asyncio.get_running_loop().time()

        claim_id = new_lease_token()
        with self._quiet(), released_if_unanswered(rt, lambda: hand_back_claim(rt, claim_id)):
            claimed = await retrying(
                rt.sessions,
                leases_repo.claim_runnable,
                owner=rt.owner,
                claim_id=claim_id,
                limit=self._claimable(),
                lease_s=rt.settings.lease_s,
                db_time=rt.db_time,
                sweep=Sweep(at=rt.clock.now(), limit=free),
            )
        for run, queued_s in claimed:
            rt.events.committed(run.tenant_id, run.id)
            key = (run.tenant_id, run.id)
            lease = lease_for(rt, run, sent, queued_s)
            if key in self._tasks:
                # A request's kick started on it meanwhile (its own claim will fail): hand
                # this lease back so the next poll can take the run up.
                await self._release(lease)
                continue
            self._start(key, self._load_and_drive(lease, run))
        return len(claimed)

    async def stop(self) -> None:
        """Stops advancing; hands the leases back, so the runs go on elsewhere at once."""
        leases = list(self._leases.values())
        tasks = [*self._background, *self._tasks.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.webhooks is not None:
            await self.webhooks.stop()
        for lease in leases:
            await self._release(lease)
        with contextlib.suppress(Exception), self._quiet():  # else it is found dead
            await self.liveness.leave()
