"""Wakes this process's event streams when events are committed: at once for commits made
here, and, for commits made by other processes, through one NOTIFY that each process sends
at most every `COALESCE_S` for everything it committed meanwhile.

A NOTIFY inside every step's transaction would make all notifying commits of the database
take one lock in turn, through their WAL flush; a coalesced one, outside the step, costs a
statement per process per `COALESCE_S` at most and none while nothing happens. A wake-up
only says "look again": streams read the events from the database, and poll anyway now
and then, so a notification lost with its process delays a stream, never loses an event.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable

from app.db.errors import is_unavailable
from app.engine.process.outage import outage

log = logging.getLogger(__name__)
#: The longest a commit waits to be announced to other processes.
COALESCE_S = 0.05
#: A NOTIFY payload must stay under 8000 bytes; beyond this, "look, everyone" is sent.
MAX_PAYLOAD = 7000
EVERYTHING = "*"
Key = tuple[str, str]


class Subscription:
    """One stream's interest: a tenant's events, or one run's (`run_id`)."""

    def __init__(self, tenant_id: str, run_id: str | None) -> None:
        self.tenant_id = tenant_id
        self.run_id = run_id
        self._woken = asyncio.Event()
        #: When it was last woken (event-loop time): after the commit that woke it.
        self.woken_at = float("-inf")

    def wake(self) -> None:
        self.woken_at = asyncio.get_running_loop().time()
        self._woken.set()

    async def wait(self, seconds: float) -> bool:
        """True when woken within `seconds` (and ready to be woken again)."""
        try:
            async with asyncio.timeout(seconds):
                await self._woken.wait()
        except TimeoutError:
            return False
        self._woken.clear()
        return True


class EventHub:
    def __init__(self) -> None:
        self._by_tenant: dict[str, set[Subscription]] = {}
        self._unsent: set[Key] = set()
        self._dirty = asyncio.Event()
        self._watchers: list[Callable[[], None]] = []

    def watch(self, callback: Callable[[], None]) -> None:
        """`callback` is called on every commit of events, here or (announced) elsewhere,
        e.g. to wake the webhook sender; it must only flag, never block."""
        self._watchers.append(callback)

    def _tell_watchers(self) -> None:
        for callback in self._watchers:
            callback()

    def subscribe(self, tenant_id: str, run_id: str | None = None) -> Subscription:
        """Woken from now on; `unsubscribe` when done."""
        subscription = Subscription(tenant_id, run_id)
        self._by_tenant.setdefault(tenant_id, set()).add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        subs = self._by_tenant.get(subscription.tenant_id)
        if subs is not None:
            subs.discard(subscription)
            if not subs:
                del self._by_tenant[subscription.tenant_id]

    def committed(self, tenant_id: str, run_id: str) -> None:
        """Events of this run were just committed here."""
        key = (tenant_id, run_id)
        self._wake([key])
        self._unsent.add(key)
        self._dirty.set()
        self._tell_watchers()

    def _wake(self, keys: Iterable[Key]) -> None:
        for tenant_id, run_id in keys:
            for sub in self._by_tenant.get(tenant_id, ()):
                if sub.run_id is None or sub.run_id == run_id:
                    sub.wake()

    def wake_all(self) -> None:
        for subs in self._by_tenant.values():
            for sub in subs:
                sub.wake()

    def on_notification(self, payload: str) -> None:
        """A notification from any process (ours included: waking twice is harmless). The
        listener passes "" after reconnecting: whatever was said meanwhile is lost."""
        self._tell_watchers()
        if payload in ("", EVERYTHING):
            self.wake_all()
            return
        try:
            keys = [(str(t), str(r)) for t, r in json.loads(payload)]
        except (ValueError, TypeError):
            self.wake_all()
            return
        self._wake(keys)

    @staticmethod
    def payload(keys: Iterable[Key]) -> str:
        text = json.dumps(sorted(keys), separators=(",", ":"))
        return text if len(text.encode()) <= MAX_PAYLOAD else EVERYTHING

    async def publish_forever(self, notify: Callable[[str], Awaitable[None]]) -> None:
        """Sends what was committed here to the other processes, coalesced."""
        while True:
            await self._dirty.wait()
            await asyncio.sleep(COALESCE_S)
            self._dirty.clear()
            keys, self._unsent = self._unsent, set()
            try:
                await notify(self.payload(keys))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # The other processes' streams poll: they learn of these events later.
                if is_unavailable(exc):
                    outage.seen(exc)
                else:
                    log.warning("events could not be announced to other processes")
