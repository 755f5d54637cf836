"""The built-in `read_result` tool: one page of a result this run recorded.

It reads only what the run's own state holds — the successful results of the run's
calls, as recorded (redacted, size-bounded) — so it can never read another run's data;
it is exposed to the model only when a result in the model input is a summary
(`context_budget`). It is a read-only call like any other: it counts against
`max_tool_calls`, and its page gets a source id of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.domain.lifecycle.records import Call
from app.domain.model.paging import (
    READ_RESULT,
    READ_RESULT_DESCRIPTION,
    READ_RESULT_SCHEMA,
    Paging,
    pages,
    result_text,
)
from app.domain.ports import ToolContext
from app.domain.tools.specs import ToolError, ToolResult, ToolSpec

SPEC = ToolSpec(
    name=READ_RESULT,
    description=READ_RESULT_DESCRIPTION,
    input_schema=READ_RESULT_SCHEMA,
    timeout_s=5.0,
    max_attempts=1,
)


class ReadResult:
    """`sources`: the run's successful calls by source id, as its lease holder keeps them."""

    spec = SPEC

    def __init__(self, sources: Callable[[], Mapping[str, Call]], paging: Paging) -> None:
        self._sources = sources
        self._paging = paging

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        return None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        call = self._find(arguments["call_id"], arguments.get("step"), context)
        if call is None:
            raise ToolError("not_found", "no successful result of this run has that call id")
        text = pages(result_text(call.output), self._paging.page_bytes)
        page = arguments["page"]
        if page > len(text):
            raise ToolError("not_found", f"that result has {len(text)} pages")
        output = {
            "call_id": call.call_id,
            "step": call.step,
            "source_id": call.source_id,
            "page": page,
            "pages": len(text),
            "text": text[page - 1],
        }
        return ToolResult(output, call.source_version, call.observed_at)

    def _find(self, call_id: str, step: int | None, context: ToolContext) -> Call | None:
        found = [
            c
            for c in self._sources().values()
            if c.call_id == call_id
            and (step is None or c.step == step)
            # Belt and braces: the state holds this run's calls only.
            and (c.tenant_id, c.run_id) == (context.tenant_id, context.run_id)
            and c.tool != READ_RESULT
            and not c.output_withheld
        ]
        return max(found, key=lambda c: c.step, default=None)
