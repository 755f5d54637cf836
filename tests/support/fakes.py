"""Fakes at the ports: a clock the test moves, tools whose behaviour the test sets, and a
model that answers when the test says."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from app.adapters.model.scripted import ScriptedModel
from app.domain.model.replies import ModelReply, ModelRequest
from app.domain.ports import ToolContext
from app.domain.tools.specs import ToolError, ToolResult, ToolSpec


class FakeClock:
    """Real time plus an offset the test can move forward (leases, deadlines)."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def monotonic(self) -> float:
        return time.monotonic() + self.offset.total_seconds()

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


@dataclass
class ProbeTool:
    """A read-only tool that counts its executions and can block or fail on demand."""

    spec: ToolSpec
    executions: int = 0
    gate: asyncio.Event | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    failures: list[ToolError] = field(default_factory=list)

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        return None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        self.executions += 1
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.failures:
            raise self.failures.pop(0)
        return ToolResult({"echo": dict(arguments), "n": self.executions}, "1", None)


def probe_spec(name: str = "probe", **overrides: Any) -> ToolSpec:
    values: dict[str, Any] = {
        "name": name,
        "description": "A test tool.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"q": {"type": "string"}},
        },
        "permissions": ("probe:read",),
        "timeout_s": 5,
    }
    values.update(overrides)
    return ToolSpec(**values)


@dataclass
class HeldModel:
    """The scripted model, each call held until `gate` is set: a model call in flight for
    as long as the test needs (to crash its process, or take its run over), and none
    that makes the test wait a fixed time. Given as `models={"scripted": held}`."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set once a held call has answered.
    answered: asyncio.Event = field(default_factory=asyncio.Event)

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.started.set()
        await self.gate.wait()
        reply = await ScriptedModel().complete(request)
        self.answered.set()
        return reply
