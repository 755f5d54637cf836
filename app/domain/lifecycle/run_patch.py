"""What a step changes of its run, typed: each column a step may write is a field, left
`KEEP` unless the step sets it. The engine builds one; the step's statement writes the
fields set, and nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from app.domain.lifecycle.status import RunStatus


class Keep(Enum):
    """A column the patch leaves as it is."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True)
class RunPatch:
    status: RunStatus | Keep = KEEP
    termination_reason: str | None | Keep = KEEP
    error: dict[str, Any] | None | Keep = KEEP
    output: dict[str, Any] | None | Keep = KEEP
    finished_at: datetime | None | Keep = KEEP
    lease_owner: str | None | Keep = KEEP
    lease_token: str | None | Keep = KEEP
    lease_expires_at: datetime | None | Keep = KEEP
    steps: int | Keep = KEEP
    input_tokens: int | Keep = KEEP
    output_tokens: int | Keep = KEEP
    cost_usd: float | Keep = KEEP
    tool_calls: int | Keep = KEEP
    model_calls: int | Keep = KEEP
    step_attempts: int | Keep = KEEP
    next_source: int | Keep = KEEP
    step_failures: int | Keep = KEEP
    trace_context: str | None | Keep = KEEP

    @classmethod
    def released(cls, **values: Any) -> RunPatch:
        """The lease handed back (a run that parks or finishes), with `values`."""
        return cls(lease_owner=None, lease_token=None, lease_expires_at=None, **values)

    def values(self) -> dict[str, Any]:
        """The columns it sets, by name (its attributes are its fields and nothing else:
        several times a step, read straight from them)."""
        return {name: value for name, value in vars(self).items() if value is not KEEP}

    def sets(self, name: str) -> bool:
        return getattr(self, name) is not KEEP

    def then(self, later: RunPatch) -> RunPatch:
        """This patch with what `later` sets written over it (made from the columns either
        sets: `replace` would walk every field, a few times a step)."""
        return RunPatch(**{**self.values(), **later.values()})
