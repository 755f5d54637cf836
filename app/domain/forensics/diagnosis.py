"""Why a run went as it did (SPEC §9), decided from its own timeline alone: the first
deviation, the root cause and the terminal cause, each an event's seq, a category of one
fixed taxonomy and a line of explanation. One pure rule, so that the same events always
give the same answer; `docs/diagnosis.md` explains the taxonomy and what "recovered"
means, and `docs/decisions.md` why."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from app.domain.forensics.taxonomy import ENDINGS, MODEL_CODES, TOOL_CODES, DiagnosisCategory
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.status import TerminationReason

C = DiagnosisCategory

#: Steps in a row without progress that make a `no_progress` anomaly.
NO_PROGRESS_STEPS = 3
#: How long an explanation may be (one line).
MAX_EXPLANATION = 300

#: Endings the model's own choices use up: with no recorded fault before them, only a
#: reference could say whether it chose the wrong tools (`needs_review`).
_SPENT_BY_CHOICES = frozenset(
    {TerminationReason.MAX_STEPS, TerminationReason.BUDGET, TerminationReason.CONTEXT_EXHAUSTED}
)
#: A tool the call could not use at all: choosing another one that works recovers it.
_UNUSABLE = frozenset({C.UNKNOWN_TOOL, C.PERMISSION_DENIED, C.MALFORMED_OUTPUT})


@dataclass(frozen=True)
class RunEvent:
    """One event of a run's timeline, as recorded."""

    seq: int
    type: EventType
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Finding:
    seq: int
    category: DiagnosisCategory
    explanation: str


@dataclass(frozen=True)
class Diagnosis:
    first_deviation: Finding | None
    root_cause: Finding | None
    terminal_cause: Finding | None


class Mend(Enum):
    """What later record shows the run got past an anomaly."""

    ANSWER = "answer"  # the model answered after it (a turn completed)
    FINAL = "final"  # a final answer was accepted after it
    SAME_TOOL = "same_tool"  # a call of the same tool, proposed in a later step, succeeded
    ANY_TOOL = "any_tool"  # a call of any tool, proposed in a later step, succeeded
    PROGRESS = "progress"  # progress after it: a new successful call, or an accepted answer
    NEVER = "never"  # the run's end, or a cancel: nothing comes back from it


@dataclass(frozen=True)
class Anomaly:
    finding: Finding
    mend: Mend
    step: int = 0
    tool: str = ""


@dataclass(frozen=True)
class Success:
    seq: int
    step: int
    tool: str
    #: Its tool and arguments had not succeeded in an earlier step: progress.
    new: bool


Key = tuple[str, str]  # (tool, args_hash)


def one_line(text: str) -> str:
    return " ".join(text.split())[:MAX_EXPLANATION]


def _said(data: Mapping[str, Any]) -> str:
    """`(code): message` of an event's error."""
    message = str(data.get("message") or "").strip()
    return f"({data.get('code')})" + (f": {message}" if message else "")


@dataclass
class Trail:
    """What a scan of the timeline found: the anomalies as they were recorded, and the
    records that may show a recovery from them."""

    anomalies: list[Anomaly] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    successes: list[Success] = field(default_factory=list)
    steps: list[tuple[int, int]] = field(default_factory=list)  # (step, turn.completed seq)
    progressed: set[int] = field(default_factory=set)
    final_seq: int | None = None
    finished: RunEvent | None = None
    proposals: dict[tuple[int, str], Key] = field(default_factory=dict)
    succeeded: dict[Key, int] = field(default_factory=dict)  # first step it succeeded in
    refused: dict[Key, tuple[int, str]] = field(default_factory=dict)  # (step, code)

    def see(self, event: RunEvent) -> None:
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)

    def add(
        self, event: RunEvent, category: DiagnosisCategory, text: str, mend: Mend, **of: Any
    ) -> None:
        self.anomalies.append(Anomaly(Finding(event.seq, category, one_line(text)), mend, **of))

    def key_of(self, data: Mapping[str, Any]) -> Key:
        step, call_id = int(data.get("step") or 0), str(data.get("call_id"))
        return self.proposals.get((step, call_id), (str(data.get("tool") or ""), ""))

    def recovered(self, anomaly: Anomaly) -> bool:
        seq, mend = anomaly.finding.seq, anomaly.mend
        if mend is Mend.ANSWER:
            return any(s > seq for s in self.answers)
        if mend is Mend.FINAL:
            return self.final_seq is not None and self.final_seq > seq
        if mend is Mend.PROGRESS:
            later_final = self.final_seq is not None and self.final_seq > seq
            return later_final or any(s.seq > seq and s.new for s in self.successes)
        if mend is Mend.NEVER:
            return False
        return any(
            s.seq > seq
            and s.step > anomaly.step
            and (mend is Mend.ANY_TOOL or s.tool == anomaly.tool)
            for s in self.successes
        )


