"""The principals of API keys this process looked up lately, kept for a few seconds so that
a busy key costs a request no statement.

A revocation must still hold everywhere, so an entry is kept and used only while the
process listens for revocations (`db.access.keys.REVOKED_CHANNEL`, announced in the
revoking transaction): a key revoked by any process is forgotten here when its
notification arrives, at once in the process that revoked it. While the listening
connection is down nothing is kept or used; when it is back, everything is forgotten
(what was announced meanwhile is lost). An entry also lapses after `ttl_s`, the bound for
a notification lost unseen (a connection cut without a word)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.domain.tools.specs import Principal
from app.engine.events.listener import named


@dataclass(frozen=True, slots=True)
class _Known:
    tenant_id: str
    key_id: str
    principal: Principal
    until: float


class KnownKeys:
    def __init__(
        self, ttl_s: float, monotonic: Callable[[], float], *, max_keys: int = 10_000
    ) -> None:
        """`ttl_s` 0: nothing is kept. `monotonic`: seconds that never go back."""
        self._ttl_s = ttl_s
        self._monotonic = monotonic
        self._max = max_keys
        self._known: dict[str, _Known] = {}
        #: Counts what was forgotten: a lookup that began before a forgetting may have read
        #: a key since revoked, and is not kept.
        self._forgettings = 0
        self._listening: Callable[[], bool] = lambda: False

    def listen_through(self, listening: Callable[[], bool]) -> None:
        """`listening()`: whether revocations reach this process now."""
        self._listening = listening

    @property
    def in_use(self) -> bool:
        return self._ttl_s > 0 and self._listening()

    def get(self, key_hash: str) -> Principal | None:
        if not self.in_use:
            return None
        known = self._known.get(key_hash)
        if known is None:
            return None
        if known.until <= self._monotonic():
            del self._known[key_hash]
            return None
        return known.principal

    def ticket(self) -> int:
        """Taken before a lookup and given to `keep` with its answer."""
        return self._forgettings

    def keep(
        self, key_hash: str, tenant_id: str, key_id: str, principal: Principal, ticket: int
    ) -> None:
        if not self.in_use or ticket != self._forgettings:
            return
        if len(self._known) >= self._max:
            self._known.pop(next(iter(self._known)))  # the longest kept
        until = self._monotonic() + self._ttl_s
        self._known[key_hash] = _Known(tenant_id, key_id, principal, until)

    def forget(self, tenant_id: str, key_id: str) -> None:
        self._forgettings += 1
        for key_hash, known in list(self._known.items()):
            if known.tenant_id == tenant_id and known.key_id == key_id:
                del self._known[key_hash]

    def forget_all(self) -> None:
        self._forgettings += 1
        self._known.clear()

    def on_notification(self, payload: str) -> None:
        """A revocation (`tenant key_id`), or "" when the listener reconnected."""
        tenant_id, key_id = named(payload)
        if key_id:
            self.forget(tenant_id, key_id)
        else:
            self.forget_all()
