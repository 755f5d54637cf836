"""How a model provider's failure becomes a `ModelError` (shared by the provider adapters):
a safe code, and whether trying again may help. The provider's own text is never passed
on — it may echo the request, or a key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from app.domain.lifecycle.status import TerminationReason
from app.domain.model.replies import ModelError

TIMEOUT = ModelError("timeout", "the model did not answer in time", retryable=True)
UNREACHABLE = ModelError("unavailable", "the model's endpoint could not be reached", True)
UNREADABLE = ModelError("malformed_output", "the model's answer could not be read", True)


def from_sdk(exc: Any, sdk: ModuleType, *, context_too_long: Callable[[Any], bool]) -> ModelError:
    """A failure raised by a provider SDK (openai and anthropic share the exception names):
    a timeout, an unreachable endpoint, an unreadable answer, or an HTTP status."""
    if isinstance(exc, sdk.APITimeoutError):
        return TIMEOUT
    if isinstance(exc, sdk.APIConnectionError):
        return UNREACHABLE
    if not isinstance(exc, sdk.APIStatusError):
        return UNREADABLE
    return status_error(
        exc.status_code, context_too_long=context_too_long(exc), headers=exc.response.headers
    )


def status_error(status: int, *, context_too_long: bool, headers: Mapping[str, str]) -> ModelError:
    if status == 429:
        return ModelError(
            "rate_limited",
            "the model's provider is rate limiting",
            retryable=True,
            retry_after_s=retry_after(headers),
        )
    if status >= 500:  # 529 is Anthropic's "overloaded"
        code = "overloaded" if status == 529 else "unavailable"
        return ModelError(code, f"the model's provider answered {status}", True)
    if status in (401, 403):
        return ModelError("auth", "the model's provider refused the credentials")
    if context_too_long:
        # The run's own end, by the same name: no retry can fix it.
        return ModelError(
            TerminationReason.CONTEXT_EXHAUSTED.value,
            "the run's context is too long for the model",
        )
    return ModelError("rejected", f"the model's provider refused the request ({status})")


def retry_after(headers: Mapping[str, str]) -> float | None:
    """`Retry-After` in seconds (the date form is not used by model providers)."""
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds <= 3600 else None
