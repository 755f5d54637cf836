"""A run that continues a finished one (`continue_from`, SPEC §3.1): the finished run is
read, and what the new run carries over from it into its model input is built once, at
creation (`domain.model.carry_over`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.db.lifecycle import runs, turns
from app.domain.errors import DomainError, ErrorCode
from app.domain.lifecycle.status import RunStatus
from app.domain.model.carry_over import build as carry_over_of
from app.domain.model.paging import READ_RESULT
from app.domain.tools.specs import Principal
from app.engine.runner import Runtime


async def continued(
    rt: Runtime, principal: Principal, run_id: str, given_input: str | None
) -> tuple[str, dict[str, Any]]:
    """The new run's input (the continued run's when the request gives none), and what it
    carries over from the finished run it continues: two reads, before anything is
    written. `not_found` for an unknown run or another tenant's, `invalid_state` for one
    not finished."""
    async with rt.sessions() as session:
        earlier = await runs.get(session, principal.tenant_id, run_id)
        if earlier is None:
            raise DomainError(ErrorCode.NOT_FOUND, "no such run to continue")
        if earlier.status is not RunStatus.FINISHED:
            raise DomainError(ErrorCode.INVALID_STATE, "only a finished run can be continued")
        calls = await turns.calls(session, tenant_id=earlier.tenant_id, run_id=earlier.id)
    new_input = given_input or earlier.input
    carry_over = carry_over_of(
        run=earlier, calls=calls, new_input=new_input, side_effects=_side_effects(rt)
    )
    return new_input, carry_over


def _side_effects(rt: Runtime) -> Callable[[str], bool]:
    # A tool gone from the config counts as one: it may have had effects. `read_result`
    # is the service's own reader of a run's results: never one.
    return lambda name: (
        name != READ_RESULT and (name not in rt.tools or not rt.tools[name].spec.read_only)
    )
