"""The context budget (an agent's `limits.context_tokens`): what each step's model input
keeps, and the estimate that checks it.

The opening (system policy, the run's input, a continuation's carry-over) and the latest
turn are always whole; an older turn is whole while it fits, else compact (its results as
summaries: `context.summary`). The oldest turns become compact first, and only as many as
the budget needs, so a run that fits sees everything. A result too large to show whole
is a summary in every form (`paging`). When the opening, the latest turn and every older
turn's compact form still exceed the budget, the oldest compact turns are folded into one
digest message (`digest`: a row per call, every id and code kept), as few as fit. Nothing
is ever dropped: only when even a digest of every older turn does not fit does the run
end `context_exhausted`.

The estimate never counts fewer tokens than ceil(len(JSON of the messages and the tool
schemas) / 4), and adds a margin per message, per tool call and per tool for what a
provider's wire format wraps around them, so that the request a provider receives is
within the budget by the same measure. Each turn is sized (and its digest rows made) once,
when it is appended: a step adds one turn and sums integers, whatever the length of the
run; only a step that folds walks the older turns once more, adding each to a digest
whose size is kept as it grows, and serializes the digest it chose once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.domain.limits.budget import message_json_size
from app.domain.model.context import TurnRecord, is_paged, turn_messages
from app.domain.model.digest import DigestBuilder, TurnDigest, fold_turn
from app.domain.model.paging import CHARS_PER_TOKEN, Paging
from app.domain.tools.specs import ToolSpec

#: Characters a provider's wire format may add around one message, tool call and tool
#: (OpenAI's `tool_call_id`, `type: function`, `content: null`; Anthropic's blocks).
MESSAGE_MARGIN = 64
CALL_MARGIN = 64
TOOL_MARGIN = 64


def _ceil_tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def message_chars(message: Mapping[str, Any]) -> int:
    """A message's characters in the estimate: its JSON with tool call arguments as the
    JSON text providers send, the separator in a list, and the margins."""
    calls = message.get("tool_calls")
    if not calls:
        # The JSON a request's size counts too (`request_size`): encoded once for both.
        return message_json_size(message) + 2 + MESSAGE_MARGIN
    wire = [{**c, "arguments": json.dumps(c["arguments"])} for c in calls]
    message = {**message, "tool_calls": wire}
    return len(json.dumps(message)) + 2 + MESSAGE_MARGIN + CALL_MARGIN * len(calls)


#: A schema's characters by its name, description and parameters (by identity, kept
#: alive here): the same few tools are counted on every step of every run.
_TOOL_CHARS: dict[tuple[Any, Any, int], tuple[Any, int]] = {}


def _schema_chars(schema: Mapping[str, Any]) -> int:
    parameters = schema.get("parameters")
    key = (schema.get("name"), schema.get("description"), id(parameters))
    known = _TOOL_CHARS.get(key)
    if known is not None and known[0] is parameters and len(schema) == 3:
        return known[1]
    chars = len(json.dumps(dict(schema)))
    if len(schema) == 3:
        if len(_TOOL_CHARS) >= 1024:
            _TOOL_CHARS.clear()
        _TOOL_CHARS[key] = (parameters, chars)
    return chars


def tool_chars(schemas: Sequence[Mapping[str, Any]]) -> int:
    """The tool schemas' characters in the estimate (`name`, `description`, `parameters`)."""
    return sum(_schema_chars(s) + 2 + TOOL_MARGIN for s in schemas)


def schema_of(spec: ToolSpec) -> dict[str, Any]:
    """A tool as the estimate counts it: what every provider is sent of it."""
    return {"name": spec.name, "description": spec.description, "parameters": spec.input_schema}


@dataclass(frozen=True)
class _Entry:
    whole: tuple[dict[str, Any], ...]
    compact: tuple[dict[str, Any], ...]
    whole_chars: int
    compact_chars: int
    paged: bool  # its whole form shows a result as a summary
    folded: TurnDigest | None = None  # its rows in a digest (None: no budget, never folded)


