"""The `agent` tool kind: a call that delegates to another agent as a child run.

The call is a side effect (it spends the parent's budgets), idempotent by its operation
id: the child's id is derived from it, so a call sent again — after a crash, by the next
holder of the parent — finds the child it made and never makes a second one. The child
is created like any child (its grant clamped to what the parent has left and reserved,
`engine.lifecycle.children`), advanced by this process's driver beside its parent, and waited for
inside the call's attempt, under the parent's deadline and lease: the parent keeps its
slot while it waits, and a cancel of the parent stops the wait while the cancel reaches
the child through the tree. The call's output is the child's final output; a child that
ends otherwise is a tool error the parent's model hears."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError

from app.config.tool_configs import AgentToolConfig
from app.db.lifecycle import runs as runs_repo
from app.domain.errors import DomainError
from app.domain.lifecycle.records import Run
from app.domain.lifecycle.status import RunStatus
from app.domain.ports import ToolContext
from app.domain.tools.specs import ToolError, ToolResult, ToolSpec

if TYPE_CHECKING:
    from app.engine.runner import Driver, Runtime

#: How often a waiting parent looks at a child parked or advanced by another process.
LOOK_EVERY_S = 0.5


def child_run_id(tenant_id: str, operation_id: str) -> str:
    """The child of the call with this operation id: one per call, whoever sends it."""
    digest = hashlib.sha256(f"{tenant_id}\x00{operation_id}".encode()).hexdigest()
    return f"run_{digest[:32]}"


def child_input(arguments: Mapping[str, Any]) -> str:
    """The child's input: the `input` argument of the default schema, else the
    arguments as JSON."""
    text = arguments.get("input")
    if set(arguments) == {"input"} and isinstance(text, str):
        return text
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def outcome(child: Run) -> ToolResult:
    """A finished child's final output as the call's output; raises its end as an error
    the parent's model hears (not retried: the child ran)."""
    if child.termination_reason == "final" and child.output is not None:
        output = {"run_id": child.id, "text": child.output.get("text", "")}
        if "data" in child.output:
            output["data"] = child.output["data"]
        return ToolResult(output)
    error = child.error or {}
    message = f"the delegated run {child.id} ended {child.termination_reason}"
    if error.get("message"):
        message = f"{message}: {error['message']}"
    raise ToolError(f"child_{child.termination_reason}", message[:500])


@dataclass
class Delegation:
    """What agent tools run children with, attached once the service is built."""

    rt: Runtime | None = None
    driver: Driver | None = None

    def attach(self, rt: Runtime, driver: Driver) -> None:
        self.rt, self.driver = rt, driver


class AgentTool:
    """A configured `agent` tool (see the module's docstring)."""

    def __init__(self, name: str, config: AgentToolConfig, delegation: Delegation) -> None:
        self.spec: ToolSpec = config.to_tool_spec(name)
        self.agent = config.agent
        self.delegation = delegation

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        return None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        rt, driver = self.delegation.rt, self.delegation.driver
        if rt is None or driver is None:
            raise ToolError("unavailable", "delegation is not available in this process")
        child = await self._child(rt, arguments, context)
        while child.status is not RunStatus.FINISHED:
            if child.status is not RunStatus.AWAITING_APPROVAL and not driver.is_advancing(
                child.tenant_id, child.id
            ):
                driver.run_child(child.tenant_id, child.id)
            child = await driver.wait(child.tenant_id, child.id, LOOK_EVERY_S * 4)
            if child.status is RunStatus.AWAITING_APPROVAL:
                await asyncio.sleep(LOOK_EVERY_S)  # parked on an approver: look again
        return outcome(child)

    async def _child(self, rt: Runtime, arguments: Mapping[str, Any], context: ToolContext) -> Run:
        """The call's child: the one an earlier attempt made, or a new one."""
        from app.engine.lifecycle import entering, runs  # the use cases import the tools' runtime

        run_id = child_run_id(context.tenant_id, context.operation_id)
        async with rt.reads() as session:
            found = await runs_repo.get(session, context.tenant_id, run_id)
        if found is not None:
            return found
        request = runs.CreateRun(
            agent=self.agent,
            input=child_input(arguments),
            metadata={"delegated_by": {"run_id": context.run_id, "call_id": context.call_id}},
            script=context.child_script,
            parent_run_id=context.run_id,
            run_id=run_id,
            delegated=True,
        )
        try:
            started = await runs.start_run(rt, principal=context.principal, request=request)
        except entering.InputBlocked as blocked:  # the child's guardrails refused its input
            raise ToolError(blocked.error.code, blocked.error.message) from None
        except DomainError as refused:  # e.g. nothing left of a budget for a child
            raise ToolError(f"delegation_{refused.code.value}", refused.message[:500]) from None
        except IntegrityError:  # another holder's attempt made it meanwhile
            async with rt.reads() as session:
                found = await runs_repo.get(session, context.tenant_id, run_id)
            if found is None:
                raise
            return found
        return started.run


def agent_tools(configs: Mapping[str, Any], delegation: Delegation) -> dict[str, AgentTool]:
    return {
        name: AgentTool(name, config, delegation)
        for name, config in configs.items()
        if isinstance(config, AgentToolConfig)
    }
