"""The gates a call passes at every moment (proposal, each execution attempt, the claim of
a commit): the caller's scopes cover the tool's permissions, the operator has not turned
the tool off in the config, its server (an MCP tool's) offers it, and no admin of the
tenant has switched it off.

One rule, asked at each moment, so that a switch thrown during an incident stops the next
request whatever state its call is in."""

from __future__ import annotations

from app.domain.errors import ErrorValue, ObservationCode
from app.domain.tools.specs import Principal, ToolSpec

PERMISSION_DENIED = "the caller may not use this tool"
SWITCHED_OFF = "the tool is switched off for now"
TURNED_OFF = "the tool is turned off by the operator"
NOT_OFFERED = "the tool's server does not offer it now"


def gate_refusal(
    spec: ToolSpec, *, principal: Principal, disabled: frozenset[str] | bool
) -> ErrorValue | None:
    """Why a call of `spec` made for `principal` may not go ahead now, or None.
    `disabled`: the tenant's switched-off tools, or whether this one is."""
    if not principal.covers(spec.permissions):
        return ErrorValue.rejection(ObservationCode.PERMISSION_DENIED, PERMISSION_DENIED)
    if not spec.enabled:
        return ErrorValue.rejection(ObservationCode.TOOL_DISABLED, TURNED_OFF)
    if not spec.listed:
        return ErrorValue.rejection(ObservationCode.TOOL_UNAVAILABLE, NOT_OFFERED)
    off = disabled if isinstance(disabled, bool) else spec.name in disabled
    if off:
        return ErrorValue.rejection(ObservationCode.TOOL_DISABLED, SWITCHED_OFF)
    return None
