"""A stepper's hold on one run: renewal in the background, and a stop signal for
in-flight work when the lease is lost or a cancel arrives from any process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import runs_repo
from app.domain.status import RunStatus, check_run_transition
from app.engine.runtime import Runtime

log = logging.getLogger(__name__)
T = TypeVar("T")


class Interrupted(Exception):
    """In-flight work stopped: the run was cancelled or its lease was lost."""


@dataclass
class Lease:
    """Held from a successful claim. `expires_at` is this holder's own view of its expiry:
    past it, nothing new is started even if the database has not said "lost" yet."""

    rt: Runtime
    tenant_id: str
    run_id: str
    token: str
    expires_at: datetime
    lost: bool = False
    cancel_seen: bool = False
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    async def write(
        self,
        session: AsyncSession,
        *,
        values: Mapping[str, Any] | None = None,
        events: Sequence[runs_repo.Event] = (),
    ) -> runs_repo.RunRecord:
        """Changes the run under this lease: conditional on its token, so a stepper that
        lost the lease writes nothing (StaleWrite). A status change is checked against the
        transition table from `running`, the only status a lease holder advances, and the
        write is conditional on that status too."""
        target = (values or {}).get("status")
        if target is not None:
            check_run_transition(RunStatus.RUNNING, RunStatus(target))
        return await runs_repo.write(
            session,
            tenant_id=self.tenant_id,
            run_id=self.run_id,
            lease_token=self.token,
            now=self.rt.clock.now(),
            values=values,
            events=events,
            expect_status=RunStatus.RUNNING,
        )

    def start(self) -> None:
        self._task = asyncio.create_task(self._beat(), name=f"lease:{self.run_id}")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def check(self) -> None:
        """Raises Interrupted when the run is stopping (cancel seen, lease lost or lapsed)."""
        if self._stop.is_set() or self.rt.clock.now() >= self.expires_at:
            raise Interrupted()

    def interrupt(self) -> None:
        """Stops in-flight work of this run at once (a cancel seen in this process)."""
        self.cancel_seen = True
        self._stop.set()

    def rearm(self) -> None:
        if not self.lost:
            self._stop.clear()

    async def _beat(self) -> None:
        """Looks for a cancel every cancel_poll_s (a read), and renews the lease every
        lease_s / 3 (a write); either finding the lease gone stops the run's work."""
        settings = self.rt.settings
        renew_every = settings.lease_s / 3
        loop = asyncio.get_running_loop()
        next_renewal = loop.time() + renew_every
        while True:
            await asyncio.sleep(min(settings.cancel_poll_s, renew_every))
            try:
                if loop.time() >= next_renewal:
                    await self._renew()
                    next_renewal = loop.time() + renew_every
                else:
                    await self._look()
            except Exception:  # the database blinked: the lease holds until it expires
                log.warning("lease upkeep failed for a run", exc_info=True)
            if self.lost:
                return

    async def _renew(self) -> None:
        expires_at = self.rt.clock.now() + timedelta(seconds=self.rt.settings.lease_s)
        async with self.rt.sessions.begin() as session:
            record = await runs_repo.renew(
                session,
                tenant_id=self.tenant_id,
                run_id=self.run_id,
                token=self.token,
                expires_at=expires_at,
            )
        if record is None:
            self._lose()
            return
        self.expires_at = expires_at
        self._notice(record.cancel_requested_at)

    async def _look(self) -> None:
        async with self.rt.sessions() as session:
            token, cancel_requested_at = await runs_repo.peek(
                session, tenant_id=self.tenant_id, run_id=self.run_id
            )
        if token != self.token:
            self._lose()
        else:
            self._notice(cancel_requested_at)

    def _lose(self) -> None:
        self.lost = True
        self._stop.set()

    def _notice(self, cancel_requested_at: datetime | None) -> None:
        if cancel_requested_at is not None and not self.cancel_seen:
            self.interrupt()

    async def guarded(self, work: Awaitable[T], timeout_s: float) -> T:
        """Awaits `work` unless the run is stopped first (Interrupted) or `timeout_s`
        passes (TimeoutError); the work is cancelled in both cases."""
        task = asyncio.ensure_future(work)
        stop = asyncio.create_task(self._stop.wait())
        try:
            done, _ = await asyncio.wait(
                {task, stop}, timeout=max(0.0, timeout_s), return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            task.cancel()  # our own task is going away: the work must not outlive it
            raise
        finally:
            stop.cancel()
        if task in done:
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        if stop in done:
            raise Interrupted()
        raise TimeoutError()
