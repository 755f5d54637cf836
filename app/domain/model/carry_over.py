"""What a run that continues a finished one (`continue_from`) carries over from it: a
compact, structured record that opens its model input after its own input, the same at
every step.

It holds the earlier run's input (when the new run's differs), how it ended, a summary of
each of its calls (`context.summary`: call id, status, error code, source id and
version, size — never a result's content), the effects it committed, which must not be
made twice, and the calls that were awaiting approval when it ended, which never ran.
A chain of continuations keeps the latest `MAX_RESULTS` summaries across the chain.
Its sources cannot be cited by the new run, which produced none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.domain.guardrails.sensitive import redact_value
from app.domain.lifecycle.records import Call, Run
from app.domain.lifecycle.status import CallStatus
from app.domain.model.context import CARRY_OVER, UNTRUSTED, record_of, summary

#: The most call summaries carried over, the latest kept.
MAX_RESULTS = 100
#: The most committed effects and unfinished approvals carried over, the latest kept.
MAX_EFFECTS = 50
NOTICE = (
    "carried over from an earlier run of this task: summaries of its tool results (their "
    "content is not here, and their source ids cannot be cited: call the tools again to "
    "cite), the effects it committed (they took effect: do not make them again), and the "
    "calls that awaited approval when it ended (never executed: propose them again if "
    "still needed)"
)


def _about(run_id: str, call: Call) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "step": call.step,
        "call_id": call.call_id,
        "tool": call.tool,
        # The approval state and the effects are kept whole; no secret is.
        "arguments": redact_value(call.arguments),
    }


def build(
    *,
    run: Run,
    calls: Sequence[Call],
    new_input: str,
    side_effects: Callable[[str], bool],
) -> dict[str, Any]:
    """The carry-over of finished `run` (with its `calls`) into a run whose input is
    `new_input`; `side_effects(tool)`: whether a tool's success took effect."""
    earlier: Mapping[str, Any] = run.carry_over or {}
    results = [*earlier.get("results", ())]
    results += [{**summary(record_of(c), c.step), "run_id": run.id} for c in calls]
    effects = [*earlier.get("committed", ())]
    effects += [
        {**_about(run.id, c), "source_id": c.source_id, "source_version": c.source_version}
        for c in calls
        if c.status is CallStatus.SUCCEEDED and (c.preview_id or side_effects(c.tool))
    ]
    unfinished = [
        _about(run.id, c)
        for c in calls
        if c.preview_id is not None
        and c.status not in (CallStatus.SUCCEEDED, CallStatus.FAILED, CallStatus.REJECTED)
    ]
    carried: dict[str, Any] = {
        "type": CARRY_OVER,
        "trust": UNTRUSTED,
        "notice": NOTICE,
        "continued_from": run.id,
        "ended": {
            "termination_reason": run.termination_reason,
            "code": (run.error or {}).get("code"),
        },
        "results": results[-MAX_RESULTS:],
        "committed": effects[-MAX_EFFECTS:],
        "awaiting_approval": unfinished[-MAX_EFFECTS:],
    }
    if run.input != new_input:
        carried["input"] = run.input
    return carried
