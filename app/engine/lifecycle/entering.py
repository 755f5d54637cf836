"""Model-written text that opens a new run's model input, checked before the run is made:
a delegated run's input (its parent's model wrote it) and a continuation's carry-over
(earlier calls' arguments, backends' versions). The new run's agent's after_call
guardrails check it as they check a result (docs/trust.md, "Every way text reaches a
model")."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.config.files import AgentConfig
from app.domain.errors import DomainError, ErrorCode, ErrorValue, FieldError, ToolgateError
from app.domain.lifecycle.events import Event
from app.engine.runner import text_entering

if TYPE_CHECKING:
    from app.engine.lifecycle.runs import CreateRun


class InputBlocked(ToolgateError):
    """A delegated run's input was blocked by its agent's guardrails: no child is made,
    and the delegating call fails with `error`."""

    def __init__(self, error: ErrorValue) -> None:
        super().__init__(error.message)
        self.error = error


async def checked(
    agent: AgentConfig, request: CreateRun, carry_over: dict[str, Any] | None
) -> tuple[CreateRun, dict[str, Any] | None, list[Event]]:
    """Model-written text that opens the new run's model input (a delegated run's input,
    written by its parent's model; a continuation's carry-over, with the earlier run's
    calls' arguments) checked by the new run's after_call guardrails, as a result is:
    redacted, flagged (events of the new run), or blocked (no run is made). A caller's
    own input is the caller's, not checked."""
    policy = agent.guardrails.policy()
    events: list[Event] = []
    if request.delegated and request.input is not None:
        text = await text_entering(
            policy, request.input, on="input", about="the delegated run's input"
        )
        if text.blocked is not None:
            raise InputBlocked(text.blocked)
        request, events = replace(request, input=text.value), text.events
    if carry_over is not None:
        text = await text_entering(
            policy, carry_over, on="carry_over", about="what the continued run carries over"
        )
        if text.blocked is not None:
            message = text.blocked.message
            raise DomainError(ErrorCode.VALIDATION, message, [FieldError("continue_from", message)])
        carry_over, events = text.value, [*events, *text.events]
    return request, carry_over, events
