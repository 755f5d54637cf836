"""The CallModel step: ask the model (retrying within the step), then record the turn
and its proposals before anything is executed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import runs_repo, turns_repo
from app.db.runs_repo import RunRecord
from app.domain.budget import model_cost, seconds_left, tool_calls_that_fit
from app.domain.citations import unknown_citations
from app.domain.context import build_messages
from app.domain.errors import ObservationCode
from app.domain.ids import new_id, operation_id
from app.domain.model import FinalAnswer, ModelError, ModelReply, ModelRequest, ToolCallsProposal
from app.domain.proposals import CheckedCall, check_calls
from app.domain.retry import backoff_s
from app.domain.status import CallStatus, TerminationReason
from app.domain.steps import Finish, finish
from app.domain.tools import schema_hash, sha256_tag
from app.engine import history
from app.engine.finish import finish_run
from app.engine.lease import Lease

log = logging.getLogger(__name__)


async def call_model(lease: Lease, run: RunRecord, step: int) -> Finish | None:
    """Returns a Finish when the step ends the run without recording a turn."""
    rt = lease.rt
    route = rt.route(run.route)
    agent = rt.agent(run.agent)
    instructions = agent.instructions if agent else ""
    exposed = [rt.tools[n] for n in run.tools if n in rt.tools]
    async with rt.sessions() as session:
        turns = await history.turn_records(session, run)
    messages = build_messages(instructions=instructions, user_input=run.input, turns=turns)
    while True:
        attempt = run.step_attempts + 1
        left = seconds_left(rt.clock.now(), run.deadline_at)
        request = ModelRequest(
            run_id=run.id,
            step=step,
            attempt=attempt,
            route=run.route,
            instructions=instructions,
            messages=messages,
            tools=[t.spec for t in exposed],
            timeout_s=min(route.timeout_s, left),
            position=run.model_calls,
            script=run.script,
        )
        try:
            reply = await lease.guarded(rt.models[run.route].complete(request), request.timeout_s)
        except TimeoutError:
            if request.timeout_s >= left:
                return finish(TerminationReason.DEADLINE)
            error = ModelError("timeout", "the model did not answer in time", retryable=True)
        except ModelError as exc:
            error = exc
        else:
            await _record_turn(lease, run, step, attempt, reply, instructions, exposed)
            return None
        if not error.consumed:
            return finish(TerminationReason.MODEL_FAILED, error.code, error.message)
        run = await _record_failure(lease, run, step, attempt, error)
        if not error.retryable or attempt >= route.max_attempts:
            return finish(TerminationReason.MODEL_FAILED, error.code, error.message)
        # The scripted model replays a script: waiting between its items tests nothing.
        pause = backoff_s(attempt) if route.provider != "scripted" else 0.0
        if pause >= seconds_left(rt.clock.now(), run.deadline_at):
            return finish(TerminationReason.DEADLINE)
        if pause:
            await lease.guarded(asyncio.sleep(pause), pause + 1)


async def _record_failure(
    lease: Lease, run: RunRecord, step: int, attempt: int, error: ModelError
) -> RunRecord:
    async with lease.rt.sessions.begin() as session:
        return await lease.write(
            session,
            values={"model_calls": run.model_calls + 1, "step_attempts": attempt},
            events=[
                (
                    "turn.failed",
                    {
                        "step": step,
                        "attempt": attempt,
                        "code": error.code,
                        "retryable": error.retryable,
                        "message": error.message,
                    },
                )
            ],
        )


def _call_rows(
    run: RunRecord, step: int, checked: list[CheckedCall], now: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[runs_repo.Event]]:
    """Rows for the calls, rejections of repeated ids (kept on the turn: a call is unique
    by step and id), and their events. Accepted calls past max_tool_calls are cancelled."""
    accepted = [c for c in checked if c.rejection is None]
    fit = tool_calls_that_fit(run.limits_value, run.usage_value, len(accepted))
    rows, extra, events = [], [], []
    position = 0
    for c in checked:
        events.append(
            (
                "call.proposed",
                {"step": step, "call_id": c.call_id, "tool": c.tool, "args_hash": c.args_hash},
            )
        )
        if c.rejection and c.rejection.code == ObservationCode.DUPLICATE_CALL_ID:
            extra.append(
                {
                    "call_id": c.call_id,
                    "tool": c.tool,
                    "arguments": c.arguments,
                    "error": c.rejection.as_dict(),
                }
            )
            events.append(
                ("call.rejected", {"step": step, "call_id": c.call_id, **c.rejection.as_dict()})
            )
            continue
        status, error = CallStatus.PENDING, None
        if c.rejection:
            status, error = CallStatus.REJECTED, c.rejection.as_dict()
            events.append(("call.rejected", {"step": step, "call_id": c.call_id, **error}))
        elif fit <= 0:
            status = CallStatus.CANCELLED
            error = {
                "code": "budget",
                "retryable": False,
                "message": "the run's tool-call budget is exhausted",
            }
            events.append(
                ("call.cancelled", {"step": step, "call_id": c.call_id, "code": "budget"})
            )
        else:
            fit -= 1
        rows.append(
            {
                "tenant_id": run.tenant_id,
                "id": new_id("call"),
                "run_id": run.id,
                "step": step,
                "position": position,
                "call_id": c.call_id,
                "tool": c.tool,
                "status": status,
                "arguments": c.arguments,
                "args_hash": c.args_hash,
                "operation_id": operation_id(run.id, step, c.call_id),
                "error": error,
                "created_at": now,
                "updated_at": now,
            }
        )
        position += 1
    return rows, extra, events


async def _record_turn(
    lease: Lease,
    run: RunRecord,
    step: int,
    attempt: int,
    reply: ModelReply,
    instructions: str,
    exposed: list[Any],
) -> None:
    """One transaction: the run's counters first (conditional on the lease, so a stepper
    that lost it stops here), then the turn and its proposals."""
    usage = reply.usage
    route = lease.rt.route(run.route)
    cost = model_cost(
        usage.input_tokens,
        usage.output_tokens,
        input_per_mtok=route.input_cost_per_mtok,
        output_per_mtok=route.output_cost_per_mtok,
    )
    turn = {
        "tenant_id": run.tenant_id,
        "run_id": run.id,
        "step": step,
        "route": run.route,
        "model": reply.model or run.route,
        "instructions_hash": sha256_tag(instructions),
        "tool_schema_hash": schema_hash(t.spec for t in exposed),
        "attempts": attempt,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": cost,
        "created_at": lease.rt.clock.now(),
    }
    counters = {
        "model_calls": run.model_calls + 1,
        "step_attempts": 0,
        "steps": run.steps + 1,
        "input_tokens": run.input_tokens + usage.input_tokens,
        "output_tokens": run.output_tokens + usage.output_tokens,
        "cost_usd": runs_repo.run_column("cost_usd") + cost,
    }
    completed = (
        "turn.completed",
        {
            "step": step,
            "attempt": attempt,
            "kind": "final" if isinstance(reply, FinalAnswer) else "tool_calls",
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cost_usd": cost,
        },
    )
    async with lease.rt.sessions.begin() as session:
        if isinstance(reply, ToolCallsProposal):
            await _record_proposals(session, lease, run, reply, turn, counters, completed, exposed)
        else:
            await _record_final(session, lease, run, reply, turn, counters, completed)


async def _record_proposals(
    session: AsyncSession,
    lease: Lease,
    run: RunRecord,
    reply: ToolCallsProposal,
    turn: dict[str, Any],
    counters: dict[str, Any],
    completed: runs_repo.Event,
    exposed: list[Any],
) -> None:
    checked = check_calls(
        reply.calls, exposed={t.spec.name: t for t in exposed}, principal=run.creator
    )
    rows, extra, events = _call_rows(run, turn["step"], checked, turn["created_at"])
    await lease.write(session, values=counters, events=[completed, *events])
    await turns_repo.insert_turn(session, {**turn, "kind": "tool_calls", "extra_rejections": extra})
    await turns_repo.insert_calls(session, rows)


async def _record_final(
    session: AsyncSession,
    lease: Lease,
    run: RunRecord,
    reply: FinalAnswer,
    turn: dict[str, Any],
    counters: dict[str, Any],
    completed: runs_repo.Event,
) -> None:
    """A final answer ends the run unless it cites a source the run never produced; then
    it is rejected (and counted as a step) and the model hears why."""
    sources = await history.sources(session, run)
    unknown = unknown_citations(reply.text, sources)
    rejection = None
    events = [completed]
    if unknown:
        rejection = {
            "code": ObservationCode.INVALID_CITATION,
            "retryable": True,
            "message": f"cited sources this run never produced: {', '.join(unknown)}",
        }
        events.append(("final.rejected", {"step": turn["step"], **rejection}))
    await lease.write(session, values=counters, events=events)
    await turns_repo.insert_turn(
        session, {**turn, "kind": "final", "text": reply.text, "rejection": rejection}
    )
    if rejection is None:
        output = {"text": reply.text, "citations": history.citations(reply.text, sources)}
        await finish_run(session, lease, finish(TerminationReason.FINAL), output=output)
