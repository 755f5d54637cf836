"""MCP answers are bounded while they are read: a server cannot make the process buffer an
answer of any size (SPEC §4 `max_output_bytes`).

The SDK reads a JSON answer whole (`aread`) and an SSE answer an event at a time; both
read from the HTTP client's transport, which this module wraps. Each POST's answer is
counted as it arrives and cut past its limit: a `tools/call` has its call's limit
(registered by the caller under the call's operation id, which travels in `_meta`), the
pages of one reading of the tool list share one limit (registered under `LIST`), and
any other answer (initialize, a ping) has `MAX_OTHER_BYTES`. The cut ends the SDK's read
with an error, and the limit is marked `exceeded`, so the caller can tell an answer too
large from any other failure. Answers are asked for and read without content encoding:
a compressed answer would be counted before it is inflated."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from app.domain.errors import ToolgateError

#: Room around a call's output on the wire: MCP carries a structured result twice
#: (`structuredContent`, and its JSON as text content, escaped again), in a JSON-RPC
#: envelope, maybe as SSE lines.
OUTPUT_COPIES = 4
ENVELOPE_BYTES = 64 * 1024
#: One reading of the tool list, all its pages, is cut past this: room for hundreds of
#: tools at their declarations' caps, and little enough to parse and hash in well under a
#: second (the SDK parses it on the loop).
MAX_LIST_BYTES = 4 * 1024 * 1024
#: Any other answer (initialize, a ping) is cut past this.
MAX_OTHER_BYTES = 1024 * 1024
#: The key a reading of the tool list registers its limit under.
LIST = "tools/list"
#: Where a call's operation id travels: MCP has no Idempotency-Key header (SPEC §4).
OPERATION_ID_META = "toolgate/operation_id"


def answer_limit(max_output_bytes: int) -> int:
    """How many bytes of a call's answer are read for an output of `max_output_bytes`."""
    return OUTPUT_COPIES * max_output_bytes + ENVELOPE_BYTES


@dataclass
class Limit:
    """How many bytes the answers registered under one key may take together, how many
    they took, and whether they went past it."""

    bytes: int
    used: int = 0
    exceeded: bool = False


class AnswerTooLarge(httpx2.StreamError, ToolgateError):
    """An answer went past its limit; the rest of it is not read. A `StreamError`, which
    the SDK turns into an error answer of the request instead of failing the session."""


class _Counted(httpx2.AsyncByteStream):
    def __init__(self, stream: httpx2.AsyncByteStream, limit: Limit) -> None:
        self._stream = stream
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        limit = self._limit
        async for chunk in self._stream:
            limit.used += len(chunk)
            if limit.used > limit.bytes:
                limit.exceeded = True
                raise AnswerTooLarge("the answer is larger than its limit")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class BoundedAnswers(httpx2.AsyncBaseTransport):
    """A transport whose POST answers are read up to their limit (`limit_of`: the limit
    registered under a call's operation id or `LIST`, or None)."""

    def __init__(
        self, inner: httpx2.AsyncBaseTransport, limit_of: Callable[[str], Limit | None]
    ) -> None:
        self._inner = inner
        self._limit_of = limit_of

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        if request.method != "POST":
            return response  # the server's own stream: the SDK caps each of its events
        key = _key(request)
        limit = self._limit_of(key) or Limit(MAX_LIST_BYTES if key == LIST else MAX_OTHER_BYTES)
        headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-encoding"]
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            status_code=response.status_code,
            headers=headers,
            stream=_Counted(response.stream, limit),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def _key(request: httpx2.Request) -> str:
    """What a request's limit is registered under: a `tools/call`'s operation id, `LIST`
    for a page of the tool list, "" for anything else."""
    try:
        message: Any = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return ""
    method = message.get("method") if isinstance(message, dict) else None
    if method == LIST:
        return LIST
    if method != "tools/call":
        return ""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    found = meta.get(OPERATION_ID_META) if isinstance(meta, dict) else None
    return found if isinstance(found, str) and found != LIST else ""
