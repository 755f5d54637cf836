"""Operator-declared HTTP tools (SPEC §4.1): the wire format between Toolgate and a tool
backend. One shared `httpx.AsyncClient`; the executor (never this adapter) decides
retries, timeouts and what an unknown outcome means.

Nothing of a backend's URL, and nothing of its error body but `code`, `retryable`,
`fatal` and a cut `message`, leaves this module: errors carry no exception text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx

from app.config.tool_configs import HttpToolConfig
from app.domain.approvals.previews import MAX_SUMMARY, PreviewBody
from app.domain.ports import OperationStatus, ToolContext
from app.domain.text import unstorable_char
from app.domain.tools.specs import (
    OutputRefused,
    SentUnanswered,
    ToolError,
    ToolResult,
    ToolSpec,
    rfc3339,
    unstorable_path,
)

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
        self._preview_url = None if config.preview_url is None else str(config.preview_url)
        self._client = client

    @property
    def looks_up(self) -> bool:
        return self._status_url is not None

    async def status(self, context: ToolContext, timeout_s: float) -> OperationStatus:
        """`GET <status_url>/<operation id>` (SPEC §4.1)."""
        assert self._status_url is not None
        url = f"{self._status_url.rstrip('/')}/{context.operation_id}"
        unclear = ToolError("status_unavailable", "the tool's backend could not say", True)
        limit = self.spec.max_output_bytes + ENVELOPE_BYTES
        try:
            async with self._client.stream("GET", url, timeout=_timeout(timeout_s)) as r:
                status = r.status_code
                content = await _read_capped(r, limit)
        except httpx.HTTPError:
            raise unclear from None
        if status == 404:
            return OperationStatus("unknown")
        if status == 200 and content is None:
            # Only a success carries an output that large: it took effect, and what it
            # answered is not kept.
            too_large = OutputRefused("output_too_large", "the operation's output is too large")
            return OperationStatus("succeeded", result=ToolResult.withholding(too_large))
        if status != 200 or content is None:
            raise unclear
        try:
            body = _parse(content)
        except (ValueError, RecursionError):
            raise unclear from None
        state = body.get("status") if isinstance(body, dict) else None
        if state == "succeeded":
            try:
                return OperationStatus("succeeded", result=_result(content))
            except OutputRefused as refused:  # it took effect: what it answered is not kept
                return OperationStatus("succeeded", result=ToolResult.withholding(refused))
        if state == "failed":
            return OperationStatus("failed", error=_backend_error(200, content))
        if state == "in_progress":
            return OperationStatus("in_progress")
        raise unclear

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        return None  # the backend validates meaning; the schema was checked before

    def _body(self, arguments: Mapping[str, Any], context: ToolContext) -> dict[str, Any]:
        preview = context.preview
        approver = context.approved_by
        return {
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
            "preview": None
            if preview is None
            else {"id": preview.id, "resource_version": preview.resource_version},
            "approved_by": None
            if approver is None
            else {"tenant": approver.tenant_id, "subject": approver.subject},
            # Set for a read of a snapshot run only: read as of it (SPEC §4.1).
            "as_of": None if context.as_of is None else rfc3339(context.as_of),
        }

    async def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> PreviewBody:
        """`POST <preview_url>` with the execute body (SPEC §4.1); nothing is changed."""
        assert self._preview_url is not None
        timeout = _timeout(context.timeout_s or self.spec.timeout_s)
        try:
            async with self._client.stream(
                "POST", self._preview_url, json=self._body(arguments, context), timeout=timeout
            ) as r:
                status = r.status_code
                raw = await _read_capped(r, PREVIEW_BYTES if r.is_success else MAX_ERROR_BYTES)
        except httpx.HTTPError:
            # A preview changes nothing: whatever happened to the request, asking again is safe.
            raise ToolError(
                "unavailable", "the tool's backend could not make a preview", retryable=True
            ) from None
        if not 200 <= status < 300:
            raise _backend_error(status, raw or b"")
        return _preview(raw)

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        body = self._body(arguments, context)
        headers = {"Idempotency-Key": context.operation_id}
        limit = self.spec.max_output_bytes + ENVELOPE_BYTES
        timeout = _timeout(context.timeout_s or self.spec.timeout_s)
        try:
            async with self._client.stream(
                "POST", self._url, json=body, headers=headers, timeout=timeout
            ) as r:
                status = r.status_code
                raw = await _read_capped(r, limit if r.is_success else MAX_ERROR_BYTES)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout):
            # Provably not sent: safe to try again for any tool.
            raise ToolError(
                "unavailable", "the tool's backend could not be reached", retryable=True
            ) from None
        except httpx.TransportError:
            raise SentUnanswered() from None
        if 200 <= status < 300:
            if raw is None:
                raise OutputRefused(
                    "output_too_large",
                    f"the tool's answer is larger than {self.spec.max_output_bytes} bytes",
                )
            return _result(raw)
        raise _backend_error(status, raw or b"")  # an error body past its cap: status only


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
        raise OutputRefused("invalid_output", "the tool's answer is not JSON") from None
    if not isinstance(envelope, dict) or "output" not in envelope:
        raise OutputRefused("invalid_output", "the tool's answer has no `output`")
    version, observed = envelope.get("source_version"), envelope.get("observed_at")
    for value, longest in ((version, 200), (observed, 64)):
        if value is not None and not _clean(value, longest):
            raise OutputRefused(
                "invalid_output",
                "source_version and observed_at must be short strings without NUL",
            )
    return ToolResult(envelope["output"], version, observed)


#: An error code a backend may send: a short slug (anything else is `backend_error`).
_CODE = re.compile(r"[A-Za-z0-9_.:-]{1,100}")


#: The largest preview a backend may send (its summary and impact are shown to approvers).
PREVIEW_BYTES = 65_536


def _preview(raw: bytes | None) -> PreviewBody:
    bad = ToolError("invalid_preview", "the tool's preview is not of the documented shape")
    try:
        body = _parse(raw) if raw is not None else None
    except (ValueError, RecursionError):
        raise bad from None
    if not isinstance(body, dict) or not isinstance(body.get("summary"), str):
        raise bad
    impact = body.get("impact", {})
    cost = body.get("cost_usd", 0)
    version = body.get("resource_version")
    expires = body.get("expires_in_s")
    if (
        not isinstance(impact, dict)
        or not _number(cost)
        or cost < 0
        or (version is not None and not _clean(version, 200))
        or (expires is not None and (not _number(expires) or expires <= 0))
        or unstorable_path(body) is not None
    ):
        raise bad
    return PreviewBody(
        summary=body["summary"][:MAX_SUMMARY],
        impact=impact,
        cost_usd=float(cost),
        resource_version=version,
        expires_in_s=None if expires is None else float(expires),
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _clean(value: Any, longest: int) -> bool:
    return isinstance(value, str) and len(value) <= longest and unstorable_char(value) is None


def _timeout(seconds: float) -> httpx.Timeout:
    """One attempt's time for every phase (connecting at most 5 s of it)."""
    return httpx.Timeout(seconds, connect=min(5.0, seconds))


def _backend_error(status: int, raw: bytes) -> ToolError:
    """A non-2xx answer as a tool error: only `code`, `retryable`, `fatal` and `message`
    (problem+json bodies with those members too); without them, a safe default."""
    try:
        body = _parse(raw) if raw else None
    except (ValueError, RecursionError):
        body = None
    transient = status == 429 or status >= 500
    if not isinstance(body, dict) or not _CODE.fullmatch(str(body.get("code"))):
        return ToolError("backend_error", f"the tool's backend answered {status}", transient)
    message = body.get("message") or body.get("detail")
    if not isinstance(message, str):
        message = f"the tool failed ({status})"
    return ToolError(
        body["code"],
        message,
        retryable=body.get("retryable", transient) is True,
        fatal=body.get("fatal") is True,
    )


def http_tools(configs: Mapping[str, Any], client: httpx.AsyncClient) -> dict[str, HttpTool]:
    """The HTTP tools among the config's operator tools."""
    return {
        name: HttpTool(name, config, client)
        for name, config in configs.items()
        if isinstance(config, HttpToolConfig)
    }
