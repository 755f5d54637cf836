"""A fake model provider: a real HTTP server on loopback that speaks the OpenAI Chat
Completions and the Anthropic Messages wire formats, records every request and answers as
the test scripts it."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support.backend import serving_app

#: The most output a call may ask of the fake's model (OpenAI's gpt-4o: 16,384).
MODEL_MAX_OUTPUT = 16_384


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    #: Set by the test when the reply may go (a call in flight for as long as it needs).
    hold: asyncio.Event | None = None


def calls(*items: tuple[str, str, str], usage: tuple[int, int] = (10, 5)) -> Reply:
    """An answer proposing tool calls; arguments are given as the JSON text models send."""
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}
        for cid, name, arguments in items
    ]
    message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    return _completion(message, "tool_calls", usage)


def text(content: str, usage: tuple[int, int] = (20, 8), finish: str = "stop") -> Reply:
    return _completion({"role": "assistant", "content": content}, finish, usage)


def failure(status: int, code: str, message: str = "", **headers: str) -> Reply:
    body = {"error": {"message": message or code, "type": "error", "code": code}}
    return Reply(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def _completion(message: dict[str, Any], finish: str, usage: tuple[int, int]) -> Reply:
    return Reply(
        200,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "gpt-test-2026",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
            },
        },
    )


def uses(*items: tuple[str, str, dict[str, Any]], usage: tuple[int, int] = (10, 5)) -> Reply:
    """An Anthropic answer proposing tool calls (`tool_use` blocks)."""
    blocks = [{"type": "tool_use", "id": i, "name": n, "input": args} for i, n, args in items]
    return _message(blocks, "tool_use", usage)


def says(content: str, usage: tuple[int, int] = (20, 8), stop: str = "end_turn") -> Reply:
    return _message([{"type": "text", "text": content}], stop, usage)


def refusal(status: int, kind: str, message: str = "", **headers: str) -> Reply:
    body = {"type": "error", "error": {"type": kind, "message": message or kind}}
    return Reply(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def _message(blocks: list[dict[str, Any]], stop: str, usage: tuple[int, int]) -> Reply:
    return Reply(
        200,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-2026",
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        },
    )


@dataclass
class FakeOpenAI:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    script: list[Reply] = field(default_factory=list)
    #: Bill Chat Completions as a provider would: input by the request's size (about four
    #: bytes a token), output by the answer's, and honour `max_completion_tokens` (an
    #: answer past it is cut there, `finish_reason: length`) unless `ignores_caps`.
    realistic: bool = False
    ignores_caps: bool = False
    #: (input, output) tokens billed for each request, when `realistic`.
    bills: list[tuple[int, int]] = field(default_factory=list)

    def answer(self, *replies: Reply) -> None:
        self.script.extend(replies)

    async def _chat(self, request: Request) -> Response:
        sent = json.loads(await request.body())
        self.requests.append(sent)
        self.headers.append(dict(request.headers))
        if (sent.get("max_completion_tokens") or 0) > MODEL_MAX_OUTPUT:
            # As OpenAI answers a call that asks for more than its model can write.
            reply = failure(400, "invalid_request_error", "max_tokens is too large")
        else:
            reply = self.script.pop(0) if self.script else text("(no script left)")
        if self.realistic and reply.status == 200:
            reply = billed(reply, sent, honour_cap=not self.ignores_caps)
            usage = reply.body["usage"]
            self.bills.append((usage["prompt_tokens"], usage["completion_tokens"]))
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.hold is not None:
            await reply.hold.wait()
        # ASCII-escaped JSON, as providers may send: it can carry an unpaired surrogate,
        # which UTF-8 text cannot.
        return Response(
            json.dumps(reply.body),
            status_code=reply.status,
            headers=reply.headers,
            media_type="application/json",
        )


@asynccontextmanager
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI()
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", fake._chat, methods=["POST"]),
            Route("/v1/messages", fake._chat, methods=["POST"]),
        ]
    )
    async with serving_app(app) as url:
        fake.url = url
        yield fake


def billed(reply: Reply, sent: dict[str, Any], *, honour_cap: bool) -> Reply:
    """`reply` (Chat Completions) with the usage a provider would report for `sent`: the
    input by the request's size, the output by the answer's; cut at the request's
    `max_completion_tokens` when it is honoured."""
    body = json.loads(json.dumps(reply.body))
    choice = body["choices"][0]
    message = choice["message"]
    prompt = math.ceil(len(json.dumps(sent["messages"] + sent.get("tools", []))) / 4)
    said = message.get("content") or json.dumps(message.get("tool_calls") or [])
    completion = max(1, math.ceil(len(said) / 4))
    cap = sent.get("max_completion_tokens")
    if honour_cap and cap is not None and completion > cap:
        completion = cap
        body["choices"][0] = {
            "index": 0,
            "finish_reason": "length",
            "message": {"role": "assistant", "content": (message.get("content") or "")[: cap * 4]},
        }
    body["usage"] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    return Reply(reply.status, body, reply.headers, reply.delay_s, reply.hold)
