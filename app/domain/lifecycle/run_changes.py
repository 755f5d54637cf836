"""A run's changes made outside a step's lease, each one typed value: its creation, a
cancel request, and the sweep of parked runs that are due. A step's change is a
`RunPatch` (`engine.steps.commit.Change`), a decision on a preview a
`domain.approvals.decisions.Decision`. `db` turns each into its one conditional statement; the
statuses a change starts from and writes are its moves' (`domain.lifecycle.moves`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

from app.domain.lifecycle import moves
from app.domain.lifecycle.events import Event, EventType
from app.domain.lifecycle.records import Run
from app.domain.lifecycle.status import InvalidTransition, Move, RunStatus

#: One item of a scripted model's script (SPEC §5), as the request gave it: JSON, stored
#: with the run and read back by its model step, never interpreted by `db`.
ScriptItem = dict[str, Any]


@dataclass(frozen=True)
class Creation:
    """A new run with its first events and its script (a scripted model's), made queued;
    or, with `lease_s`, already claimed by its creator for that long (the claim's edge,
    `queued → running`, taken in the same statement)."""

    run: Run
    events: tuple[Event, ...]
    script: tuple[ScriptItem, ...] | None = None
    lease_s: float | None = None

    def __post_init__(self) -> None:
        born = RunStatus.QUEUED
        if self.lease_s is not None:
            moves.RUN_CLAIM.check(RunStatus.QUEUED, self.run.status)
            born = self.run.status
        if self.run.status is not born:
            raise InvalidTransition("run", "(new)", self.run.status)
        if (self.run.lease is not None) != (self.lease_s is not None):
            raise ValueError("a run is created leased exactly when it has a lease")

    def born(self, lease_expires_at: datetime | None, read_snapshot: str | None) -> Run:
        """The run as its creation made it: its lease's expiry and its snapshot as the
        database set them, its first events counted."""
        lease = self.run.lease
        return replace(
            self.run,
            lease=None if lease is None else replace(lease, expires_at=lease_expires_at),
            read_snapshot=read_snapshot,
            event_seq=len(self.events),
        )


@dataclass(frozen=True)
class CancelRequest:
    """Asks an unfinished run, not asked before, to cancel: its holder (in any process)
    stops at once; a parked run is woken for a driver to finish it `cancelled`."""

    #: The statuses a run takes the request in.
    guard: ClassVar[frozenset[RunStatus]] = moves.RUN_UNFINISHED
    #: What it does to a parked run.
    wake: ClassVar[Move] = moves.RUN_WAKE

    tenant_id: str
    run_id: str
    by: str
    at: datetime
    #: The ancestor whose cancel this is (None: the run's own): cancels propagate down.
    from_run_id: str | None = None

    @property
    def events(self) -> tuple[Event, ...]:
        data = {"by": self.by}
        if self.from_run_id is not None:
            data["from_run_id"] = self.from_run_id
        return ((EventType.RUN_CANCEL_REQUESTED, data),)


class Due(StrEnum):
    """Why a parked run is due to be made runnable by the sweep."""

    #: Its deadline passed: it ends `deadline`.
    DEADLINE = "deadline"
    #: A cancel landed while it was parking: it must still end.
    CANCEL = "cancel"
    #: Its open preview expired: its model is told `approval_expired`.
    PREVIEW_LAPSED = "preview_lapsed"


@dataclass(frozen=True)
class Sweep:
    """Parked runs that are due (any of `due`), at most `limit` of them for lapsed
    previews, made runnable as of `at`, for the driver's next poll to claim."""

    move: ClassVar[Move] = moves.RUN_WAKE
    due: ClassVar[tuple[Due, ...]] = tuple(Due)

    at: datetime
    limit: int
