"""The seams where the core meets the outside: clock, model providers, tool executors, the
store of MCP declarations."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from app.domain.approvals.previews import PreviewBody, PreviewRef
from app.domain.model.replies import ModelReply, ModelRequest
from app.domain.tools.mcp_declarations import Listed, Pin
from app.domain.tools.specs import Principal, ToolError, ToolResult, ToolSpec


class Clock(Protocol):
    def now(self) -> datetime:
        """Aware UTC time."""
        ...

    def monotonic(self) -> float:
        """Seconds that never go back, for intervals (how old a list read is)."""
        ...


class ModelProvider(Protocol):
    async def complete(self, request: ModelRequest) -> ModelReply:
        """One model call; raises ModelError on failure."""
        ...


@dataclass(frozen=True)
class ToolContext:
    tenant_id: str
    run_id: str
    step: int
    call_id: str
    operation_id: str
    principal: Principal
    #: A read of a snapshot run: what the tool reads as of (SPEC §3.1); None: the latest.
    #: Side effects, their previews and status lookups always act on the latest.
    as_of: datetime | None = None
    #: With `as_of`, the database snapshot it stands for, for tools that read this
    #: service's own database (the built-in radar); opaque to everyone else.
    snapshot: str | None = None
    #: This attempt's time, min(the tool's timeout, the run's time left).
    timeout_s: float | None = None
    #: At the commit of an approved call: the preview approved, and who approved it.
    preview: PreviewRef | None = None
    approved_by: Principal | None = None
    #: A scripted run's call may carry a script for the child run it delegates to (SPEC
    #: §5: only an agent tool reads it); None otherwise.
    child_script: tuple[Mapping[str, Any], ...] | None = None


@dataclass(frozen=True)
class OperationStatus:
    """What a backend says of an operation: `unknown` (never received: safe to send),
    `in_progress`, `succeeded` (with its result) or `failed` (with its error)."""

    state: str
    result: ToolResult | None = None
    error: ToolError | None = None


class Tool(Protocol):
    """A registered tool: its spec, an optional semantic check, and its execution."""

    spec: ToolSpec

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        """A semantic problem with schema-valid arguments, as safe text, or None."""
        ...

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Runs the tool; raises ToolError for the tool's own failures."""
        ...


@runtime_checkable
class StatusLookup(Protocol):
    """A tool whose backend answers what became of an operation (SPEC §4.1 `status_url`).
    Asked before a side effect whose outcome is unknown is ever sent again."""

    async def status(self, context: ToolContext, timeout_s: float) -> OperationStatus:
        """Raises ToolError when the backend cannot tell now."""
        ...


@runtime_checkable
class Previewer(Protocol):
    """A tool that says what a call would do before it is allowed to (SPEC §3.3): every
    tool that requires approval."""

    async def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> PreviewBody:
        """Raises ToolError when it cannot tell (e.g. the resource does not exist)."""
        ...


class DeclarationPins(Protocol):
    """Where MCP servers' declarations are pinned (SPEC §4 "MCP declarations are pinned"),
    shared by every replica."""

    async def settle(
        self, server: str, listed: Mapping[str, Listed], *, stale: bool = False
    ) -> dict[str, Pin]:
        """The pins of `listed` (the server's name for a tool → its declaration as
        listed): first sights pinned or held, changes held, what the server went back to
        cleared. `stale`: the listing may be older than a pin changed elsewhere, so only
        first sights are written (an insert never overwrites a row) and the other pins are
        read as they stand. Raises when they cannot be read or written now."""
        ...

    def watch(self, server: str, on_change: Callable[[], None]) -> None:
        """`on_change()` is called when a pin of `server` may have changed: its pins are
        to be read again, and its list."""
        ...
