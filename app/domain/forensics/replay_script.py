"""A finished run's model outcomes as a scripted model's script (SPEC §5), rebuilt from
what the run recorded, so that a replay asks the current code and tools the same
questions with the same answers.

Each recorded model outcome is one item, in the order the run consumed them (its events):

- `turn.failed` → an `error` item with the recorded code, message and `retryable`;
- `turn.completed` of a final answer → a `final` item with the turn's text and usage;
- `turn.completed` of tool calls → a `tool_calls` item with the turn's usage and, in
  proposal order (the `call.proposed` events), each call's recorded id, tool name and
  arguments: from the call's row, or, for a repeated call id (refused before it became a
  call), from the turn's `extra_rejections`.

What this cannot give back exactly (docs/decisions.md, "Replay"): a failed attempt's
tokens (an error item has no usage), arguments that were refused as unstorable (only a
note of why was kept) and unparseable argument text past 10,000 characters (kept cut).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from app.domain.errors import ToolgateError
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.records import Call, Turn


class NotRecorded(ToolgateError):
    """The run's records lack something the script needs (e.g. purged events)."""


def rebuild_script(
    events: Iterable[Mapping[str, Any]], turns: Sequence[Turn], calls: Sequence[Call]
) -> list[dict[str, Any]]:
    """The script, from the run's events (`{"seq", "type", "data"}` in seq order), turns
    and calls."""
    by_step = {t.step: t for t in turns}
    rows = {(c.step, c.call_id): c for c in calls}
    extras = {t.step: list(t.extra_rejections) for t in turns}
    items: list[dict[str, Any]] = []
    filling: tuple[int, list[dict[str, Any]]] | None = None
    taken: set[tuple[int, str]] = set()
    for event in events:
        kind, data = event["type"], event.get("data") or {}
        if kind == EventType.TURN_FAILED:
            items.append(_error(data))
        elif kind == EventType.TURN_COMPLETED:
            turn = by_step.get(data.get("step"))  # type: ignore[arg-type]
            if turn is None:
                raise NotRecorded(f"the turn of step {data.get('step')} is not recorded")
            items.append(_turn_item(turn))
            filling = (turn.step, items[-1]["calls"]) if turn.kind == "tool_calls" else None
        elif kind == EventType.CALL_PROPOSED and filling and data.get("step") == filling[0]:
            step, proposed = filling
            key = (step, str(data.get("call_id")))
            if key in taken:
                proposed.append(_repeated(extras.get(step, []), key[1]))
                continue
            row = rows.get(key)
            if row is None:
                raise NotRecorded(f"call {key[1]!r} of step {step} is not recorded")
            taken.add(key)
            # The model's own arguments, not an approver's revision of them.
            asked = row.arguments if row.revision is None else row.proposed_arguments
            proposed.append({"id": row.call_id, "name": row.tool, "arguments": asked})
    return items


def _usage(turn: Turn) -> dict[str, int]:
    return {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens}


def _turn_item(turn: Turn) -> dict[str, Any]:
    if turn.kind == "final":
        return {"type": "final", "text": turn.text or "", "usage": _usage(turn)}
    item: dict[str, Any] = {"type": "tool_calls", "calls": [], "usage": _usage(turn)}
    if turn.text is not None:  # the model's words beside its calls, said again
        item["text"] = turn.text
    return item


def _error(data: Mapping[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "error", "code": str(data.get("code") or "model_error")}
    item["retryable"] = bool(data.get("retryable", False))
    if data.get("message") is not None:
        item["message"] = str(data["message"])
    if data.get("input_tokens") is not None:  # a reply billed but not taken (cut, past budgets)
        usage = {"input_tokens": data["input_tokens"], "output_tokens": data.get("output_tokens")}
        item["usage"] = usage
    return item


def _repeated(extras: list[Mapping[str, Any]], call_id: str) -> dict[str, Any]:
    """The next refused repetition of `call_id` the turn kept (and takes it)."""
    for n, extra in enumerate(extras):
        if extra.get("call_id") == call_id:
            del extras[n]
            return {"id": call_id, "name": extra.get("tool"), "arguments": extra.get("arguments")}
    raise NotRecorded(f"a repetition of call id {call_id!r} is not recorded")
