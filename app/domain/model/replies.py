"""What a model proposes, and how a model call fails: the model never executes anything.

What a model says is untrusted input, bounded here before any of it is stored: a reply
past these bounds, or holding what Postgres cannot store, is the model's error
`malformed_output` (retried like any model error), never a failed write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.domain.errors import ToolgateError
from app.domain.model.typed_output import OutputSchema
from app.domain.text import storable, unstorable_char
from app.domain.tools.specs import ToolSpec, unstorable_path

#: The longest call id taken. Providers' ids are 9 to about 40 characters; this leaves
#: room for others and stays well inside the column (200) and its unique index.
MAX_CALL_ID_CHARS = 128
#: A tool name is stored cut to this. Configured names are at most 64 characters, so a
#: longer one names no tool: it is an `unknown_tool` observation, never refused as such.
MAX_TOOL_NAME_CHARS = 128
#: The longest final text taken: about 250,000 tokens, above any model's output limit.
MAX_FINAL_TEXT_CHARS = 1_000_000
#: Tokens one reply may report (as a script may): more, or fewer than 0, is not usage.
MAX_REPLY_TOKENS = 10**9
#: What marks a stored string as cut (outside the names' alphabet, so a cut name never
#: equals a configured one).
CUT = "…"


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
    #: What the model wrote beside its calls (its stated reason), if anything.
    text: str | None = None


#: The most of a model's words beside its calls that is kept (for approvers to read).
MAX_SAID_CHARS = 2000


def said(text: str | None) -> str | None:
    """A model's words beside its calls as kept: storable, cut, and blank as None."""
    if text is None or not text.strip():
        return None
    return clean_text(text.strip(), MAX_SAID_CHARS)


ModelReply = FinalAnswer | ToolCallsProposal


@dataclass(frozen=True)
class ModelError(ToolgateError):
    """A failed model call; the executor, not the model, decides whether to retry."""

    code: str
    message: str = "the model call failed"
    retryable: bool = False
    #: True when no model outcome was consumed (e.g. an exhausted script).
    consumed: bool = True
    #: The provider's `Retry-After`: the executor waits at least this long before retrying.
    retry_after_s: float | None = None
    #: What a reply that is not taken (cut at its length limit) was billed: still counted.
    usage: TokenUsage | None = None

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
    #: The agent's `output_schema`: a route that supports it is asked for structured output
    #: (the on-final check validates the answer either way).
    output: OutputSchema | None = None
    #: The output cap the run's budgets leave this call (`budget.output_ceiling`), sent as
    #: the provider's own bound; an answer that reaches it is cut there.
    max_output_tokens: int | None = None


def script_usage(item: Mapping[str, Any]) -> TokenUsage:
    """What a scripted item declares it used (SPEC §5: missing usage counts as 0)."""
    usage = item.get("usage") or {}
    return TokenUsage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
    )


def clean_text(text: str, limit: int) -> str:
    """`text` without what Postgres cannot store, cut to `limit` characters (marked)."""
    text = storable(text)
    return text if len(text) <= limit else text[: limit - len(CUT)] + CUT


def bounded_tool_name(name: str) -> str:
    """A proposed tool name as stored (the lookup uses the name as sent)."""
    return clean_text(name, MAX_TOOL_NAME_CHARS)


def usage_in_range(usage: TokenUsage) -> bool:
    return all(0 <= n <= MAX_REPLY_TOKENS for n in (usage.input_tokens, usage.output_tokens))


def reply_problem(reply: ModelReply) -> str | None:
    """Why a reply is malformed output, or None. The message never repeats the model's
    text (it may be what cannot be stored)."""
    if not usage_in_range(reply.usage):
        return "the reply's token usage is out of range"
    if isinstance(reply, FinalAnswer):
        if len(reply.text) > MAX_FINAL_TEXT_CHARS:
            return f"the final text is longer than {MAX_FINAL_TEXT_CHARS} characters"
        what = unstorable_char(reply.text)
        return None if what is None else f"the final text holds {what}"
    for n, call in enumerate(reply.calls, 1):
        problem = _call_problem(call)
        if problem is not None:
            return f"tool call {n}: {problem}"
    return None


def _call_problem(call: ProposedCall) -> str | None:
    if len(call.call_id) > MAX_CALL_ID_CHARS:
        return f"its call id is longer than {MAX_CALL_ID_CHARS} characters"
    for what, text in (("call id", call.call_id), ("tool name", call.name)):
        held = unstorable_char(text)
        if held is not None:
            return f"its {what} holds {held}"
    # Raw arguments only: an escape in valid JSON (\u0000) is clean text, and what it
    # decodes to is the arguments' check (`invalid_arguments`).
    found = unstorable_path(call.arguments)
    return None if found is None else f"its arguments hold {found[1]}"
