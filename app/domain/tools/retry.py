"""The executor's retry decision for tool calls: never the model's."""

from __future__ import annotations

import random

from app.domain.tools.specs import ToolError, ToolSpec


def may_retry(spec: ToolSpec, error: ToolError, *, attempts: int, seconds_left: float) -> bool:
    """Retry only a retryable error of a read-only or idempotent tool, within its attempts
    and while the deadline leaves time for the longest backoff that may be drawn."""
    return (
        error.retryable
        and not error.fatal
        and spec.may_retry
        and attempts < spec.max_attempts
        and seconds_left > backoff_s(attempts, jitter=1.0)
    )


def ends_run(spec: ToolSpec, error: ToolError) -> bool:
    """A fatal error, or a retryable one that can no longer be retried, ends the run
    `tool_failed`; any other error goes back to the model as an observation."""
    return error.fatal or error.retryable


def backoff_s(
    attempts: int, *, base: float = 0.1, cap: float = 5.0, jitter: float | None = None
) -> float:
    """Exponential backoff after `attempts` tries, jittered between half and all of it."""
    ceiling = min(cap, base * (2 ** max(0, attempts - 1)))
    factor = random.random() if jitter is None else jitter
    return ceiling * (0.5 + 0.5 * factor)
