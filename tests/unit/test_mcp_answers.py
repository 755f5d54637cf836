"""The MCP client's transport reads each answer only up to its limit: a call's (by its
operation id in `_meta`), one reading of the tool list's (its pages together), any
other's; and asks for answers without content encoding. Against `httpx2.MockTransport`,
answering from an endless stream that counts what was taken from it."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from app.adapters.tools.mcp_answers import (
    LIST,
    MAX_LIST_BYTES,
    MAX_OTHER_BYTES,
    OPERATION_ID_META,
    AnswerTooLarge,
    BoundedAnswers,
    Limit,
    answer_limit,
)

CHUNK = 64 * 1024


class Endless(httpx2.AsyncByteStream):
    def __init__(self) -> None:
        self.taken = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            self.taken += CHUNK
            yield b"x" * CHUNK


def client(limits: dict[str, Limit], seen: list[httpx2.Request], body: Any = None) -> Any:
    streams: list[Endless] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if body is not None:
            encoded = {"content-encoding": "gzip"}
            return httpx2.Response(200, stream=httpx2.ByteStream(body), headers=encoded)
        streams.append(Endless())
        return httpx2.Response(200, stream=streams[-1])

    transport = BoundedAnswers(httpx2.MockTransport(answer), limits.get)
    return httpx2.AsyncClient(transport=transport), streams


def message(method: str, operation_id: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "lookup_doc"}
    if operation_id is not None:
        params["_meta"] = {OPERATION_ID_META: operation_id}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def test_a_calls_answer_is_cut_past_its_limit_and_the_limit_says_so() -> None:
    limit = Limit(answer_limit(1000))
    http, streams = client({"op_1": limit}, [])
    async with http:
        with pytest.raises(AnswerTooLarge):
            await http.post("http://mcp/", json=message("tools/call", "op_1"))
    assert limit.exceeded and limit.bytes == 4 * 1000 + 64 * 1024
    assert streams[0].taken <= limit.bytes + CHUNK  # the rest was never read


async def test_the_pages_of_one_listing_share_one_limit() -> None:
    limit = Limit(3 * CHUNK)
    http, streams = client({LIST: limit}, [])
    async with http:
        async with http.stream("POST", "http://mcp/", json=message(LIST)) as first:
            async for _ in first.aiter_raw():
                if limit.used >= 2 * CHUNK:
                    break
        with pytest.raises(AnswerTooLarge):
            await http.post("http://mcp/", json=message(LIST))
    assert limit.exceeded and streams[1].taken <= 2 * CHUNK


@pytest.mark.parametrize(
    ("body", "cap"),
    [
        (message("tools/list"), MAX_LIST_BYTES),  # a listing nobody registered
        (message("initialize"), MAX_OTHER_BYTES),
        (message("tools/call", "op_unknown"), MAX_OTHER_BYTES),
        (message("tools/call"), MAX_OTHER_BYTES),
    ],
)
async def test_any_other_answer_has_its_own_cap(body: dict[str, Any], cap: int) -> None:
    http, streams = client({}, [])
    async with http:
        with pytest.raises(AnswerTooLarge):
            await http.post("http://mcp/", json=body)
    assert cap < streams[0].taken <= cap + CHUNK


async def test_answers_are_asked_for_and_read_without_content_encoding() -> None:
    seen: list[httpx2.Request] = []
    raw = gzip.compress(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode())
    http, _ = client({}, seen, body=raw)
    async with http:
        answer = await http.post("http://mcp/", json=message("ping"))
    assert seen[0].headers["accept-encoding"] == "identity"
    # Not inflated (it would be counted before it is): the bytes as they came.
    assert "content-encoding" not in answer.headers and answer.content == raw


async def test_the_servers_own_stream_is_left_to_the_sdk() -> None:
    http, streams = client({}, [])
    async with http, http.stream("GET", "http://mcp/") as answer:
        async for _ in answer.aiter_raw():
            if streams[0].taken > MAX_OTHER_BYTES + CHUNK:
                break
    assert streams[0].taken > MAX_OTHER_BYTES + CHUNK
