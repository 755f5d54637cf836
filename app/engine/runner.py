"""The runner's public face: all that a use case may touch of the process that drives
runs (`engine/process`) and of a run's steps (`engine/steps`).

Use cases (creating, deciding, continuing, delegating runs; quotas, keys, webhooks...)
import these names from here and nothing else from those two packages, so that the
driver, the lease's keeping and the stepper can change without a use case noticing (an
import-linter contract in pyproject.toml holds it). Types only named in annotations
(`Runtime`, `Driver`) are imported under `TYPE_CHECKING` by the use cases the runner
itself calls (retention, webhooks), which keeps the import graph free of cycles.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from app.engine.process.lease import Lease, hand_back, released_if_unanswered
from app.engine.process.runtime import Runtime
from app.engine.steps import guarding
from app.engine.steps.state import RunState
from app.engine.steps.stepper import lease_for, new_lease_token

if TYPE_CHECKING:
    # Only named: the driver calls use cases (retention, webhooks), so importing it here
    # would make every use case import itself.
    from app.domain.guardrails.policy import Policy
    from app.domain.lifecycle.records import Run
    from app.engine.driver import Driver

__all__ = [
    "Driver",
    "Lease",
    "RunState",
    "Runtime",
    "adopt",
    "handed_back_if_unanswered",
    "lease_for",
    "new_lease_token",
    "text_entering",
]


def adopt(rt: Runtime, driver: Driver, run: Run, sent_at: float) -> None:
    """A run leased to this process by a use case's own transaction (sent at loop time
    `sent_at`): this process's driver reads its history and advances it, in a task of its
    own, holding the lease from the start. A history that does not load hands the lease
    back at once (any process's poll takes the run up), and never fails the use case,
    whose transaction has committed."""
    driver.take_up(lease_for(rt, run, sent_at), run)


def handed_back_if_unanswered(
    rt: Runtime, tenant_id: str, run_id: str, token: str
) -> contextlib.AbstractContextManager[None]:
    """Around a statement that leases the run to this process under `token`: when the
    database does not answer it, the lease is handed back (once the database answers) so
    that any driver takes the run up at once rather than when the lease lapses."""
    return released_if_unanswered(rt, lambda: hand_back(rt, tenant_id, run_id, token))


async def text_entering(policy: Policy, value: Any, *, on: str, about: str) -> guarding.Text:
    """Model-written text that opens a new run's model input, checked by the run's
    after_call guardrails as a tool's result is (redacted, flagged or blocked)."""
    return await guarding.entering(policy, value, on=on, about=about)