def _turn_completed(trail: Trail, event: RunEvent) -> None:
    trail.answers.append(event.seq)
    trail.steps.append((int(event.data.get("step") or 0), event.seq))


def _turn_failed(trail: Trail, event: RunEvent) -> None:
    data = event.data
    category = MODEL_CODES.get(str(data.get("code")), C.UNAVAILABLE)
    text = f"step {data.get('step')}, attempt {data.get('attempt')}: the model failed {_said(data)}"
    trail.add(event, category, text, Mend.ANSWER)


def _final_rejected(trail: Trail, event: RunEvent) -> None:
    text = f"step {event.data.get('step')}: the final answer was rejected {_said(event.data)}"
    trail.add(event, C.MALFORMED_OUTPUT, text, Mend.FINAL)


def _step_failed(trail: Trail, event: RunEvent) -> None:
    text = (
        f"a step failed unexpectedly ({event.data.get('failures')} in a row); "
        "the service's log holds the failure"
    )
    trail.add(event, C.INTERNAL, text, Mend.ANSWER)


def _cancel_requested(trail: Trail, event: RunEvent) -> None:
    trail.add(event, C.CANCELLED, f"{event.data.get('by')} asked to cancel the run", Mend.NEVER)


def _proposed(trail: Trail, event: RunEvent) -> None:
    data = event.data
    step, call_id = int(data.get("step") or 0), str(data.get("call_id"))
    key = (str(data.get("tool")), str(data.get("args_hash")))
    trail.proposals.setdefault((step, call_id), key)  # a repeated id keeps the first
    earlier = trail.succeeded.get(key)
    if earlier is not None and earlier < step:
        text = (
            f"call {call_id} asked {key[0]} again with the arguments of a call that "
            f"succeeded at step {earlier}"
        )
        trail.add(event, C.REPEATED_CALL, text, Mend.PROGRESS, step=step, tool=key[0])


def _succeeded(trail: Trail, event: RunEvent) -> None:
    data = event.data
    step, key = int(data.get("step") or 0), trail.key_of(data)
    first = trail.succeeded.setdefault(key, step)
    new = first == step
    trail.successes.append(Success(event.seq, step, key[0], new))
    if new:
        trail.progressed.add(step)
    if data.get("output_withheld"):
        text = (
            f"call {data.get('call_id')} to {key[0]} took effect, but its output was "
            f"withheld ({data.get('code')})"
        )
        trail.add(event, C.INVALID_OUTPUT, text, Mend.ANSWER, step=step, tool=key[0])


def _call_anomaly(trail: Trail, event: RunEvent, verb: str) -> None:
    """A call refused, failed or rejected: its code's category, or `ignored_feedback`
    when the same call, unchanged, was refused the same way in an earlier step."""
    data = event.data
    step, key, code = int(data.get("step") or 0), trail.key_of(data), str(data.get("code"))
    category = TOOL_CODES.get(code, C.FAILED)
    before = trail.refused.get(key)
    trail.refused[key] = (step, code)
    about = f"call {data.get('call_id')} to {key[0]}"
    if before is not None and before[0] < step and before[1] == code and key[1]:
        text = (
            f"{about} repeated, unchanged, a call refused at step {before[0]} ({code}), "
            f"and {verb} the same way"
        )
        trail.add(event, C.IGNORED_FEEDBACK, text, Mend.PROGRESS, step=step, tool=key[0])
        return
    mend = Mend.ANY_TOOL if category in _UNUSABLE else Mend.SAME_TOOL
    trail.add(event, category, f"{about} {verb} {_said(data)}", mend, step=step, tool=key[0])


def _cancelled(trail: Trail, event: RunEvent) -> None:
    # Only the budget's refusal is an anomaly; other cancellations follow the run's end.
    if event.data.get("code") == "budget":
        _call_anomaly(trail, event, "was not run: the run's budget could not pay for it")


def _finished(trail: Trail, event: RunEvent) -> None:
    trail.finished = event
    if event.data.get("termination_reason") == TerminationReason.FINAL:
        trail.final_seq = event.seq
        if trail.steps:
            trail.progressed.add(trail.steps[-1][0])


