"""Writes a process still owes the database after an outage: the answer of a request whose
Idempotency-Key could not be completed, or the release of a claim whose request was
refused. Kept in memory and tried again until the database takes them, so a retried key
gets its answer (or is free again) as soon as the database is back, not only once its
lock has lapsed."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)
#: The most writes one process keeps owing (beyond, the oldest are dropped: their keys'
#: locks lapse on their own).
MAX_OWED = 10_000


class Deferred:
    def __init__(self) -> None:
        self._owed: list[Callable[[], Awaitable[object]]] = []

    def owe(self, write: Callable[[], Awaitable[object]]) -> None:
        self._owed.append(write)
        del self._owed[:-MAX_OWED]

    def __len__(self) -> int:
        return len(self._owed)

    async def pay(self) -> int:
        """Tries every owed write once, in order; keeps those that fail. Returns how many
        went through."""
        owed, self._owed = self._owed, []
        paid = 0
        for write in owed:
            try:
                await write()
                paid += 1
            except Exception:
                self._owed.append(write)
        if self._owed:
            log.debug("%d writes still owed to the database", len(self._owed))
        return paid
