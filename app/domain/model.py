"""What a model proposes, and how a model call fails: the model never executes anything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.domain.tools import ToolSpec


@dataclass(frozen=True)
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ProposedCall:
    """One call as the model sent it: `arguments` is an object or a JSON string."""

    call_id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class FinalAnswer:
    text: str
    usage: TokenUsage = TokenUsage()
    model: str | None = None


@dataclass(frozen=True)
class ToolCallsProposal:
    calls: tuple[ProposedCall, ...]
    usage: TokenUsage = TokenUsage()
    model: str | None = None


ModelReply = FinalAnswer | ToolCallsProposal


@dataclass(frozen=True)
class ModelError(Exception):
    """A failed model call; the executor, not the model, decides whether to retry."""

    code: str
    message: str = "the model call failed"
    retryable: bool = False
    #: True when no model outcome was consumed (e.g. an exhausted script).
    consumed: bool = True
    #: The provider's `Retry-After`: the executor waits at least this long before retrying.
    retry_after_s: float | None = None

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True)
class ModelRequest:
    """Everything a provider may use for one call. `position` counts the run's recorded
    model outcomes so far; the scripted provider reads its next item there."""

    run_id: str
    step: int
    attempt: int
    route: str
    instructions: str
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[ToolSpec]
    timeout_s: float
    position: int
    script: Sequence[Mapping[str, Any]] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