@dataclass(frozen=True)
class View:
    """One step's model input: its messages, its estimate, and whether a result in it is
    a summary (then `read_result` is exposed). When it does not `fit`, `tokens` is the
    least it needs and `messages` is empty."""

    messages: list[dict[str, Any]]
    tokens: int
    summarized: bool
    fits: bool = True


#: A digest message's characters in the estimate beyond its content's JSON string.
_DIGEST_CHARS = message_chars({"role": "user", "content": ""}) - len('""')


def digest_chars(builder: DigestBuilder) -> int:
    """The characters `message_chars` counts for the builder's message, without making it."""
    return _DIGEST_CHARS + builder.chars


@dataclass(frozen=True)
class _Fold:
    """The oldest `turns` folded into `message`, and the view's characters with it."""

    turns: int
    message: dict[str, Any] | None
    total: int


@dataclass
class ContextWindow:
    """The turns a run's model input may hold, each in both forms, sized once."""

    opening: list[dict[str, Any]]
    paging: Paging = field(default_factory=Paging)
    _entries: list[_Entry] = field(default_factory=list)
    _opening_chars: int | None = None

    def append(self, turn: TurnRecord) -> None:
        whole = tuple(turn_messages(turn, self.paging))
        whole_chars = sum(message_chars(m) for m in whole)
        paged = any(is_paged(c, self.paging) for c in turn.calls)
        if self.paging.context_tokens is None:  # no budget: never compact, so not built
            self._entries.append(_Entry(whole, whole, whole_chars, whole_chars, paged))
            return
        compact = tuple(turn_messages(turn, self.paging, compact=True))
        compact_chars = sum(message_chars(m) for m in compact)
        folded = fold_turn(turn)
        self._entries.append(_Entry(whole, compact, whole_chars, compact_chars, paged, folded))

    def view(self, schemas: Sequence[Mapping[str, Any]]) -> View:
        """The model input within the budget, older turns compact as needed (the oldest
        first) and then the oldest folded into a digest, or a View that does not fit when
        even the least it must keep does not."""
        if self._opening_chars is None:
            self._opening_chars = sum(message_chars(m) for m in self.opening)
        fixed = 2 + self._opening_chars + tool_chars(schemas)
        entries = self._entries
        total = fixed + sum(e.whole_chars for e in entries)
        budget = self.paging.context_tokens
        compacted = 0
        fold = _Fold(0, None, total)
        if budget is not None:
            limit = budget * CHARS_PER_TOKEN
            # The latest turn stays whole: its observations are what the model answers.
            while total > limit and compacted < len(entries) - 1:
                entry = entries[compacted]
                total += entry.compact_chars - entry.whole_chars
                compacted += 1
            fold = _Fold(0, None, total) if total <= limit else self._fold(total, limit)
            if fold.total > limit:
                return View([], _ceil_tokens(fold.total), False, fits=False)
        messages = list(self.opening)
        if fold.message is not None:
            messages.append(fold.message)
        for i in range(fold.turns, len(entries)):
            messages.extend(entries[i].compact if i < compacted else entries[i].whole)
        summarized = compacted > 0 or any(e.paged for e in entries[compacted:])
        return View(messages, _ceil_tokens(fold.total), summarized)

    def _fold(self, total: int, limit: int) -> _Fold:
        """The fewest oldest turns whose digest, with the rest compact and the latest whole,
        fits in `limit` characters; or, when none does, the least the view needs."""
        builder = DigestBuilder()
        least = total  # every size counted here is over the limit
        for k, entry in enumerate(self._entries[:-1], start=1):
            assert entry.folded is not None  # made for every turn under a budget
            builder.add(entry.folded)
            total -= entry.compact_chars
            size = total + digest_chars(builder)
            if size <= limit:
                # Kept exact by the builder; measured once all the same, so that the
                # estimate is by construction what `message_chars` says of the message.
                message = builder.message()
                size = total + message_chars(message)
                if size <= limit:
                    return _Fold(k, message, size)
            least = min(least, size)
        return _Fold(0, None, least)
