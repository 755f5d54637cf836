"""The gates a tool call passes after validation and authorization (SPEC §2): the kill
switch and the rate limit.

Kill switch (SPEC §3): an admin disables or enables a tool for their tenant. A tool
disabled before a run starts is not exposed to it; one disabled during a run has its
proposals rejected `tool_disabled`.

Rate limit: a tool's `rate_limit_per_minute` counts its accepted calls per tenant and
minute in the database, so every replica shares it; a proposal past it is rejected
`rate_limited` (retryable: the model may try again later).

Each process keeps the disabled sets it has read, per tenant; a change is announced with
NOTIFY and drops every process's copy, and a copy is never older than `MAX_AGE_S` in case
a notification was missed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.tools import switches
from app.domain.audit.chain import Action
from app.domain.errors import DomainError, ErrorCode, ErrorValue, ObservationCode
from app.domain.lifecycle.records import Run
from app.domain.tools.gates import gate_refusal
from app.domain.tools.proposals import CheckedCall
from app.domain.tools.specs import Principal, ToolSpec
from app.engine.audit import trail

if TYPE_CHECKING:
    from app.engine.runner import Runtime

#: The longest a process trusts its copy of a tenant's disabled tools without NOTIFY.
MAX_AGE_S = 5.0


class DisabledTools:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._known: dict[str, tuple[frozenset[str], float]] = {}

    async def of(self, tenant_id: str) -> frozenset[str]:
        now = asyncio.get_running_loop().time()
        known = self._known.get(tenant_id)
        if known is not None and now - known[1] < MAX_AGE_S:
            return known[0]
        async with self.rt.reads() as session:
            tools = await switches.disabled(session, tenant_id)
        self._known[tenant_id] = (tools, now)
        return tools

    def forget(self, tenant_id: str) -> None:
        """Drops a tenant's copy; an empty tenant drops every copy."""
        if tenant_id:
            self._known.pop(tenant_id, None)
        else:
            self._known.clear()


async def switch_tool(rt: Runtime, *, principal: Principal, name: str, off: bool) -> None:
    if name not in rt.tools:
        raise DomainError(ErrorCode.NOT_FOUND, "no such tool")
    now = rt.clock.now()
    async with rt.sessions.begin() as session:
        moved = await switches.set_disabled(
            session,
            tenant_id=principal.tenant_id,
            tool=name,
            by=principal.subject,
            now=now,
            off=off,
        )
        action = Action.DISABLE_TOOL if off else Action.ENABLE_TOOL
        if moved:  # a switch already where it was asked to be is no action
            await trail.record(session, principal.tenant_id, principal.subject, action, name, now)
    rt.disabled_tools.forget(principal.tenant_id)


RATE_LIMITED = "the tool's rate limit for this minute is reached; try again later"


async def apply_rate_limits(
    rt: Runtime, *, tenant_id: str, checked: Sequence[CheckedCall], room: int
) -> list[CheckedCall]:
    """The accepted calls of rate-limited tools each take a slot of the current minute
    (one statement each); a call that finds none is rejected `rate_limited`. Only calls
    within `room` (what the tool-call budget still allows, in proposal order) take one:
    the others are cancelled for the budget and never run."""
    result = []
    for call in checked:
        limit = rt.tools[call.tool].spec.rate_limit_per_minute if call.tool in rt.tools else None
        if call.rejection is not None or room <= 0:
            result.append(call)
            continue
        room -= 1
        if limit is not None:
            async with rt.reads() as session:
                taken = await switches.take_call(
                    session, tenant_id=tenant_id, tool=call.tool, limit=limit, db_time=rt.db_time
                )
            if not taken:
                room += 1  # a rejected call leaves its room to the next one
                call = replace(
                    call, rejection=ErrorValue.rejection(ObservationCode.RATE_LIMITED, RATE_LIMITED)
                )
        result.append(call)
    return result


async def refusal_in(
    session: AsyncSession, spec: ToolSpec, *, principal: Principal
) -> ErrorValue | None:
    """The gates, with the tenant's switch read in `session` (only when the others pass)."""
    refused = gate_refusal(spec, principal=principal, disabled=False)
    if refused is not None:
        return refused
    off = await switches.is_disabled(session, tenant_id=principal.tenant_id, tool=spec.name)
    return gate_refusal(spec, principal=principal, disabled=off)


async def refusal_now(rt: Runtime, run: Run, spec: ToolSpec, *, fresh: bool) -> ErrorValue | None:
    """The gates again, right before an attempt. A side effect reads the tenant's switch
    in the database (this process's copy may lag a switch thrown on another one by up to
    a NOTIFY); a read trusts the copy, which is never older than `MAX_AGE_S`."""
    if fresh:
        async with rt.reads() as session:
            return await refusal_in(session, spec, principal=run.creator)
    disabled = await rt.disabled_tools.of(run.tenant_id)
    return gate_refusal(spec, principal=run.creator, disabled=disabled)
