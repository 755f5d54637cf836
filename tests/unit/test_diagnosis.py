"""The diagnosis rule (SPEC §9), table-driven: each row is a run's timeline and the three
answers it must give, named by the event they point at. Every category of the taxonomy
comes out of at least one row."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from app.domain.forensics.diagnosis import (
    MAX_EXPLANATION,
    NO_PROGRESS_STEPS,
    Diagnosis,
    Finding,
    RunEvent,
    anomalies,
    diagnose,
)
from app.domain.forensics.taxonomy import GROUPS
from app.domain.forensics.taxonomy import DiagnosisCategory as Category
from app.domain.lifecycle.events import EventType as E

C = Category


@dataclass
class Timeline:
    """A run's events, written the way the engine writes them, with marks on the ones a
    row names."""

    events: list[RunEvent] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.at(E.RUN_CREATED)
        self.at(E.RUN_CLAIMED, after_step=0)

    def at(self, kind: E, mark: str | None = None, /, **data: Any) -> Timeline:
        seq = len(self.events) + 1
        self.events.append(RunEvent(seq, kind, data))
        if mark:
            self.marks[mark] = seq
        return self

    def turn(self, step: int, kind: str = "tool_calls", mark: str | None = None) -> Timeline:
        return self.at(E.TURN_COMPLETED, mark, step=step, attempt=1, kind=kind)

    def model_error(self, step: int, code: str, mark: str | None = None) -> Timeline:
        return self.at(E.TURN_FAILED, mark, step=step, attempt=1, code=code, message="m")

    def call(
        self,
        step: int,
        tool: str,
        outcome: str,
        *,
        cid: str = "c1",
        args: str = "sha256:a",
        code: str | None = None,
        mark: str | None = None,
        proposed: str | None = None,
    ) -> Timeline:
        about = {"step": step, "call_id": cid}
        self.at(E.CALL_PROPOSED, proposed, **about, tool=tool, args_hash=args)
        error = {"code": code, "retryable": False, "message": f"{code} happened"}
        if outcome == "refused":
            return self.at(E.CALL_REJECTED, mark, **about, **error)
        if outcome == "cancelled":
            return self.at(E.CALL_CANCELLED, mark, **about, code=code)
        if outcome in ("rejected_by_approver", "expired"):
            self.at(E.CALL_AWAITING_APPROVAL, **about, tool=tool)
            kind = E.CALL_REJECTED_BY_APPROVER if outcome != "expired" else E.CALL_REJECTED
            return self.at(kind, mark, **about, tool=tool, **error)
        self.at(E.CALL_STARTED, **about, tool=tool, attempt=1)
        if outcome == "failed":
            return self.at(E.CALL_FAILED, mark, **about, tool=tool, **error, ends_run=False)
        withheld = {"output_withheld": True, "code": code} if outcome == "withheld" else {}
        return self.at(E.CALL_SUCCEEDED, mark, **about, tool=tool, attempts=1, **withheld)

    def search(self, step: int, args: str = "sha256:a", **kw: Any) -> Timeline:
        """A step whose one read succeeds."""
        return self.turn(step).call(step, "search", "succeeded", args=args, **kw)

    def end(self, reason: str, code: str | None = None, mark: str = "end") -> Timeline:
        error = None if reason == "final" else {"code": code or reason, "message": "why"}
        return self.at(E.RUN_FINISHED, mark, termination_reason=reason, error=error)

    def final(self, step: int) -> Timeline:
        return self.turn(step, "final").end("final")


Expected = tuple[str, Category] | None


@dataclass(frozen=True)
class Row:
    name: str
    timeline: Callable[[], Timeline]
    first: Expected
    root: Expected
    terminal: Expected


def _steps(n: int, start: int = 1) -> Timeline:
    t = Timeline()
    for step in range(start, start + n):
        t.search(step, args=f"sha256:{step}")
    return t


ROWS = [
    # -- clean, and recovered --------------------------------------------------------------
    Row("clean", lambda: Timeline().search(1).final(2), None, None, ("end", C.FINAL)),
    Row(
        "model rate limited, retried",
        lambda: Timeline().model_error(1, "rate_limited", "x").search(1).final(2),
        ("x", C.RATE_LIMITED),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "model timeout, retried",
        lambda: Timeline().model_error(1, "timeout", "x").search(1).final(2),
        ("x", C.UNAVAILABLE),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "malformed output, retried",
        lambda: Timeline().model_error(1, "malformed_output", "x").final(1),
        ("x", C.MALFORMED_OUTPUT),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "invalid arguments, corrected",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "search", "refused", code="invalid_arguments", mark="x")
            .search(2, args="sha256:b")
            .final(3)
        ),
        ("x", C.INVALID_ARGUMENTS),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "unknown tool, another tool chosen",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "serch", "refused", code="unknown_tool", mark="x")
            .search(2)
            .final(3)
        ),
        ("x", C.UNKNOWN_TOOL),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "output withheld, the run goes on",
        lambda: (
            Timeline().turn(1).call(1, "note", "withheld", code="invalid_output", mark="x").final(2)
        ),
        ("x", C.INVALID_OUTPUT),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "repeated call, then progress",
        lambda: Timeline().search(1).search(2, proposed="x").search(3, args="sha256:b").final(4),
        ("x", C.REPEATED_CALL),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "a step failed once, the run went on",
        lambda: Timeline().at(E.STEP_FAILED, "x", decision="CallModel", failures=1).final(1),
        ("x", C.INTERNAL),
        None,
        ("end", C.FINAL),
    ),
    # -- answered, but a fault never overcome --------------------------------------------
    Row(
        "a read failed, the model answered without it",
        lambda: Timeline().turn(1).call(1, "get", "failed", code="not_found", mark="x").final(2),
        ("x", C.FAILED),
        ("x", C.FAILED),
        ("end", C.FINAL),
    ),
    Row(
        "invalid output of a read",
        lambda: (
            Timeline().turn(1).call(1, "get", "failed", code="invalid_output", mark="x").final(2)
        ),
        ("x", C.INVALID_OUTPUT),
        ("x", C.INVALID_OUTPUT),
        ("end", C.FINAL),
    ),
    Row(
        "a tool timed out, then another tool worked",
        lambda: (
            Timeline().turn(1).call(1, "get", "failed", code="timeout", mark="x").search(2).final(3)
        ),
        ("x", C.TIMEOUT),
        ("x", C.TIMEOUT),
        ("end", C.FINAL),
    ),
    Row(
        "switched off",
        lambda: (
            Timeline().turn(1).call(1, "note", "failed", code="tool_disabled", mark="x").final(2)
        ),
        ("x", C.PERMISSION_DENIED),
        ("x", C.PERMISSION_DENIED),
        ("end", C.FINAL),
    ),
    Row(
        "an approver said no",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "move", "rejected_by_approver", code="rejected_by_approver", mark="x")
            .final(2)
        ),
        ("x", C.APPROVAL_REJECTED),
        ("x", C.APPROVAL_REJECTED),
        ("end", C.FINAL),
    ),
    Row(
        "an approval expired",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "move", "expired", code="approval_expired", mark="x")
            .final(2)
        ),
        ("x", C.APPROVAL_EXPIRED),
        ("x", C.APPROVAL_EXPIRED),
        ("end", C.FINAL),
    ),
    Row(
        "feedback ignored: the refused call again, unchanged",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "get", "refused", code="invalid_arguments", mark="x")
            .turn(2)
            .call(2, "get", "refused", code="invalid_arguments", mark="y")
            .end("max_steps")
        ),
        ("x", C.INVALID_ARGUMENTS),
        ("x", C.INVALID_ARGUMENTS),
        ("end", C.MAX_STEPS),
    ),
    Row(
        "feedback ignored, then only old ground again",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "get", "succeeded", args="sha256:a")
            .turn(2)
            .call(2, "get", "refused", code="invalid_arguments", args="sha256:b", mark="x")
            .turn(3)
            .call(3, "get", "refused", code="invalid_arguments", args="sha256:b", mark="y")
            .turn(4)
            .call(4, "get", "succeeded", args="sha256:a")
            .end("max_steps")
        ),
        ("x", C.INVALID_ARGUMENTS),
        ("y", C.IGNORED_FEEDBACK),
        ("end", C.MAX_STEPS),
    ),
    # -- ended other than final ----------------------------------------------------------
    Row(
        "model credentials refused",
        lambda: Timeline().model_error(1, "auth", "x").end("model_failed", "auth"),
        ("x", C.AUTH),
        ("x", C.AUTH),
        ("end", C.AUTH),
    ),
    Row(
        "the provider refused the request",
        lambda: (
            Timeline().search(1).model_error(2, "rejected", "x").end("model_failed", "rejected")
        ),
        ("x", C.REJECTED),
        ("x", C.REJECTED),
        ("end", C.REJECTED),
    ),
    Row(
        "content filtered",
        lambda: (
            Timeline()
            .model_error(1, "content_filtered", "x")
            .end("model_failed", "content_filtered")
        ),
        ("x", C.CONTENT_FILTERED),
        ("x", C.CONTENT_FILTERED),
        ("end", C.CONTENT_FILTERED),
    ),
    Row(
        "truncated",
        lambda: Timeline().model_error(1, "truncated", "x").end("model_failed", "truncated"),
        ("x", C.TRUNCATED),
        ("x", C.TRUNCATED),
        ("end", C.TRUNCATED),
    ),
    Row(
        "a provider billed past the budget, ignoring the call's cap",
        lambda: Timeline().model_error(1, "budget_overshoot", "x").end("budget"),
        ("x", C.BUDGET),
        ("x", C.BUDGET),
        ("end", C.BUDGET),
    ),
    Row(
        "the script ran out",
        lambda: Timeline().search(1).end("model_failed", "script_exhausted"),
        ("end", C.STOPPED_EARLY),
        ("end", C.STOPPED_EARLY),
        ("end", C.STOPPED_EARLY),
    ),
    Row(
        "a final answer rejected, never a good one",
        lambda: (
            Timeline()
            .search(1)
            .turn(2, "final")
            .at(E.FINAL_REJECTED, "x", step=2, code="invalid_citation", message="s9")
            .end("max_steps")
        ),
        ("x", C.MALFORMED_OUTPUT),
        ("x", C.MALFORMED_OUTPUT),
        ("end", C.MAX_STEPS),
    ),
    Row(
        "a rejected final answer, then an accepted one",
        lambda: (
            Timeline()
            .turn(1, "final")
            .at(E.FINAL_REJECTED, "x", step=1, code="invalid_citation", message="s9")
            .final(2)
        ),
        ("x", C.MALFORMED_OUTPUT),
        None,
        ("end", C.FINAL),
    ),
    Row(
        "an unknown outcome ends the run",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "note", "failed", code="outcome_unknown", mark="x")
            .end("tool_failed", "outcome_unknown")
        ),
        ("x", C.OUTCOME_UNKNOWN),
        ("x", C.OUTCOME_UNKNOWN),
        ("end", C.OUTCOME_UNKNOWN),
    ),
    Row(
        "a tool left the config",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "gone", "failed", code="tool_unavailable", mark="x")
            .end("tool_failed", "tool_unavailable")
        ),
        ("x", C.UNKNOWN_TOOL),
        ("x", C.UNKNOWN_TOOL),
        ("end", C.UNKNOWN_TOOL),
    ),
    Row(
        "a fatal backend error",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "note", "failed", code="ledger_down", mark="x")
            .end("tool_failed", "ledger_down")
        ),
        ("x", C.FAILED),
        ("x", C.FAILED),
        ("end", C.FAILED),
    ),
    Row(
        "the turn's calls did not fit the budget",
        lambda: (
            Timeline().turn(1).call(1, "search", "cancelled", code="budget", mark="x").end("budget")
        ),
        ("x", C.BUDGET_DENIED),
        ("x", C.BUDGET_DENIED),
        ("end", C.BUDGET),
    ),
    Row(
        "a tool's rate limit",
        lambda: (
            Timeline()
            .turn(1)
            .call(1, "search", "refused", code="rate_limited", mark="x")
            .end("deadline")
        ),
        ("x", C.BUDGET_DENIED),
        ("x", C.BUDGET_DENIED),
        ("end", C.DEADLINE),
    ),
    Row(
        "the same search over and over",
        lambda: Timeline().search(1).search(2, proposed="x").search(3).search(4).end("max_steps"),
        ("x", C.REPEATED_CALL),
        ("x", C.REPEATED_CALL),
        ("end", C.MAX_STEPS),
    ),
    Row(
        "turns that propose nothing",
        lambda: Timeline().search(1).turn(2).turn(3).turn(4, mark="x").end("max_steps"),
        ("x", C.NO_PROGRESS),
        ("x", C.NO_PROGRESS),
        ("end", C.MAX_STEPS),
    ),
    Row(
        "progress every step, no answer: only a reference could tell",
        lambda: _steps(4).end("max_steps"),
        ("end", C.MAX_STEPS),
        ("end", C.NEEDS_REVIEW),
        ("end", C.MAX_STEPS),
    ),
    Row(
        "tokens spent on progress",
        lambda: _steps(2).end("budget"),
        ("end", C.BUDGET),
        ("end", C.NEEDS_REVIEW),
        ("end", C.BUDGET),
    ),
    Row(
        "context exhausted",
        lambda: _steps(2).model_error(3, "context_exhausted", "x").end("context_exhausted"),
        ("x", C.CONTEXT_EXHAUSTED),
        ("x", C.CONTEXT_EXHAUSTED),
        ("end", C.CONTEXT_EXHAUSTED),
    ),
    Row(
        "the deadline passed while awaiting approval",
        lambda: (
            Timeline()
            .turn(1)
            .at(E.CALL_PROPOSED, step=1, call_id="c1", tool="move", args_hash="h")
            .at(E.CALL_AWAITING_APPROVAL, step=1, call_id="c1", tool="move")
            .at(E.CALL_CANCELLED, step=1, call_id="c1", code="deadline")
            .end("deadline")
        ),
        ("end", C.DEADLINE),
        ("end", C.DEADLINE),
        ("end", C.DEADLINE),
    ),
    Row(
        "cancelled by its client",
        lambda: (
            Timeline().search(1).at(E.RUN_CANCEL_REQUESTED, "x", by="svc-shop").end("cancelled")
        ),
        ("x", C.CANCELLED),
        ("x", C.CANCELLED),
        ("end", C.CANCELLED),
    ),
    Row(
        "no route meets the data policy",
        lambda: Timeline().end("policy_denied", "no_route"),
        ("end", C.POLICY_DENIED),
        ("end", C.POLICY_DENIED),
        ("end", C.POLICY_DENIED),
    ),
    Row(
        "a step that kept failing",
        lambda: (
            Timeline()
            .at(E.STEP_FAILED, "x", decision="CallModel", failures=1)
            .at(E.STEP_FAILED, decision="CallModel", failures=2)
            .end("model_failed", "internal")
        ),
        ("x", C.INTERNAL),
        ("x", C.INTERNAL),
        ("end", C.INTERNAL),
    ),
    # -- not finished yet ----------------------------------------------------------------
    Row(
        "running, a fault not recovered yet",
        lambda: Timeline().turn(1).call(1, "get", "failed", code="not_found", mark="x").turn(2),
        ("x", C.FAILED),
        ("x", C.FAILED),
        None,
    ),
    Row("running cleanly", lambda: Timeline().search(1).turn(2), None, None, None),
]


def _answer(found: Finding | None, marks: dict[str, int]) -> Expected:
    if found is None:
        return None
    named = [name for name, seq in marks.items() if seq == found.seq]
    return (named[0] if named else f"seq {found.seq}", found.category)


def _diagnosed(row: Row) -> tuple[Timeline, Diagnosis]:
    t = row.timeline()
    return t, diagnose(t.events)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_timeline_gets_its_three_answers(row: Row) -> None:
    t, found = _diagnosed(row)
    assert _answer(found.first_deviation, t.marks) == row.first
    assert _answer(found.root_cause, t.marks) == row.root
    assert _answer(found.terminal_cause, t.marks) == row.terminal


def test_every_category_is_produced_by_some_row() -> None:
    produced = set()
    for row in ROWS:
        _, found = _diagnosed(row)
        for finding in (found.first_deviation, found.root_cause, found.terminal_cause):
            if finding is not None:
                produced.add(finding.category)
    assert produced == set(Category)


def test_the_groups_hold_every_category_once() -> None:
    listed = [c for group in GROUPS.values() for c in group]
    assert sorted(listed) == sorted(Category)


def test_the_answer_does_not_depend_on_the_order_the_events_come_in() -> None:
    for row in ROWS:
        t, found = _diagnosed(row)
        shuffled = list(t.events)
        random.Random(row.name).shuffle(shuffled)
        assert diagnose(shuffled) == found, row.name


def test_explanations_are_one_bounded_line() -> None:
    t = Timeline().turn(1)
    t.at(E.CALL_FAILED, step=1, call_id="c1", tool="get", code="x", message="a\nb\r\n" + "z" * 999)
    found = diagnose(t.end("tool_failed", "x").events)
    for finding in (found.first_deviation, found.root_cause, found.terminal_cause):
        assert finding is not None
        assert "\n" not in finding.explanation and "\r" not in finding.explanation
        assert 0 < len(finding.explanation) <= MAX_EXPLANATION


def test_ignored_feedback_is_the_repeat_refused_the_same_way() -> None:
    t = Timeline().turn(1).call(1, "get", "refused", code="invalid_arguments")
    t.turn(2).call(2, "get", "refused", code="invalid_arguments", mark="again")
    found = diagnose(t.search(3).final(4).events)
    # The repeat is a loop anomaly of its own; progress after it recovers it, while the
    # original refusal stays unrecovered: `get` never worked.
    repeat = [n for n in anomalies(t.events) if n.finding.seq == t.marks["again"]]
    assert [(n.finding.category, n.recovered) for n in repeat] == [(C.IGNORED_FEEDBACK, True)]
    assert found.root_cause is not None and found.root_cause.category is C.INVALID_ARGUMENTS


def test_a_refusal_repeated_with_new_arguments_is_not_ignored_feedback() -> None:
    t = Timeline().turn(1).call(1, "get", "refused", code="invalid_arguments", args="sha256:a")
    t.turn(2).call(2, "get", "refused", code="invalid_arguments", args="sha256:b", mark="new")
    found = [n.finding.category for n in anomalies(t.events) if n.finding.seq == t.marks["new"]]
    assert found == [C.INVALID_ARGUMENTS]


def test_needs_review_only_when_nothing_else_explains() -> None:
    faulty = _steps(2)
    faulty.turn(3).call(3, "get", "failed", code="not_found", mark="x").search(4, args="z")
    found = diagnose(faulty.end("max_steps").events)
    assert found.root_cause == Finding(faulty.marks["x"], C.FAILED, found.root_cause.explanation)
    # A deadline, a cancel or a failed model explain themselves: never needs_review.
    for reason, code in (("deadline", None), ("model_failed", "auth"), ("cancelled", None)):
        clean = diagnose(_steps(2).end(reason, code).events)
        assert clean.root_cause is not None
        assert clean.root_cause.category is not C.NEEDS_REVIEW, reason


def test_no_progress_counts_steps_in_a_row() -> None:
    t = Timeline().search(1)
    for step in range(2, 2 + NO_PROGRESS_STEPS - 1):
        t.turn(step)
    t.search(2 + NO_PROGRESS_STEPS - 1, args="sha256:new").final(9)
    assert diagnose(t.events).first_deviation is None
