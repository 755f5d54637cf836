"""How long finished work is kept (the config's `retention`), as the moments before which
each kind of row may go. Only finished runs are ever purged: a run in flight or awaiting
approval is kept, whatever its age."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class Kind(StrEnum):
    """What a purge removes, in the order a pass takes them."""

    #: Finished runs with their turns, calls, previews, script and events.
    RUNS = "runs"
    #: The events of finished runs kept longer than their events.
    EVENTS = "events"
    #: Webhook deliveries that are done: sent, failed for good, or given up.
    DELIVERIES = "deliveries"
    #: Idempotency-Keys past their expiry.
    IDEMPOTENCY_KEYS = "idempotency_keys"
    #: Versions of technologies no snapshot run can still read (kept as long as needed,
    #: whatever the config says: see `HISTORY_GRACE_S`).
    TECHNOLOGY_HISTORY = "technology_history"


#: A superseded version goes only once its successor is this old (on the database's
#: clock), besides being seen by every unfinished snapshot run: a run being created while
#: the purge runs is not visible to it yet, but its snapshot may predate the successor.
HISTORY_GRACE_S = 300


@dataclass(frozen=True)
class Retention:
    runs_days: int = 30
    events_days: int = 30
    idempotency_keys_h: int = 24
    deliveries_days: int = 7

    def cutoffs(self, now: datetime) -> dict[Kind, datetime]:
        """For each kind, the moment before which its rows go (an Idempotency-Key's own
        expiry already says when it goes, and the history's runs: `now`)."""
        return {
            Kind.RUNS: now - timedelta(days=self.runs_days),
            Kind.EVENTS: now - timedelta(days=self.events_days),
            Kind.DELIVERIES: now - timedelta(days=self.deliveries_days),
            Kind.IDEMPOTENCY_KEYS: now,
            Kind.TECHNOLOGY_HISTORY: now,
        }

    @property
    def idempotency_ttl_s(self) -> int:
        return self.idempotency_keys_h * 3600