_HANDLERS: Mapping[EventType, Callable[[Trail, RunEvent], None]] = {
    EventType.TURN_COMPLETED: _turn_completed,
    EventType.TURN_FAILED: _turn_failed,
    EventType.FINAL_REJECTED: _final_rejected,
    EventType.STEP_FAILED: _step_failed,
    EventType.RUN_CANCEL_REQUESTED: _cancel_requested,
    EventType.CALL_PROPOSED: _proposed,
    EventType.CALL_SUCCEEDED: _succeeded,
    EventType.CALL_REJECTED: lambda t, e: _call_anomaly(t, e, "was refused"),
    EventType.CALL_FAILED: lambda t, e: _call_anomaly(t, e, "failed"),
    EventType.CALL_REJECTED_BY_APPROVER: lambda t, e: _call_anomaly(t, e, "was rejected"),
    EventType.CALL_CANCELLED: _cancelled,
    EventType.RUN_FINISHED: _finished,
}


def stalls(trail: Trail) -> list[Anomaly]:
    """`no_progress`: NO_PROGRESS_STEPS steps in a row, each closed (a later step or the
    run's end followed it), with no new successful call and no accepted answer."""
    found: list[Anomaly] = []
    run = 0
    closed = trail.steps if trail.finished else trail.steps[:-1]
    for step, seq in closed:
        run = 0 if step in trail.progressed else run + 1
        if run == NO_PROGRESS_STEPS:
            first = step - NO_PROGRESS_STEPS + 1
            text = (
                f"steps {first} to {step} made no progress: no new successful call, "
                "no accepted answer"
            )
            found.append(Anomaly(Finding(seq, C.NO_PROGRESS, text), Mend.PROGRESS, step=step))
    return found


def terminal(finished: RunEvent | None) -> Finding | None:
    """The termination reason as a finding at `run.finished` (None: not finished)."""
    if finished is None:
        return None
    reason = str(finished.data.get("termination_reason"))
    error = finished.data.get("error") or {}
    code = str(error.get("code") or reason)
    if reason == TerminationReason.FINAL:
        text = "the model gave a final answer that passed the output checks"
        return Finding(finished.seq, C.FINAL, text)
    if code == "internal":
        category = C.INTERNAL
    elif reason == TerminationReason.TOOL_FAILED:
        category = TOOL_CODES.get(code, C.FAILED)
    elif reason == TerminationReason.MODEL_FAILED:
        category = MODEL_CODES.get(code, C.UNAVAILABLE)
    else:
        category = ENDINGS.get(reason, C.INTERNAL)
    said = f": {error.get('message')}" if code == reason else f" {_said(error)}"
    return Finding(finished.seq, category, one_line(f"the run ended {reason}{said}"))


def _root(unrecovered: Sequence[Finding], ending: Finding | None, reason: str) -> Finding | None:
    """The earliest anomaly never recovered from; when that is only the run's end at a
    limit its own choices spent, nothing recorded explains it: `needs_review`."""
    if not unrecovered:
        return None
    first = unrecovered[0]
    if ending is not None and first.seq == ending.seq and reason in _SPENT_BY_CHOICES:
        text = (
            f"the run ended {reason} with no recorded fault; whether the model chose the "
            "wrong tools cannot be told without a reference: review the run"
        )
        return Finding(ending.seq, C.NEEDS_REVIEW, text)
    return first


@dataclass(frozen=True)
class Noted:
    """An anomaly of the run, and whether a later record shows the run got past it."""

    finding: Finding
    recovered: bool


def _scan(events: Iterable[RunEvent]) -> tuple[Trail, Finding | None, list[Noted]]:
    trail = Trail()
    for event in sorted(events, key=lambda e: e.seq):
        trail.see(event)
    ending = terminal(trail.finished)
    found = [*trail.anomalies, *stalls(trail)]
    if ending is not None and ending.category is not C.FINAL:
        found.append(Anomaly(ending, Mend.NEVER))
    found.sort(key=lambda a: a.finding.seq)
    return trail, ending, [Noted(a.finding, trail.recovered(a)) for a in found]


def anomalies(events: Iterable[RunEvent]) -> list[Noted]:
    """Every anomaly of the run in the order of its events, the run's end included when
    it was not `final`."""
    return _scan(events)[2]


def diagnose(events: Iterable[RunEvent]) -> Diagnosis:
    """The run's diagnosis from its events (any order; each seq once). An unfinished run
    has no terminal cause, and its root cause is the earliest anomaly not recovered yet."""
    trail, ending, noted = _scan(events)
    reason = str(trail.finished.data.get("termination_reason")) if trail.finished else ""
    return Diagnosis(
        first_deviation=noted[0].finding if noted else None,
        root_cause=_root([n.finding for n in noted if not n.recovered], ending, reason),
        terminal_cause=ending,
    )
