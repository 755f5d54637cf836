"""Spans of runs, model calls and tool calls (SPEC §8), named after the OpenTelemetry GenAI
semantic conventions as of semantic-conventions v1.41.0. The names live here only.

- `invoke_agent {agent}` (INTERNAL): one segment of a run's advance in one process. A run
  that parks or changes hands starts a new segment, which *links* to the one before (its
  context is kept on the run), with `gen_ai.conversation.id` = the run id tying them.
- `chat {model}` (CLIENT): one model call attempt.
- `execute_tool {tool}` (INTERNAL): one tool call attempt.

Content is not recorded unless asked for (`captured_content`): arguments and results go on
as a SHA-256 and a size. The tracer comes from the provider given to `create_app` (tests
use an in-memory exporter), else the global one, a no-op unless the process configured one
(`otel_setup`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

SCOPE = "toolgate"

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
AGENT = "gen_ai.agent.name"
CONVERSATION = "gen_ai.conversation.id"
TOOL = "gen_ai.tool.name"
TOOL_CALL = "gen_ai.tool.call.id"
ERROR_TYPE = "error.type"
STEP = "toolgate.step"
ATTEMPT = "toolgate.attempt"
RETRYABLE = "toolgate.retryable"
TERMINATION = "toolgate.termination_reason"
ROUTE = "toolgate.route"
ARGS_HASH = "toolgate.arguments.hash"
ARGS_SIZE = "toolgate.arguments.size"
RESULT_HASH = "toolgate.result.hash"
RESULT_SIZE = "toolgate.result.size"
INSTRUCTIONS_HASH = "toolgate.instructions.hash"
TOOL_SCHEMA_HASH = "toolgate.tool_schema.hash"
#: Seconds a segment's run waited, runnable, before a process took it up.
QUEUE_WAIT = "toolgate.queue_wait_s"
#: Seconds an approved call waited, from its preview to its execution.
APPROVAL_WAIT = "toolgate.approval_wait_s"
# Content, recorded only when asked for (see `captured_content`).
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"

INTERNAL, CLIENT = SpanKind.INTERNAL, SpanKind.CLIENT


class _Off(trace.NoOpTracer):
    """The tracer while no provider is configured: the API's no-op span (the current
    span's context, so a traceparent still carries over), but not attached to the context:
    the API's own no-op tracer attaches and detaches it, 4 us each, three times a step
    (docs/performance.md). A provider configured later is followed from then on."""

    def start_as_current_span(self, name: str, context: Any = None, **kwargs: Any) -> Any:
        provider = trace.get_tracer_provider()
        if not isinstance(provider, trace.ProxyTracerProvider):
            return provider.get_tracer(SCOPE).start_as_current_span(name, context, **kwargs)
        return contextlib.nullcontext(self.start_span(name, context))


def tracer(provider: trace.TracerProvider | None = None) -> trace.Tracer:
    """`provider`'s tracer; without one the global provider's, and while that is the API's
    default (nothing configured it: the service never sets it), a tracer that does nothing."""
    chosen = provider or trace.get_tracer_provider()
    if isinstance(chosen, trace.ProxyTracerProvider):
        return _Off()
    return chosen.get_tracer(SCOPE)


def background(*, traced: bool) -> contextlib.AbstractContextManager[Any]:
    """Where the instrumented libraries (the database's, the HTTP client's) make no spans,
    unless `traced`: around the driver's housekeeping, which an idle process does every
    poll, and which would otherwise be a steady stream of spans about no run. A task
    created inside inherits it (tasks copy the context they are created in)."""
    if traced:
        return contextlib.nullcontext()
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    return suppress_instrumentation()


def digest(value: Any) -> tuple[str, int]:
    """A value as its SHA-256 and size: what spans carry instead of content."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()
    return "sha256:" + hashlib.sha256(text).hexdigest(), len(text)


def context_of(span: trace.Span) -> str | None:
    """The span's context as a W3C traceparent, kept on the run for the next segment."""
    ctx = span.get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def link_to(traceparent: str | None) -> list[Link]:
    """A link to the segment whose context was kept (none if there is none)."""
    if not traceparent:
        return []
    try:
        _, trace_id, span_id, flags = traceparent.split("-")
        ctx = SpanContext(int(trace_id, 16), int(span_id, 16), True, TraceFlags(int(flags, 16)))
    except ValueError:
        return []
    return [Link(ctx)] if ctx.is_valid else []
