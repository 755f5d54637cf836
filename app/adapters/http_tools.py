"""Operator-declared HTTP tools (SPEC §4.1): the wire format between Toolgate and a tool
backend. One shared `httpx.AsyncClient`; the executor (never this adapter) decides
retries, timeouts and what an unknown outcome means.

Nothing of a backend's URL, and nothing of its error body but `code`, `retryable`,
`fatal` and a cut `message`, leaves this module: errors carry no exception text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from app.config_models import HttpToolConfig
from app.domain.ports import OperationStatus, ToolContext
from app.domain.tools import SentUnanswered, ToolError, ToolResult, ToolSpec

#: Room for the envelope (`{"output": …, "source_version": …}`) around the output itself.
ENVELOPE_BYTES = 4096
#: A backend error body is read up to this size; the rest is dropped.
MAX_ERROR_BYTES = 16_384


def client_timeouts() -> httpx.Timeout:
    """Defaults of the shared client; every call also gets its own deadline."""
    return httpx.Timeout(connect=5.0, read=30.0, write=10.0, pool=5.0)


class HttpTool:
    def __init__(self, name: str, config: HttpToolConfig, client: httpx.AsyncClient) -> None:
        self.spec: ToolSpec = config.to_tool_spec(name)
        self._url = str(config.url)
        self._status_url = None if config.status_url is None else str(config.status_url)
        self._client = client

    @property
    def looks_up(self) -> bool:
        return self._status_url is not None

    async def status(self, context: ToolContext, timeout_s: float) -> OperationStatus:
        """`GET <status_url>/<operation id>` (SPEC §4.1)."""
        assert self._status_url is not None
        url = f"{self._status_url.rstrip('/')}/{context.operation_id}"
        unclear = ToolError("status_unavailable", "the tool's backend could not say", True)
        try:
            response = await self._client.get(url, timeout=timeout_s)
        except httpx.HTTPError:
            raise unclear from None
        if response.status_code == 404:
            return OperationStatus("unknown")
        if (
            response.status_code != 200
            or len(response.content) > self.spec.max_output_bytes + ENVELOPE_BYTES
        ):
            raise unclear
        try:
            body = _parse(response.content)
        except (ValueError, RecursionError):
            raise unclear from None
        state = body.get("status") if isinstance(body, dict) else None
        if state == "succeeded":
            return OperationStatus("succeeded", result=_result(response.content))
        if state == "failed":
            return OperationStatus("failed", error=_backend_error(200, response.content))
        if state == "in_progress":
            return OperationStatus("in_progress")
        raise unclear

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        return None  # the backend validates meaning; the schema was checked before

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        body = {
            "tool": self.spec.name,
            "run_id": context.run_id,
            "call_id": context.call_id,
            "operation_id": context.operation_id,
            "arguments": dict(arguments),
            # From the run's creator, resolved server-side: never from the arguments.
            "principal": {
                "tenant": context.principal.tenant_id,
                "subject": context.principal.subject,
            },
            "preview": None,
            "as_of": None if context.as_of is None else context.as_of.isoformat(),
        }
        headers = {"Idempotency-Key": context.operation_id}
        limit = self.spec.max_output_bytes + ENVELOPE_BYTES
        try:
            async with self._client.stream("POST", self._url, json=body, headers=headers) as r:
                raw = await _read_capped(r, limit if r.is_success else MAX_ERROR_BYTES)
                status = r.status_code
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout):
            # Provably not sent: safe to try again for any tool.
            raise ToolError(
                "unavailable", "the tool's backend could not be reached", retryable=True
            ) from None
        except httpx.TransportError:
            raise SentUnanswered() from None
        if raw is None:
            raise ToolError(
                "output_too_large",
                f"the tool's answer is larger than {self.spec.max_output_bytes} bytes",
            )
        if 200 <= status < 300:
            return _result(raw)
        raise _backend_error(status, raw)


async def _read_capped(response: httpx.Response, limit: int) -> bytes | None:
    """The body, or None when it is longer than `limit` (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(raw: bytes) -> Any:
    return json.loads(raw, parse_constant=_refuse_constant)


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are not JSON


def _result(raw: bytes) -> ToolResult:
    try:
        envelope = _parse(raw)
    except (ValueError, RecursionError):
        raise ToolError("invalid_output", "the tool's answer is not JSON") from None
    if not isinstance(envelope, dict) or "output" not in envelope:
        raise ToolError("invalid_output", "the tool's answer has no `output`")
    version, observed = envelope.get("source_version"), envelope.get("observed_at")
    if not all(v is None or isinstance(v, str) for v in (version, observed)):
        raise ToolError("invalid_output", "source_version and observed_at must be strings")
    return ToolResult(envelope["output"], version, observed)


def _backend_error(status: int, raw: bytes) -> ToolError:
    """A non-2xx answer as a tool error: only `code`, `retryable`, `fatal` and `message`
    (problem+json bodies with those members too); without them, a safe default."""
    try:
        body = _parse(raw) if raw else None
    except (ValueError, RecursionError):
        body = None
    transient = status == 429 or status >= 500
    if not isinstance(body, dict) or not isinstance(body.get("code"), str):
        return ToolError("backend_error", f"the tool's backend answered {status}", transient)
    message = body.get("message") or body.get("detail") or f"the tool failed ({status})"
    return ToolError(
        body["code"][:100],
        str(message),
        retryable=body.get("retryable", transient) is True,
        fatal=body.get("fatal") is True,
    )


def http_tools(
    configs: Mapping[str, HttpToolConfig], client: httpx.AsyncClient
) -> dict[str, HttpTool]:
    return {name: HttpTool(name, config, client) for name, config in configs.items()}
