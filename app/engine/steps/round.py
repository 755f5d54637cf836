"""A round of a turn's calls: their outcomes, counters and events held until committed,
and the one place a call's status moves during execution."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from app.domain.errors import ErrorValue, ObservationCode
from app.domain.guardrails.sensitive import redact_secrets_text
from app.domain.ids import operation_id
from app.domain.lifecycle.events import Event, EventType, preview_event
from app.domain.lifecycle.moves import CALL_PARK, CALL_START, PREVIEW_SUPERSEDE
from app.domain.lifecycle.records import Call, Preview, add_cost
from app.domain.lifecycle.run_patch import RunPatch
from app.domain.lifecycle.settle import UNKNOWN, Outcome, refusal, settle
from app.domain.lifecycle.status import (
    CallStatus,
    PreviewStatus,
    RunStatus,
    check_preview_transition,
)
from app.domain.lifecycle.steps import Next
from app.domain.model.citations import number_sources
from app.domain.tools.retry import ends_run
from app.domain.tools.specs import ToolError, ToolResult
from app.engine.process.lease import Lease
from app.engine.steps import guarding
from app.engine.steps.commit import Change, commit
from app.engine.steps.state import RunState
from app.engine.steps.tool_attempt import OUTCOME_UNKNOWN


@dataclass
class Round:
    """The round's outcomes not yet committed: calls, counters and events."""

    lease: Lease
    state: RunState
    calls: dict[str, Call] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    tool_calls: int = 0
    cost_usd: float = 0.0
    new_previews: list[Preview] = field(default_factory=list)
    previews: dict[str, Preview] = field(default_factory=dict)

    def current(self, call: Call) -> Call:
        return self.calls.get(call.id, call)

    def move(
        self,
        call: Call,
        target: CallStatus,
        event: EventType,
        data: dict[str, Any],
        **values: Any,
    ) -> Call:
        """`target` was checked by the move that chose it (`settle`, `start`, `park`)."""
        moved = replace(call, status=target, updated_at=self.lease.rt.clock.now(), **values)
        self.calls[call.id] = moved
        about = {"step": call.step, "call_id": call.call_id, "tool": call.tool}
        self.events.append((event, {**about, **data}))
        return moved

    def start(self, call: Call, cost_usd: float) -> Call:
        attempt = call.attempts + 1
        if attempt == 1:
            # usage.tool_calls counts a call once, however many attempts it takes; its
            # cost is charged when it is first sent, like the count.
            self.tool_calls += 1
            self.cost_usd += cost_usd
        CALL_START.check(call.status, CallStatus.EXECUTING)
        return self.move(
            call,
            CallStatus.EXECUTING,
            EventType.CALL_STARTED,
            {"attempt": attempt},
            attempts=attempt,
        )

    def fail(self, call: Call, error: ToolError, *, ends: bool = True) -> bool:
        """The call fails with `error`; whether that ends the run (`ends`, or a block of
        its message whose guardrails end the run)."""
        if error is OUTCOME_UNKNOWN:  # ours, not a backend's code of that name
            self.unknown(call)
            return True
        # A backend's message is its own text, as untrusted as its output: the after_call
        # guardrails check it as they check an output (secrets redacted, injection
        # markers flagged or blocked) before it is stored, shown or sent to the model.
        tool = self.state.tools.get(call.tool)
        checked = guarding.after_text(
            guarding.policy_of(self.state),
            error.message,
            on="error",
            about="the tool's error message",
            step=call.step,
            call_id=call.call_id,
            tool=call.tool,
            external=tool is not None and tool.spec.external,
        )
        self.events.extend(checked.events)
        if checked.blocked is not None:
            value, ends = checked.blocked, ends or checked.ends
        else:
            value = ErrorValue(error.code, checked.value, error.retryable)
        self._settle(
            call, Outcome.FAILED, {**value.as_dict(), "ends_run": ends}, error=value, ends=ends
        )
        return ends

    async def failed(self, call: Call, error: ToolError, *, flush: bool = True) -> Next:
        """The call fails with `error` (committed at once when `flush`: a side effect's
        is); the run goes on unless the error ends it."""
        ends = self.fail(call, error, ends=ends_run(self.state.tools[call.tool].spec, error))
        if flush:
            await self.flush()
        return Next.unless(ends)

    def unknown(self, call: Call) -> None:
        """It may have taken effect, and nobody can tell: it ends the run."""
        self._settle(call, Outcome.UNKNOWN, {**UNKNOWN.as_dict(), "ends_run": True})

    async def succeed(self, call: Call, result: ToolResult) -> Next:
        """`result.withheld`: it took effect, but its output could not be kept; the event
        says why, and the model hears that it succeeded. The after_call guardrails see
        the result first: what they redact is never stored, and a result they block goes
        no further (a read fails with the block; a side effect took effect, so it
        succeeds with its output withheld and the block as its error)."""
        spec = self.state.tools[call.tool].spec
        guarded = await guarding.after_call(
            guarding.policy_of(self.state), call, spec.external, result
        )
        self.events.extend(guarded.events)
        blocked, ends = guarded.blocked, guarded.ends
        if blocked is not None and spec.read_only:
            data = {**blocked.as_dict(), "ends_run": ends}
            self._settle(call, Outcome.FAILED, data, error=blocked, ends=ends)
            return Next.unless(ends)
        result = guarded.result
        data: dict[str, Any] = {"attempts": call.attempts}
        outcome = Outcome.SUCCEEDED
        if blocked is not None:
            result = replace(result, output=None, withheld=blocked.code)
            data.update(ends_run=ends)
        if result.withheld is not None:
            data.update(output_withheld=True, code=result.withheld)
            outcome = Outcome.WITHHELD
        self._settle(
            call,
            outcome,
            data,
            error=blocked,
            ends=ends,
            output=result.output,
            output_withheld=result.withheld is not None,
            observed_at=_scrubbed(result.observed_at),
            source_version=_scrubbed(result.source_version),
        )
        return Next.unless(ends)

    def _settle(
        self,
        call: Call,
        outcome: Outcome,
        data: dict[str, Any],
        *,
        error: ErrorValue | None = None,
        ends: bool = False,
        **values: Any,
    ) -> None:
        """The call settled by `outcome` (`domain.lifecycle.settle`), its open preview with it."""
        preview = self.preview_of(call)
        settled = settle(call, outcome, preview=preview, error=error, ends_run=ends)
        if preview is not None and settled.preview is not None:
            self._decide(preview, settled.preview, preview_event(settled.preview))
        self.move(
            call,
            settled.status,
            settled.event,
            data,
            error=settled.error,
            ends_run=settled.ends_run,
            **values,
        )

    # -- approvals -------------------------------------------------------------------
    def _decide(
        self, preview: Preview, target: PreviewStatus, event: EventType, **data: Any
    ) -> None:
        check_preview_transition(preview.status, target)
        values: dict[str, Any] = {"status": target}
        if target is PreviewStatus.COMMITTED:
            values["committed_at"] = self.lease.rt.clock.now()
        if target is PreviewStatus.SUPERSEDED:
            values["superseded_by"] = data.get("new_preview_id")
        self.previews[preview.id] = replace(preview, **values)
        self.events.append((event, {"preview_id": preview.id, "call_id": preview.call_id, **data}))

    def preview_of(self, call: Call) -> Preview | None:
        """The call's preview as the round has it (it may be newer than the state's)."""
        if call.preview_id is None:
            return None
        made = next((p for p in self.new_previews if p.id == call.preview_id), None)
        return self.previews.get(call.preview_id) or made or self.state.preview_of(call)

    def park(self, call: Call, preview: Preview) -> None:
        """The call awaits a decision on `preview`: nothing of it is executed."""
        self.new_previews.append(preview)
        data = {
            "preview_id": preview.id,
            "content_hash": preview.content_hash,
            "expires_at": preview.expires_at.isoformat(),
        }
        self.events.append((EventType.PREVIEW_CREATED, {"call_id": call.call_id, **data}))
        # Its execution is bound to this preview: a call re-committed under a new preview
        # (a version conflict) is a new operation, so one id never has two bodies.
        execution = operation_id(call.run_id, call.step, call.call_id, preview.id)
        CALL_PARK.check(call.status, CallStatus.AWAITING_APPROVAL)
        self.move(
            call,
            CallStatus.AWAITING_APPROVAL,
            EventType.CALL_AWAITING_APPROVAL,
            {"preview_id": preview.id, "operation_id": execution},
            preview_id=preview.id,
            operation_id=execution,
        )

    def supersede_only(self, old: Preview) -> None:
        PREVIEW_SUPERSEDE.check(old.status, PreviewStatus.SUPERSEDED)
        self._decide(
            old, PreviewStatus.SUPERSEDED, EventType.PREVIEW_SUPERSEDED, new_preview_id=None
        )

    def supersede(self, call: Call, old: Preview, new: Preview) -> None:
        """The resource changed since `old` was approved (the commit changed nothing): a
        new preview awaits a new decision."""
        PREVIEW_SUPERSEDE.check(old.status, PreviewStatus.SUPERSEDED)
        self._decide(
            old, PreviewStatus.SUPERSEDED, EventType.PREVIEW_SUPERSEDED, new_preview_id=new.id
        )
        self.park(call, new)

    def expire(self, call: Call) -> None:
        """Its preview expired undecided (or uncommitted): the call ends `rejected` with
        `approval_expired`, fed back to the model."""
        error = ErrorValue(ObservationCode.APPROVAL_EXPIRED, "the approval expired before a commit")
        self._settle(call, Outcome.EXPIRED, error.as_dict(), error=error)

    async def wait_for_approval(self) -> None:
        """Commits what the round holds and parks the run: no lease, no task, no memory
        but its rows, until a decision or the sweep makes it runnable again."""
        await self.flush(RunPatch.released(status=RunStatus.AWAITING_APPROVAL))

    async def never_sent(self, call: Call) -> None:
        """A side effect recorded as started whose request provably never left: it ends
        `cancelled`, committed at once."""
        error = ErrorValue(ObservationCode.CANCELLED, "the run stopped before the call was sent")
        self._settle(call, Outcome.CANCELLED, {"code": "cancelled"}, error=error)
        await self.flush()

    def affordable(self, cost_usd: float) -> bool:
        """Whether the run's cost budget can still pay for one more call of this cost
        (counting what the round has started but not yet recorded)."""
        run = self.state.run
        spent = add_cost(run.usage.cost_usd, self.cost_usd + cost_usd)
        return spent <= run.own_limits.max_cost_usd

    def has_call_room(self) -> bool:
        """Whether the run's tool-call budget still has room for one more call started now
        (counting the round's started calls): a child reserving calls while this turn was
        proposed shrinks it, and the turn's own fit was judged before."""
        run = self.state.run
        return run.usage.tool_calls + self.tool_calls + 1 <= run.own_limits.max_tool_calls

    def refuse(self, call: Call, message: str) -> None:
        """A call refused before any attempt: neither counted nor charged; the run then
        ends `budget`."""
        self._settle(call, Outcome.REFUSED, {"code": "budget"}, error=refusal(message))

    def change(self) -> Change:
        usage = self.state.run.usage
        counted: dict[str, Any] = {}
        if self.tool_calls:
            counted["tool_calls"] = usage.tool_calls + self.tool_calls
        if self.cost_usd:
            counted["cost_usd"] = add_cost(usage.cost_usd, self.cost_usd)
        return Change(
            run=RunPatch(**counted),
            events=list(self.events),
            updated_calls=list(self.calls.values()),
            new_previews=list(self.new_previews),
            updated_previews=list(self.previews.values()),
        )

    async def flush(self, patch: RunPatch | None = None) -> None:
        """Commits what the round holds (with `patch`, more of the run's columns)."""
        if not self.calls and not self.events and patch is None:
            return
        change = self.change()
        if patch is not None:
            change.run = change.run.then(patch)
        await commit(self.lease, self.state, change)
        self.calls.clear()
        self.events.clear()
        self.new_previews.clear()
        self.previews.clear()
        self.tool_calls = 0
        self.cost_usd = 0.0

    async def close(self, step: int) -> None:
        """Source ids go to successes in proposal order, whatever order they finished in;
        then everything the round still holds is committed at once. A success whose
        `call.succeeded` is still to be written carries its source id there; one already
        written (a side effect) gets it in `sources.assigned`."""
        calls = [self.current(c) for c in self.state.calls]
        todo = [c for c in calls if c.status is CallStatus.SUCCEEDED and c.source_id is None]
        if not todo:
            await self.flush()
            return
        first = self.state.run.next_source
        pending = {
            data["call_id"]: data for kind, data in self.events if kind == EventType.CALL_SUCCEEDED
        }
        assigned: dict[str, str] = {}
        for call, sid in zip(todo, number_sources(first, len(todo)), strict=True):
            self.calls[call.id] = replace(call, source_id=sid)
            if call.call_id in pending:
                pending[call.call_id]["source_id"] = sid
            else:
                assigned[call.call_id] = sid
        if assigned:
            self.events.append((EventType.SOURCES_ASSIGNED, {"step": step, "sources": assigned}))
        await self.flush(RunPatch(next_source=first + len(todo)))


def _scrubbed(text: str | None) -> str | None:
    """A backend's version or time, which it may fill with anything: never a secret."""
    return None if text is None else redact_secrets_text(text)
