"""Where the engine asks the guardrails (`domain.guardrails.policy`): a turn's accepted
proposals (before_call), a call's result before it is stored (after_call) and a final
answer before it ends the run (on_final, with a typed agent's schema check after the
guardrails). Pure wiring: each returns what the step's own transaction then writes,
guardrail events included; nothing here writes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from app.domain.errors import ErrorValue
from app.domain.guardrails import policy as guardrails
from app.domain.guardrails.policy import Checked, OnBlock, Point, Policy, Subject
from app.domain.guardrails.sensitive import scrub_text
from app.domain.lifecycle.events import Event
from app.domain.lifecycle.records import Call
from app.domain.model.typed_output import INVALID_OUTPUT, OutputError, OutputSchema, check
from app.domain.ports import Tool
from app.domain.tools.proposals import CheckedCall
from app.domain.tools.specs import ToolResult
from app.engine import off_loop
from app.engine.steps.state import RunState

#: Why a turn's other calls never ran when a guardrail's block ended the run.
ENDED = ErrorValue("policy_denied", "the run ended: a guardrail blocked a call of this turn")


def policy_of(state: RunState) -> Policy:
    """The guardrails of the run's agent as its pinned config version has them (the
    defaults when that version cannot be read: never unguarded)."""
    agent = state.config.agent
    return Policy() if agent is None else agent.guardrails.policy()


def output_of(state: RunState) -> OutputSchema | None:
    """The output schema of the run's agent as its pinned config version has it (a
    version kept before typed output existed has none)."""
    agent = state.config.agent
    if agent is None or agent.output_schema is None:
        return None
    return OutputSchema(state.run.agent, agent.output_schema)


def blocked_error(checked: Checked) -> ErrorValue | None:
    """The observation a block feeds back: its machine code and a safe message."""
    verdict = checked.blocked
    if verdict is None:
        return None
    return ErrorValue(verdict.code, verdict.message, verdict.retryable)


@dataclass
class Proposals:
    """A turn's proposals after the before_call guardrails: those blocked now carry the
    block as their rejection; `events` by call id; `ends`: the block that ends the run."""

    checked: list[CheckedCall]
    events: dict[str, list[Event]] = field(default_factory=dict)
    ends: ErrorValue | None = None


async def before_calls(
    policy: Policy, step: int, checked: list[CheckedCall], exposed: Mapping[str, Tool]
) -> Proposals:
    """Checks each call the gates accepted, in proposal order (SPEC §2: the pre-call
    guardrail comes after the gates, before execution or a preview); off the loop when
    the arguments are large (`engine.off_loop`)."""
    size = sum(off_loop.json_size(c.arguments) for c in checked if c.rejection is None)
    return await off_loop.run(size, _before_calls, policy, step, checked, exposed)


def _before_calls(
    policy: Policy, step: int, checked: list[CheckedCall], exposed: Mapping[str, Tool]
) -> Proposals:
    result = Proposals([])
    for call in checked:
        if call.rejection is not None or call.tool not in exposed:
            result.checked.append(call)
            continue
        spec = exposed[call.tool].spec
        subject = Subject(
            Point.BEFORE_CALL, call.call_id, call.tool, spec.external, arguments=call.arguments
        )
        seen = guardrails.check(policy, subject)
        result.events[call.call_id] = seen.events(step)
        error = blocked_error(seen)
        if error is not None:
            call = replace(call, rejection=error)
            if policy.blocks_with(Point.BEFORE_CALL) is OnBlock.END_RUN and result.ends is None:
                result.ends = error
        result.checked.append(call)
    return result


@dataclass(frozen=True)
class Settled:
    """A result after the after_call guardrails: `result` as it may be stored (redacted),
    or `blocked` (it goes no further) and whether that ends the run."""

    result: ToolResult
    events: list[Event]
    blocked: ErrorValue | None = None
    ends: bool = False


async def after_call(
    policy: Policy, call: Call, spec_external: bool, result: ToolResult
) -> Settled:
    """Runs before the result is stored: neither the API nor the model ever sees what a
    guardrail redacted or blocked. Off the loop when the output is large."""
    if result.withheld is not None:
        return Settled(result, [])
    # What the backend wrote beside its output (short strings) reaches the model in the
    # same envelope: it is checked with the output, as one value.
    beside = {
        k: v
        for k, v in (("source_version", result.source_version), ("observed_at", result.observed_at))
        if v is not None
    }
    checked = {"output": result.output, **beside} if beside else result.output
    subject = Subject(
        Point.AFTER_CALL,
        call.call_id,
        call.tool,
        spec_external,
        arguments=call.arguments,
        output=checked,
    )
    size = len(subject.output_text) + off_loop.json_size(call.arguments)
    seen = await off_loop.run(size, guardrails.check, policy, subject)
    events = seen.events(call.step)
    error = blocked_error(seen)
    if error is not None:
        ends = policy.blocks_with(Point.AFTER_CALL) is OnBlock.END_RUN
        return Settled(result, events, error, ends)
    if not beside:
        return Settled(replace(result, output=seen.subject.output), events)
    kept = seen.subject.output
    return Settled(replace(result, output=kept["output"], **{k: kept[k] for k in beside}), events)


@dataclass(frozen=True)
class Text:
    """An untrusted text (any JSON value) on its way to a model, after the after_call
    guardrails, which check it as they check a result: `value` as it may go on
    (redacted), or `blocked` (it goes no further) and whether that ends the run."""

    value: Any
    events: list[Event]
    blocked: ErrorValue | None = None
    ends: bool = False


def after_text(
    policy: Policy,
    value: Any,
    *,
    on: str,
    about: str,
    step: int = 0,
    call_id: str | None = None,
    tool: str | None = None,
    external: bool = False,
) -> Text:
    """`value` (an error's message, a delegated run's input, a carry-over) checked by the
    after_call guardrails; its events say what was checked (`on`)."""
    subject = Subject(Point.AFTER_CALL, call_id, tool, external, output=value, about=about)
    seen = guardrails.check(policy, subject)
    events = seen.events(step, on)
    error = blocked_error(seen)
    if error is not None:
        return Text(value, events, error, policy.blocks_with(Point.AFTER_CALL) is OnBlock.END_RUN)
    return Text(seen.subject.output, events)


async def entering(policy: Policy, value: Any, *, on: str, about: str) -> Text:
    """`after_text` for what opens a new run's model input: off the loop when large."""
    size = off_loop.json_size(value)
    return await off_loop.run(size, lambda: after_text(policy, value, on=on, about=about))


