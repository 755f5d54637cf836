"""What a lease holder knows of its run: read from the database once, when it claims the
run, then kept in step with every transaction it commits. Nothing it wrote is read back,
and no step reads the history before it, so a step costs the same at step 200 as at 2."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from app.config.files import ModelRouteConfig
from app.db.approvals import previews as previews_repo
from app.db.lifecycle import runs
from app.db.lifecycle import turns as turns_repo
from app.domain.lifecycle.records import Call, Preview, Run, Turn
from app.domain.lifecycle.run_changes import ScriptItem
from app.domain.lifecycle.status import SETTLED_CALL_STATUSES, CallStatus
from app.domain.lifecycle.steps import CallState, NextStep, decide
from app.domain.limits.budget import COST_UNIT, Ceiling, Spend, Usage, output_ceiling
from app.domain.limits.input_bound import Billed
from app.domain.model.context import TurnRecord, opening_messages, record_of
from app.domain.model.paging import READ_RESULT, Paging
from app.domain.model.window import ContextWindow, View, schema_of
from app.domain.ports import Tool
from app.engine.steps.read_result import ReadResult
from app.engine.tools.pinned_config import RunConfig

if TYPE_CHECKING:
    from app.engine.steps.commit import Held

_OPEN = frozenset(CallStatus) - SETTLED_CALL_STATUSES


def _turn_record(turn: Turn, calls: Sequence[Call]) -> TurnRecord:
    return TurnRecord(
        turn.step,
        turn.kind,
        turn.text,
        None if turn.rejection is None else turn.rejection.as_dict(),
        tuple(record_of(c) for c in calls),
        tuple(turn.extra_rejections),
    )


def call_state(call: Call) -> CallState:
    unnumbered = call.status is CallStatus.SUCCEEDED and call.source_id is None
    error = call.error
    return CallState(
        call.status,
        None if error is None else error.code,
        call.ends_run,
        None if error is None else error.message,
        unnumbered,
    )


@dataclass
class RunState:
    run: Run
    #: The run's pinned config version: its instructions and tools.
    config: RunConfig
    #: A scripted run's script (SPEC: the scripted model reads its items from it).
    script: Sequence[ScriptItem] | None = None
    #: The latest turn and its calls; earlier turns live on only as model messages.
    turn: Turn | None = None
    calls: list[Call] = field(default_factory=list)
    #: Every source the run produced, by id: what a final answer may cite.
    sources: dict[str, Call] = field(default_factory=dict)
    #: The previews of the latest turn's calls that await or passed approval, by id.
    previews: dict[str, Preview] = field(default_factory=dict)
    #: This segment's span context, owed to the run row by the segment's first write.
    trace_context_owed: str | None = None
    #: A model call made but not recorded yet (a router's classifier), by route: the
    #: next write charges it to the run, whichever write that is.
    owed: tuple[str, Spend] | None = None
    #: A turn's write held back for its read-only calls' outcomes (`commit.hold`): the
    #: state above already includes it.
    held: Held | None = None
    #: What the run's latest model request was billed: the next one's input bound.
    billed: Billed | None = None
    #: The model's view: every settled turn but the latest, in both its forms.
    _window: ContextWindow = field(default_factory=lambda: ContextWindow([]))
    #: The last step whose messages are in `_window`.
    _through: int = 0

    @classmethod
    def fresh(
        cls,
        run: Run,
        config: RunConfig,
        script: Sequence[ScriptItem] | None = None,
    ) -> RunState:
        opening = opening_messages(
            instructions=config.instructions, user_input=run.input, carry_over=run.carry_over
        )
        window = ContextWindow(opening, Paging(config.context_tokens))
        return cls(run, config, script, _window=window)

    @classmethod
    async def load(
        cls, session: AsyncSession, run: Run, config: RunConfig, *, scripted: bool
    ) -> RunState:
        """The whole history (and script), read once by the process that claimed the run."""
        script = await runs.script_of(session, run.tenant_id, run.id) if scripted else None
        state = cls.fresh(run, config, script)
        if run.usage.steps == 0:
            return state
        turns = await turns_repo.turns(session, tenant_id=run.tenant_id, run_id=run.id)
        by_step: dict[int, list[Call]] = {}
        if turns:
            calls = await turns_repo.calls(session, tenant_id=run.tenant_id, run_id=run.id)
            for call in calls:
                by_step.setdefault(call.step, []).append(call)
                if call.source_id:
                    state.sources[call.source_id] = call
        for turn in turns[:-1]:
            state._window.append(_turn_record(turn, by_step.get(turn.step, [])))
            state._through = turn.step
        if turns:
            state.turn = turns[-1]
            state.calls = by_step.get(turns[-1].step, [])
        # An open call with a preview: awaiting or past its approval, or being committed.
        waiting = [c.preview_id for c in state.calls if c.preview_id and c.status in _OPEN]
        if waiting:
            found = await previews_repo.get_many(session, tenant_id=run.tenant_id, ids=waiting)
            state.previews = {p.id: p for p in found}
        return state

    @property
    def instructions(self) -> str:
        return self.config.instructions

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The run's tools, as its version declared them (a tool gone is absent), and the
        built-in `read_result`, which reads this run's own results."""
        reader = ReadResult(lambda: self.sources, self._window.paging)
        return {**self.config.tools, READ_RESULT: reader}

    def usage(self) -> Usage:
        """The run's usage, with what is owed: what every budget check must see."""
        return self.run.usage if self.owed is None else self.run.usage.plus(self.owed[1])

    def ceiling(self, input_tokens: int, route: ModelRouteConfig) -> Ceiling:
        """The output cap a model call with at most `input_tokens` of input may be sent with
        on `route`, within what the run has left (what is owed counted)."""
        return output_ceiling(
            self.run.own_limits,
            self.usage(),
            input_tokens=input_tokens,
            input_per_mtok=route.input_cost_per_mtok,
            output_per_mtok=route.output_cost_per_mtok,
            margin=0.0 if self.owed is None else COST_UNIT,
        )

    def take(self, other: RunState) -> None:
        """Becomes `other` (a fresh read of the same run), for whoever holds this one."""
        vars(self).update(vars(other))

    @property
    def context_tokens(self) -> int | None:
        return self._window.paging.context_tokens

    def view(self, tools: Sequence[Tool]) -> View:
        """The model's view within the run's context budget, with `tools` exposed (or one
        that does not fit): called when the latest turn has settled."""
        if self.turn is not None and self._through < self.turn.step:
            self._window.append(_turn_record(self.turn, self.calls))
            self._through = self.turn.step
        schemas = [schema_of(t.spec) for t in tools]
        if self.context_tokens is not None:
            # Counted whether exposed or not: exposing it never breaks the budget.
            schemas.append(schema_of(ReadResult.spec))
        return self._window.view(schemas)

    def next_step(self, *, now: datetime, cancel_seen: bool) -> NextStep:
        run = self.run
        last = self.calls if self.turn is not None and self.turn.step == run.usage.steps else []
        return decide(
            limits=run.own_limits,
            usage=run.usage,
            now=now,
            deadline=run.deadline_at,
            cancel_requested=run.cancel_requested_at is not None or cancel_seen,
            last_step=run.usage.steps,
            last_calls=[call_state(c) for c in last],
        )

    def durable(self) -> Run:
        """The run as the database holds it: without a held turn's write."""
        return self.run if self.held is None else self.held.durable

    def open_calls(self) -> list[Call]:
        return [c for c in self.calls if c.status in _OPEN]

    def preview_of(self, call: Call) -> Preview | None:
        return self.previews.get(call.preview_id) if call.preview_id else None

    # -- keeping in step with what was committed ----------------------------------------
    def committed(
        self,
        run: Run,
        *,
        turn: Turn | None = None,
        new_calls: Sequence[Call] = (),
        updated_calls: Sequence[Call] = (),
    ) -> None:
        self.run = run
        if turn is not None:
            self.turn = turn
            self.calls = list(new_calls)
            # A turn written with its calls' outcomes (a held turn's) brings sources too.
            self.sources.update((c.source_id, c) for c in new_calls if c.source_id)
        if updated_calls:
            changed: Mapping[str, Call] = {
                c.id: replace(c, version=c.version + 1) for c in updated_calls
            }
            self.calls = [changed.get(c.id, c) for c in self.calls]
            for call in changed.values():
                if call.source_id:
                    self.sources[call.source_id] = call
