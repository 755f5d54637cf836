"""One model call as telemetry sees it: its `chat {model}` span (GenAI attributes, content
only when capture is on) and its metrics (operation duration, token usage)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from opentelemetry.trace import Span, Status, StatusCode

from app.domain.model.replies import FinalAnswer, ModelReply, ModelRequest
from app.domain.tools.specs import ToolSpec, schema_hash, sha256_tag
from app.engine.process.runtime import Runtime
from app.observability import telemetry


class Versions(NamedTuple):
    """What a step's model calls ran with, recorded on its turn and its spans: computed
    once a step, not once a call."""

    instructions_hash: str
    tool_schema_hash: str


#: Versions by instructions and tool specs (by identity, the specs kept alive with their
#: entry): hashing every schema's canonical JSON on every step was a tenth of a step's CPU.
_VERSIONS: dict[tuple[str, tuple[int, ...]], tuple[tuple[ToolSpec, ...], Versions]] = {}
_VERSIONS_KEPT = 256


def versions_of(instructions: str, tools: Iterable[ToolSpec]) -> Versions:
    specs = tuple(tools)
    key = (instructions, tuple(id(t) for t in specs))
    entry = _VERSIONS.get(key)
    if entry is not None and all(a is b for a, b in zip(entry[0], specs, strict=True)):
        return entry[1]
    versions = Versions(sha256_tag(instructions), schema_hash(specs))
    if len(_VERSIONS) >= _VERSIONS_KEPT:
        _VERSIONS.clear()  # pinned configs come and go; the live ones come straight back
    _VERSIONS[key] = (specs, versions)
    return versions


def model_name(route: Any) -> str:
    return getattr(route, "model", None) or route.provider


class ChatCall:
    def __init__(self, rt: Runtime, route: Any, span: Span) -> None:
        self.rt, self.route, self.span = rt, route, span
        self.started = asyncio.get_running_loop().time()

    def answered(self, reply: ModelReply) -> None:
        final = isinstance(reply, FinalAnswer)
        self.span.set_attributes(
            {
                telemetry.RESPONSE_MODEL: reply.model or "",
                telemetry.FINISH_REASONS: ["stop" if final else "tool_calls"],
                telemetry.INPUT_TOKENS: reply.usage.input_tokens,
                telemetry.OUTPUT_TOKENS: reply.usage.output_tokens,
            }
        )
        if self.rt.capture.enabled:
            said = (
                {"role": "assistant", "content": reply.text}
                if isinstance(reply, FinalAnswer)
                else {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": c.call_id, "name": c.name, "arguments": c.arguments}
                        for c in reply.calls
                    ],
                }
            )
            self.span.set_attribute(telemetry.OUTPUT_MESSAGES, self.rt.capture.text([said]))
        self._measured(reply.usage.input_tokens, reply.usage.output_tokens)

    def cut_by_deadline(self) -> None:
        self.span.set_attribute(telemetry.ERROR_TYPE, "deadline")
        self._measured(error_type="deadline")

    def failed(self, code: str, retryable: bool) -> None:
        """A failed attempt: only its own span is marked failed, never its parent's."""
        self.span.set_attributes({telemetry.ERROR_TYPE: code, telemetry.RETRYABLE: retryable})
        self.span.set_status(Status(StatusCode.ERROR))
        self._measured(error_type=code)

    def _measured(self, *usage: int, error_type: str | None = None) -> None:
        self.rt.metrics.model_call(
            provider=self.route.provider,
            model=model_name(self.route),
            duration_s=asyncio.get_running_loop().time() - self.started,
            usage=(usage[0], usage[1]) if usage else None,
            error_type=error_type,
        )


@contextmanager
def chat_call(
    rt: Runtime, versions: Versions, route: Any, request: ModelRequest
) -> Iterator[ChatCall]:
    attributes: dict[str, Any] = {
        telemetry.OPERATION: "chat",
        telemetry.PROVIDER: route.provider,
        telemetry.REQUEST_MODEL: model_name(route),
        telemetry.STEP: request.step,
        telemetry.ATTEMPT: request.attempt,
        telemetry.INSTRUCTIONS_HASH: versions.instructions_hash,
        telemetry.TOOL_SCHEMA_HASH: versions.tool_schema_hash,
    }
    if rt.capture.enabled:
        attributes[telemetry.SYSTEM_INSTRUCTIONS] = rt.capture.text(request.instructions)
        attributes[telemetry.INPUT_MESSAGES] = rt.capture.text(request.messages)
    with rt.tracer.start_as_current_span(
        f"chat {model_name(route)}", kind=telemetry.CLIENT, attributes=attributes
    ) as span:
        yield ChatCall(rt, route, span)
