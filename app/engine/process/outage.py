"""Whether this process sees the database down: one warning when it stops answering, one
line when it is back, however many requests, runs and streams meet it; and a way for the
parts that wait on it to go on as soon as any part sees it answer again."""

from __future__ import annotations

import asyncio
import logging


class Outage:
    """Whether this process currently sees the database down; says so once each way."""

    def __init__(self, log: logging.Logger) -> None:
        self._log = log
        self.down = False
        self._waiters: set[asyncio.Event] = set()

    def seen(self, error: BaseException) -> None:
        if not self.down:
            self.down = True
            self._log.warning("the database is unavailable (%s)", type(error).__name__)

    def over(self) -> None:
        if self.down:
            self.down = False
            self._log.warning("the database answers again")
        for waiter in self._waiters:
            waiter.set()

    async def wait_over(self, timeout_s: float) -> None:
        """Until some part of this process sees the database answer again, or `timeout_s`."""
        if not self.down:
            return
        waiter = asyncio.Event()  # one per waiter: no event outlives its event loop
        self._waiters.add(waiter)
        try:
            async with asyncio.timeout(timeout_s):
                await waiter.wait()
        except TimeoutError:
            pass
        finally:
            self._waiters.discard(waiter)


#: The process's one view of the database (every engine and every request share it).
outage = Outage(logging.getLogger("app.outage"))
