"""Guardrails: checks at three points of a run, each with its own job (SPEC §2).

- `before_call`: a proposed call's arguments against policy (no secrets or personal data
  sent to an external tool), after the gates, before execution or preview;
- `after_call`: a result before anything stores it or shows it to the model (secrets
  redacted, injection markers flagged or blocked);
- `on_final`: a final answer before it ends the run (citations of sources the run
  produced only, no secrets or personal data).

A guardrail is a pure function of what it looks at (`Subject`) to a `Verdict` or None;
the registry holds the built-ins by name, and an agent lists the names it wants per point.
A guardrail that raises fails closed: it counts as a block with code `guardrail_failed`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

from app.domain.guardrails import sensitive
from app.domain.lifecycle.events import Event, EventType
from app.domain.model.citations import unknown_citations


class Point(StrEnum):
    BEFORE_CALL = "before_call"
    AFTER_CALL = "after_call"
    ON_FINAL = "on_final"


class Action(StrEnum):
    FLAGGED = "flagged"  # noted (an event); what it saw goes on unchanged
    REDACTED = "redacted"  # what it saw goes on with the matches replaced
    BLOCKED = "blocked"  # what it saw goes no further


class OnBlock(StrEnum):
    """What a block does: feed the model an observation, or end the run `policy_denied`."""

    OBSERVE = "observe"
    END_RUN = "end_run"


GUARDRAIL_BLOCKED = "guardrail_blocked"
GUARDRAIL_FAILED = "guardrail_failed"
INVALID_CITATION = "invalid_citation"
#: Error codes a guardrail gives: a call that ends the run with one ends it `policy_denied`.
POLICY_CODES = frozenset({GUARDRAIL_BLOCKED, GUARDRAIL_FAILED})
FAILED_MESSAGE = "a guardrail could not check this, so it was not let through"

_EVENTS = {
    Point.BEFORE_CALL: EventType.GUARDRAIL_BEFORE_CALL,
    Point.AFTER_CALL: EventType.GUARDRAIL_AFTER_CALL,
    Point.ON_FINAL: EventType.GUARDRAIL_ON_FINAL,
}


@dataclass(frozen=True)
class Subject:
    """What a guardrail looks at: a call (its tool, arguments and, after it, its output)
    or a final answer (its text, and the sources the run produced)."""

    point: Point
    call_id: str | None = None
    tool: str | None = None
    external: bool = False
    arguments: Any = None
    output: Any = None
    text: str = ""
    sources: frozenset[str] = frozenset()
    #: What `output` is, for a block's message: after a call, its result; the same checks
    #: apply to every untrusted text on its way to a model (an error's message, a
    #: delegated run's input, what a continuation carries over).
    about: str = "the tool's result"

    @functools.cached_property
    def output_text(self) -> str:
        """The output's strings as one text, made once for every guardrail that reads it
        (a redaction's new subject makes its own)."""
        return sensitive.text_of(self.output)


@dataclass(frozen=True)
class Verdict:
    """What one guardrail did. `subject`: what goes on after a redaction. `detail`: what
    its event tells (kinds and marker names, never the matched text)."""

    action: Action
    detail: Mapping[str, Any] = field(default_factory=dict)
    subject: Subject | None = None
    code: str = GUARDRAIL_BLOCKED
    message: str = "a guardrail blocked this"
    retryable: bool = False


class Guardrail(Protocol):
    name: str
    points: frozenset[Point]

    def check(self, subject: Subject) -> Verdict | None: ...


@dataclass(frozen=True)
class Builtin:
    name: str
    points: frozenset[Point]
    run: Callable[[Subject], Verdict | None]

    def check(self, subject: Subject) -> Verdict | None:
        return self.run(subject)


# -- the built-ins --------------------------------------------------------------------------
def _argument_policy(all_tools: bool) -> Callable[[Subject], Verdict | None]:
    def run(subject: Subject) -> Verdict | None:
        if not (subject.external or all_tools):
            return None
        kinds = sensitive.found_in(subject.arguments, sensitive.secrets_in)
        kinds += sensitive.found_in(subject.arguments, sensitive.pii_in)
        if not kinds:
            return None
        message = f"the arguments hold what may not be sent to this tool: {', '.join(kinds)}"
        return Verdict(Action.BLOCKED, {"kinds": kinds}, message=message)

    return run


def _redact_secrets(subject: Subject) -> Verdict | None:
    in_output = sensitive.kinds_in(subject.output_text, sensitive.secrets_in)
    in_arguments = sensitive.found_in(subject.arguments, sensitive.secrets_in)
    if not in_output and not in_arguments:
        return None
    fields = [name for name, kinds in (("output", in_output), ("arguments", in_arguments)) if kinds]
    redacted = sensitive.map_strings(subject.output, sensitive.redact_secrets_text)
    detail = {"fields": fields, "kinds": sorted({*in_output, *in_arguments})}
    return Verdict(Action.REDACTED, detail, replace(subject, output=redacted))


def _injection(block: bool) -> Callable[[Subject], Verdict | None]:
    def run(subject: Subject) -> Verdict | None:
        markers = sensitive.kinds_in(subject.output_text, sensitive.markers_in)
        if not markers:
            return None
        if not block:
            return Verdict(Action.FLAGGED, {"markers": markers})
        message = f"{subject.about} holds injection markers: {', '.join(markers)}"
        return Verdict(Action.BLOCKED, {"markers": markers}, message=message)

    return run


def _citations(subject: Subject) -> Verdict | None:
    unknown = unknown_citations(subject.text, subject.sources)
    if not unknown:
        return None
    message = f"cited sources this run never produced: {', '.join(unknown)}"
    return Verdict(
        Action.BLOCKED,
        {"sources": unknown},
        code=INVALID_CITATION,
        message=message,
        retryable=True,  # the model can cite what it has
    )


def _sensitive_final(block: bool) -> Callable[[Subject], Verdict | None]:
    def run(subject: Subject) -> Verdict | None:
        kinds = sensitive.secrets_in(subject.text) + sensitive.pii_in(subject.text)
        if not kinds:
            return None
        if block:
            message = f"the answer holds what may not be shown: {', '.join(kinds)}"
            return Verdict(Action.BLOCKED, {"kinds": kinds}, message=message)
        text = sensitive.scrub_text(subject.text)
        return Verdict(Action.REDACTED, {"kinds": kinds}, replace(subject, text=text))

    return run


def _always_fail(subject: Subject) -> Verdict | None:
    raise RuntimeError("always_fail: a guardrail that fails, to test failing closed")


_BEFORE, _AFTER, _FINAL = ({p} for p in Point)
REGISTRY: Mapping[str, Guardrail] = {
    g.name: g
    for g in (
        Builtin("argument_policy", frozenset(_BEFORE), _argument_policy(False)),
        Builtin("argument_policy_all_tools", frozenset(_BEFORE), _argument_policy(True)),
        Builtin("redact_secrets", frozenset(_AFTER), _redact_secrets),
        Builtin("flag_injection", frozenset(_AFTER), _injection(False)),
        Builtin("block_injection", frozenset(_AFTER), _injection(True)),
        Builtin("citations", frozenset(_FINAL), _citations),
        Builtin("redact_sensitive", frozenset(_FINAL), _sensitive_final(False)),
        Builtin("block_sensitive", frozenset(_FINAL), _sensitive_final(True)),
        Builtin("always_fail", frozenset(Point), _always_fail),  # at any point
    )
}

DEFAULTS: Mapping[Point, tuple[str, ...]] = {
    Point.BEFORE_CALL: ("argument_policy",),
    Point.AFTER_CALL: ("redact_secrets", "flag_injection"),
    Point.ON_FINAL: ("citations", "redact_sensitive"),
}


def unknown_at(point: Point, names: Sequence[str]) -> list[str]:
    """The names that are no guardrail usable at `point` (a config error)."""
    return [n for n in names if n not in REGISTRY or point not in REGISTRY[n].points]


#: What runs at a point whatever the agent lists: the citation rule (SPEC §2), and the
#: redaction of secrets in results (a list meant to add a check never drops it).
_ALWAYS = {Point.ON_FINAL: "citations", Point.AFTER_CALL: "redact_secrets"}


@dataclass(frozen=True)
class Policy:
    """An agent's guardrails: the names run at each point, in order, and what a block at
    each point does. `on_final` always starts with `citations` (SPEC §2 requires it), and
    `after_call` with `redact_secrets`."""

    before_call: tuple[str, ...] = DEFAULTS[Point.BEFORE_CALL]
    after_call: tuple[str, ...] = DEFAULTS[Point.AFTER_CALL]
    on_final: tuple[str, ...] = DEFAULTS[Point.ON_FINAL]
    on_block: Mapping[Point, OnBlock] = field(default_factory=dict)

    def names(self, point: Point) -> tuple[str, ...]:
        names = tuple(getattr(self, point.value))
        required = _ALWAYS.get(point)
        if required is not None and required not in names:
            return (required, *names)
        return names

    def blocks_with(self, point: Point) -> OnBlock:
        return self.on_block.get(point, OnBlock.OBSERVE)


@dataclass(frozen=True)
class Checked:
    """What a point's guardrails made of a subject: what goes on (redactions applied),
    what each guardrail that acted did, and the block that stopped it, if any."""

    subject: Subject
    acted: tuple[tuple[str, Verdict], ...] = ()
    blocked: Verdict | None = None

    def events(self, step: int, on: str | None = None) -> list[Event]:
        """One `guardrail.<point>` event per guardrail that acted; `on`: what it checked
        when that is not the call's output (`error`, `input`, `carry_over`)."""
        kind = _EVENTS[self.subject.point]
        about: dict[str, Any] = {"step": step, "call_id": self.subject.call_id}
        if on is not None:
            about["on"] = on
        return [
            (kind, {**about, "guardrail": name, "action": v.action.value, **_code(v), **v.detail})
            for name, v in self.acted
        ]


def _code(verdict: Verdict) -> dict[str, Any]:
    return {"code": verdict.code} if verdict.action is Action.BLOCKED else {}


def check(policy: Policy, subject: Subject) -> Checked:
    """Runs the point's guardrails in order; the first block stops the rest."""
    acted: list[tuple[str, Verdict]] = []
    for name in policy.names(subject.point):
        try:
            verdict = REGISTRY[name].check(subject)
        except Exception:  # fail closed: a guardrail that cannot tell blocks
            verdict = Verdict(Action.BLOCKED, code=GUARDRAIL_FAILED, message=FAILED_MESSAGE)
        if verdict is None:
            continue
        acted.append((name, verdict))
        if verdict.action is Action.BLOCKED:
            return Checked(subject, tuple(acted), verdict)
        if verdict.subject is not None:
            subject = verdict.subject
    return Checked(subject, tuple(acted))
