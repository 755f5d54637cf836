"""The most input tokens a model request can be billed: what a call's output cap is
computed after (`budget.output_ceiling`), so it must never be less than the truth.

Without anything known of the request, its size: a token stands for at least one byte of
text (byte-level tokenizers), and `budget.request_size` counts every non-ASCII character
as its escape, longer than its UTF-8 bytes; plus `TEMPLATE_TOKENS` for what a chat
template adds. That is about four times a real count. A request that extends the
previous one of the run on the same route (the same instructions, tools and output
schema, and the previous messages, the very objects, first) is bounded far tighter: what
the previous one was billed, plus the added messages' size (`Billed.bound`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.limits.budget import message_json_size
from app.domain.tools.specs import ToolSpec

#: Tokens a provider's chat template may add to a request beyond its text: role markers,
#: a tool-use preamble (Anthropic's is about 350 tokens), a date line. Counted once a call.
TEMPLATE_TOKENS = 512
#: What a template may add around one more message (role markers, a tool call's wrapping),
#: beyond its JSON's keys, which count already.
MESSAGE_TOKENS = 16


def most_input_tokens(request_bytes: int) -> int:
    """An upper bound of the input tokens a request of this size is billed."""
    return request_bytes + TEMPLATE_TOKENS


@dataclass(frozen=True)
class Prompt:
    """What a model request's input is made of: it is billed for these. `size` is their
    `budget.request_size`."""

    route: str
    instructions: str
    tools: Sequence[ToolSpec]
    schema: Mapping[str, Any] | None
    messages: Sequence[Mapping[str, Any]]
    size: int


@dataclass(frozen=True)
class Billed:
    """A prompt as its provider billed it: what the next prompt of the run can count on,
    when it only adds messages."""

    prompt: Prompt
    input_tokens: int

    def bound(self, prompt: Prompt) -> int | None:
        """The most `prompt` can be billed, or None when it does not extend this one
        (another route or tokenizer, changed tools, a message changed or dropped: a turn
        made compact, a digest rebuilt)."""
        last = self.prompt
        n = len(last.messages)
        if (
            prompt.route != last.route
            or prompt.instructions != last.instructions
            or prompt.schema is not last.schema
            or len(prompt.messages) < n
            or tuple(prompt.tools) != tuple(last.tools)
            or any(a is not b for a, b in zip(last.messages, prompt.messages, strict=False))
        ):
            return None
        added = prompt.messages[n:]
        return self.input_tokens + sum(message_json_size(m) + MESSAGE_TOKENS for m in added)
