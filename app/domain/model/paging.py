"""Large tool results, paged: when a result is too large to show whole, and its pages.

A result is shown as the text of its canonical JSON; one larger than `LARGE_RESULT_BYTES`
(or, under a context budget, than a quarter of it) reaches the model as a summary, and the
model reads it page by page with the built-in `read_result` tool. A page is a slice of
that text of at most `PAGE_BYTES` UTF-8 bytes, never cutting a character in two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.domain.tools.specs import canonical_json

#: A result above this many bytes is never shown whole.
LARGE_RESULT_BYTES = 8192
#: The most a page of a result holds, in bytes.
PAGE_BYTES = 4096
#: The least a page holds, however small the context budget.
MIN_PAGE_BYTES = 256
#: Characters per token in the estimate (docs/config.md: `limits.context_tokens`).
CHARS_PER_TOKEN = 4
#: The name of the built-in tool that reads a paged result.
READ_RESULT = "read_result"


@dataclass(frozen=True)
class Paging:
    """The thresholds a run's context budget (`context_tokens`, None: no budget) sets."""

    context_tokens: int | None = None

    @property
    def large_bytes(self) -> int:
        """A result above this is shown as a summary: 8 KiB, or a quarter of the budget
        (a quarter of its tokens is as many bytes at four characters a token)."""
        if self.context_tokens is None:
            return LARGE_RESULT_BYTES
        quarter = self.context_tokens * CHARS_PER_TOKEN // 4
        return max(MIN_PAGE_BYTES, min(LARGE_RESULT_BYTES, quarter))

    @property
    def page_bytes(self) -> int:
        return max(MIN_PAGE_BYTES, min(PAGE_BYTES, self.large_bytes // 2))


def result_text(output: Any) -> str:
    """A result as pages slice it: its canonical JSON."""
    return canonical_json(output)


def size_of(output: Any) -> int:
    return len(result_text(output).encode())


def pages(text: str, page_bytes: int) -> list[str]:
    """`text` in slices of at most `page_bytes` UTF-8 bytes (at least one slice)."""
    data = text.encode()
    out: list[str] = []
    start = 0
    while True:
        end = min(len(data), start + page_bytes)
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end -= 1  # back to the start of the character the cut would split
        out.append(data[start:end].decode())
        if end >= len(data):
            return out
        start = end


def page_count(output: Any, page_bytes: int) -> int:
    return len(pages(result_text(output), page_bytes))


#: The input `read_result` takes: a result of the run by its call id (and step, since ids
#: may repeat across turns; without it, the latest call of that id), and a page from 1.
READ_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["call_id", "page"],
    "properties": {
        "call_id": {"type": "string", "minLength": 1, "maxLength": 128},
        "page": {"type": "integer", "minimum": 1, "maximum": 100000},
        "step": {"type": "integer", "minimum": 1, "maximum": 2147483647},
    },
}
READ_RESULT_DESCRIPTION = (
    "Read one page of an earlier tool result of this run that was shown as a summary "
    "(its call_id, and its step when call ids repeat). Pages count from 1."
)
