"""Death detected, not waited out (SPEC §2, on replicas). A process holds its liveness lock
on its listener's connection (`db.lifecycle.liveness`); the poll finds processes whose lock
nobody holds and takes them over: the leases they held lapse at once and the claim poll
takes their runs up, instead of after `TOOLGATE_LEASE_S`. The lease stays the bound for
what cannot be detected (a partition, a hung process).

A process is taken over only when it has been found dead twice, `GRACE_S` apart: a live
process whose connection dropped (a blip, a restart of the database) reconnects and holds
its lock again within that, and keeps its runs. While its listener is down, a process
claims no run (`Driver.live`), and fences every lease it holds (`Lease.fence`): nothing new
starts on them until it holds its lock again, so by the time another process may take it
over, it has stopped. Holding its lock again, it finds its row still there (nobody took it
over: the fences are lifted) or gone (taken over: its leases are lost and handed back)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import asyncpg

from app.db.lifecycle import liveness as liveness_repo
from app.engine.process.lease import Lease, hand_back

if TYPE_CHECKING:
    from app.engine.process.runtime import Runtime

log = logging.getLogger(__name__)

#: How long a process found dead must stay dead before it is taken over: longer than a
#: live one takes to connect again (`listener.AGAIN_S`) after its connection dropped.
GRACE_S = 2.0


class Liveness:
    """`held`: the leases this process holds."""

    def __init__(self, rt: Runtime, held: Callable[[], Iterable[Lease]]) -> None:
        self.rt = rt
        self._held = held
        #: Registered before: a row found gone then means it was taken over.
        self._registered = False
        #: Processes found dead, with when they were first found so (`clock.monotonic`).
        self._suspects: dict[str, float] = {}

    async def hold(self, connection: asyncpg.Connection) -> None:
        """On each new listener connection, before it is ready: the lock (waiting while
        another process takes this one over), then the row."""
        await connection.execute(liveness_repo.HOLD_WITHIN)
        await connection.execute(liveness_repo.HOLD, self.rt.owner_key)
        wrote = await connection.fetchval(liveness_repo.REGISTER, self.rt.owner, self.rt.owner_key)
        self.rt.live = True
        # Registered anew after it had been: it was taken over, and what it held was let
        # lapse for others. Else nobody took it (nobody can take a process never registered).
        taken = self._registered and wrote is not None
        self._registered = True
        for lease in list(self._held()):
            if not taken:
                lease.unfence()
                continue
            lease.lose()
            with contextlib.suppress(Exception):  # else it lapses
                await hand_back(self.rt, lease.tenant_id, lease.run_id, lease.token)

    def lost(self) -> None:
        """The listener's connection is gone, and the lock with it: nothing new starts on
        any run held here until the lock is held again (self-fencing)."""
        self.rt.live = False
        for lease in self._held():
            lease.fence()

    async def take_over_dead(self) -> int:
        """Takes over the processes found dead twice, `GRACE_S` apart; how many leases
        lapsed."""
        async with self.rt.reads() as session:
            dead = await liveness_repo.dead(session, me=self.rt.owner)
        now = self.rt.clock.monotonic()
        self._suspects = {owner: self._suspects.get(owner, now) for owner in dead}
        due = [owner for owner, seen in self._suspects.items() if now - seen >= GRACE_S]
        if not due:
            return 0
        async with self.rt.reads() as session:
            lapsed = await liveness_repo.take_over(session, owners=due, db_time=self.rt.db_time)
        for owner in due:
            del self._suspects[owner]
        log.info("took over %d dead processes: %d leases lapsed", len(due), lapsed)
        return lapsed

    async def leave(self) -> None:
        """A clean stop (its leases handed back): its row goes."""
        async with self.rt.reads() as session:
            await liveness_repo.leave(session, me=self.rt.owner)
