"""Validation of a turn's proposed calls, before anything is executed.

Order per call (SPEC §2): duplicate id → exposed tool → JSON Schema → semantic check →
authorization. A rejection becomes an observation for the model; nothing runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.errors import MAX_MESSAGE, ErrorValue, ObservationCode
from app.domain.model.replies import ProposedCall, bounded_tool_name, clean_text
from app.domain.ports import Tool
from app.domain.tools import schema_validator
from app.domain.tools.gates import NOT_OFFERED, gate_refusal
from app.domain.tools.specs import Principal, args_hash, canonical_json, json_depth, unstorable_path

#: How much of an unparseable argument string is kept on the record.
MAX_RAW = 10_000
#: How deeply arguments may nest.
MAX_DEPTH = 32


@dataclass(frozen=True)
class CheckedCall:
    call_id: str
    tool: str
    arguments: Any
    args_hash: str
    rejection: ErrorValue | None


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (and Postgres' jsonb refuses them).
    raise ValueError(f"{name} is not valid JSON")


def _parse_arguments(raw: Any) -> tuple[Any, ErrorValue | None]:
    """The arguments as an object, or what to store instead and why they were refused.
    Refused arguments are stored as their text (cut) when they came as text; else as a
    note of why, since what Postgres cannot store is never stored."""
    text = raw if isinstance(raw, str) else None
    if text is not None:
        try:
            raw = json.loads(text, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            return _kept(text, "arguments are not valid JSON")
    problem = None
    unstorable = unstorable_path(raw)
    if json_depth(raw) > MAX_DEPTH:
        problem = f"arguments nest deeper than {MAX_DEPTH} levels"
    elif unstorable is not None:
        problem = f"arguments hold {unstorable[1]}"
    else:
        try:
            canonical_json(raw)
        except (ValueError, TypeError):
            problem = "arguments are not valid JSON"
    if problem is not None:
        return _kept(text, problem)
    if not isinstance(raw, dict):
        return raw, ErrorValue.rejection(
            ObservationCode.INVALID_ARGUMENTS, "arguments must be an object"
        )
    return raw, None


def _kept(text: str | None, problem: str) -> tuple[Any, ErrorValue]:
    kept = clean_text(text, MAX_RAW) if text is not None else f"(not kept: {problem})"
    return kept, ErrorValue.rejection(ObservationCode.INVALID_ARGUMENTS, problem)


def _schema_problem(schema: Mapping[str, Any], arguments: Any) -> str | None:
    if schema_validator.fits(schema, arguments):
        return None
    errors = schema_validator.errors(schema, arguments)
    if not errors:
        return None
    # The first by path, the root's own errors first (ints before names: never compared).
    first = min(errors, key=lambda e: [(isinstance(p, str), p) for p in e.path])
    where = "/".join(str(p) for p in first.path) or "(root)"
    return f"{where}: {first.message}"[:MAX_MESSAGE]


def check_call(
    proposed: ProposedCall,
    *,
    exposed: Mapping[str, Tool],
    principal: Principal,
    seen_ids: set[str],
    disabled: frozenset[str] = frozenset(),
) -> CheckedCall:
    arguments, rejection = _parse_arguments(proposed.arguments)
    name = bounded_tool_name(proposed.name)

    def rejected(code: str, message: str) -> CheckedCall:
        return CheckedCall(
            proposed.call_id,
            name,
            arguments,
            args_hash(arguments),
            ErrorValue.rejection(code, message),
        )

    if proposed.call_id in seen_ids:
        return rejected(ObservationCode.DUPLICATE_CALL_ID, "call id already used in this turn")
    seen_ids.add(proposed.call_id)
    tool = exposed.get(proposed.name)
    if tool is None:
        return rejected(ObservationCode.UNKNOWN_TOOL, f"no tool named {name!r} is available")
    if rejection is not None:
        return rejected(rejection.code, rejection.message)
    if not tool.spec.listed:  # its server's schema is unknown: its arguments cannot be judged
        return rejected(ObservationCode.TOOL_UNAVAILABLE, NOT_OFFERED)
    problem = _schema_problem(tool.spec.input_schema, arguments)
    if problem is None:
        problem = tool.check(arguments)
    if problem is not None:
        return rejected(ObservationCode.INVALID_ARGUMENTS, problem)
    refusal = gate_refusal(tool.spec, principal=principal, disabled=disabled)
    if refusal is not None:
        return rejected(refusal.code, refusal.message)
    return CheckedCall(proposed.call_id, proposed.name, arguments, args_hash(arguments), None)


def check_calls(
    calls: Sequence[ProposedCall],
    *,
    exposed: Mapping[str, Tool],
    principal: Principal,
    disabled: frozenset[str] = frozenset(),
) -> list[CheckedCall]:
    """`disabled`: tools switched off for the tenant since the run started (kill switch)."""
    seen: set[str] = set()
    return [
        check_call(c, exposed=exposed, principal=principal, seen_ids=seen, disabled=disabled)
        for c in calls
    ]
