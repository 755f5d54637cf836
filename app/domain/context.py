"""The model's view of a run: instructions, input, and every turn with its observations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.domain.tools import canonical_json

WITHHELD = "the call succeeded and took effect; its output could not be kept"


@dataclass(frozen=True)
class CallRecord:
    call_id: str
    tool: str
    arguments: Any
    status: str
    output: Any = None
    source_id: str | None = None
    error: Mapping[str, Any] | None = None
    output_withheld: bool = False


@dataclass(frozen=True)
class TurnRecord:
    step: int
    kind: str  # "tool_calls" | "final"
    text: str | None = None
    rejection: Mapping[str, Any] | None = None
    calls: Sequence[CallRecord] = ()
    extra_rejections: Sequence[Mapping[str, Any]] = field(default_factory=tuple)


def _observation(call: CallRecord) -> dict[str, Any]:
    if call.status == "succeeded" and call.output_withheld:
        # It took effect: the model must know that, or it would make it again.
        content: dict[str, Any] = {"source_id": call.source_id, "output_withheld": WITHHELD}
    elif call.status == "succeeded":
        content = {"source_id": call.source_id, "output": call.output}
    else:
        content = {"error": dict(call.error or {"code": call.status})}
    return {"role": "tool", "call_id": call.call_id, "content": canonical_json(content)}


def opening_messages(*, instructions: str, user_input: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": instructions},
        {"role": "user", "content": user_input},
    ]


def turn_messages(turn: TurnRecord) -> list[dict[str, Any]]:
    """What one settled turn adds to the model's view: its answer or calls, then every
    observation. The lease holder appends these step by step instead of re-reading."""
    if turn.kind == "final":
        messages: list[dict[str, Any]] = [{"role": "assistant", "content": turn.text or ""}]
        if turn.rejection:
            messages.append({"role": "user", "content": canonical_json(dict(turn.rejection))})
        return messages
    messages = [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": c.call_id, "name": c.tool, "arguments": c.arguments} for c in turn.calls
            ]
            + [
                {"id": r["call_id"], "name": r["tool"], "arguments": r["arguments"]}
                for r in turn.extra_rejections
            ],
        }
    ]
    messages.extend(_observation(c) for c in turn.calls)
    messages.extend(
        {
            "role": "tool",
            "call_id": r["call_id"],
            "content": canonical_json({"error": r["error"]}),
        }
        for r in turn.extra_rejections
    )
    return messages


def build_messages(
    *, instructions: str, user_input: str, turns: Sequence[TurnRecord]
) -> list[dict[str, Any]]:
    """Neutral chat messages that every provider adapter can translate."""
    messages = opening_messages(instructions=instructions, user_input=user_input)
    for turn in turns:
        messages.extend(turn_messages(turn))
    return messages
