"""The in-process driver: one task per run this process advances, a poller that claims
runs nobody advances (their client stopped waiting, or their holder's lease expired),
and waiting for a run to settle for a request's `wait_s`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from app.db import runs_repo
from app.db.runs_repo import RunRecord
from app.domain.status import ACTIVE_RUN_STATUSES
from app.engine import idempotency
from app.engine.lease import Lease
from app.engine.runtime import Runtime
from app.engine.stepper import claim, drive, new_lease_token

log = logging.getLogger(__name__)
Key = tuple[str, str]
POLL_FLOOR_S = 0.2
#: How often expired Idempotency-Key records are deleted.
PURGE_EVERY_S = 60.0


class Driver:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._tasks: dict[Key, asyncio.Task[None]] = {}
        self._leases: dict[Key, Lease] = {}
        #: One event per waiting request, set on each step this process commits.
        self._waiters: dict[Key, set[asyncio.Event]] = {}
        self._poller: asyncio.Task[None] | None = None

    # -- advancing -------------------------------------------------------------------
    def kick(self, tenant_id: str, run_id: str) -> None:
        """Starts advancing the run here unless this process already does."""
        key = (tenant_id, run_id)
        if key in self._tasks or len(self._tasks) >= self.rt.settings.max_active_runs:
            return
        self._start(key, self._claim_and_drive(key))

    def _start(self, key: Key, work) -> None:  # type: ignore[no-untyped-def]
        task = asyncio.create_task(work, name=f"run:{key[1]}")
        self._tasks[key] = task
        task.add_done_callback(lambda t, k=key: self._done(k, t))

    def _done(self, key: Key, task: asyncio.Task[None]) -> None:
        # Only forget what this task owned: a request's kick and the poller may race to
        # start the same run, and the loser must not unregister the winner.
        if self._tasks.get(key) is task:
            del self._tasks[key]
            self._leases.pop(key, None)
        self._notify(key)
        if not task.cancelled() and task.exception() is not None:
            log.error("advancing a run failed", exc_info=task.exception())

    async def _claim_and_drive(self, key: Key) -> None:
        lease = await claim(self.rt, *key)
        if lease is not None:
            await self._drive(key, lease)

    async def _drive(self, key: Key, lease: Lease) -> None:
        self._leases[key] = lease
        try:
            await drive(lease, on_progress=lambda: self._notify(key))
        finally:
            if self._leases.get(key) is lease:
                del self._leases[key]

    def _notify(self, key: Key) -> None:
        for event in self._waiters.get(key, ()):
            event.set()

    def interrupt(self, tenant_id: str, run_id: str) -> None:
        """A cancel arrived here: stop the run's in-flight work now, not at the next poll."""
        lease = self._leases.get((tenant_id, run_id))
        if lease is not None:
            lease.interrupt()

    # -- waiting ---------------------------------------------------------------------
    async def wait(self, tenant_id: str, run_id: str, wait_s: float) -> RunRecord:
        """The run once it leaves queued/running, or as it stands after `wait_s`."""
        key = (tenant_id, run_id)
        loop = asyncio.get_running_loop()
        end = loop.time() + wait_s
        event = asyncio.Event()
        waiters = self._waiters.setdefault(key, set())
        waiters.add(event)
        try:
            while True:
                event.clear()
                async with self.rt.sessions() as session:
                    record = await runs_repo.get(session, tenant_id, run_id)
                assert record is not None
                left = end - loop.time()
                if record.status not in ACTIVE_RUN_STATUSES or left <= 0:
                    return record
                # Advanced here, every step (and the end) signals; advanced elsewhere, only
                # a fresh look tells, so look again every POLL_FLOOR_S.
                timeout = left if key in self._tasks else min(left, POLL_FLOOR_S)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), timeout=timeout)
        finally:
            waiters.discard(event)
            if not waiters:
                self._waiters.pop(key, None)

    # -- polling ---------------------------------------------------------------------
    def start(self) -> None:
        self._poller = asyncio.create_task(self._poll_forever(), name="driver-poller")

    async def _poll_forever(self) -> None:
        loop = asyncio.get_running_loop()
        next_purge = loop.time()
        while True:
            try:
                await self.poll_once()
                if loop.time() >= next_purge:
                    await idempotency.purge_expired(self.rt)
                    next_purge = loop.time() + PURGE_EVERY_S
            except Exception:
                log.warning("the driver's housekeeping failed; trying again", exc_info=True)
            await asyncio.sleep(self.rt.settings.driver_poll_s)

    async def poll_once(self) -> int:
        """Claims runnable runs (skipping rows other drivers hold) and advances them."""
        free = self.rt.settings.max_active_runs - len(self._tasks)
        if free <= 0:
            return 0
        now = self.rt.clock.now()
        expires = now + timedelta(seconds=self.rt.settings.lease_s)
        claimed: list[tuple[Key, Lease]] = []
        async with self.rt.sessions.begin() as session:
            for tenant_id, run_id in await runs_repo.runnable(session, now=now, limit=free):
                if (tenant_id, run_id) in self._tasks:
                    continue
                token = new_lease_token()
                record = await runs_repo.claim(
                    session,
                    tenant_id=tenant_id,
                    run_id=run_id,
                    owner=self.rt.settings.instance_id,
                    token=token,
                    now=now,
                    expires_at=expires,
                )
                if record is not None:
                    claimed.append(
                        ((tenant_id, run_id), Lease(self.rt, tenant_id, run_id, token, expires))
                    )
        for key, lease in claimed:
            self._start(key, self._drive(key, lease))
        return len(claimed)

    async def stop(self) -> None:
        """Stops advancing; the leases held are handed back so another process (or this
        one after a restart) resumes the runs without waiting for them to expire."""
        leases = list(self._leases.values())
        tasks = [t for t in [self._poller, *self._tasks.values()] if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for lease in leases:
            with contextlib.suppress(Exception):
                async with self.rt.sessions.begin() as session:
                    await runs_repo.release(
                        session, tenant_id=lease.tenant_id, run_id=lease.run_id, token=lease.token
                    )