@dataclass(frozen=True)
class Final:
    """A final answer after the on_final guardrails and, for a typed agent, its schema:
    its text as it may be shown and the document it holds (`data`, when `typed`), or the
    rejection that stops it (`errors`: a schema's reasons) and whether that ends the run."""

    text: str
    events: list[Event]
    rejection: ErrorValue | None = None
    ends: bool = False
    typed: bool = False
    data: Any = None
    errors: tuple[OutputError, ...] = ()


async def on_final(
    policy: Policy,
    step: int,
    text: str,
    sources: frozenset[str],
    output: OutputSchema | None = None,
) -> Final:
    """The final answer's guardrails and, for a typed agent, its parse and schema check:
    off the loop when the answer is large."""
    return await off_loop.run(len(text), _on_final, policy, step, text, sources, output)


def _on_final(
    policy: Policy,
    step: int,
    text: str,
    sources: frozenset[str],
    output: OutputSchema | None = None,
) -> Final:
    seen = guardrails.check(policy, Subject(Point.ON_FINAL, text=text, sources=sources))
    events = seen.events(step)
    error = blocked_error(seen)
    if error is not None:
        # The turn keeps what the model wrote, without what a guardrail would redact.
        ends = policy.blocks_with(Point.ON_FINAL) is OnBlock.END_RUN
        return Final(scrub_text(text), events, error, ends)
    shown = seen.subject.text
    if output is None:
        return Final(shown, events)
    # The text as it may be shown is what is parsed: a redaction reaches the data too.
    typed = check(shown, output.schema)
    if typed.fits:
        return Final(shown, events, typed=True, data=typed.data)
    # Always the model's to correct, like a wrong tool argument: no guardrail blocked it.
    rejection = ErrorValue.rejection(INVALID_OUTPUT, typed.message())
    return Final(shown, events, rejection, typed=True, errors=typed.errors)
