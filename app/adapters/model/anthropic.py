"""Anthropic's Messages API behind the model port, through the official `anthropic` SDK as
a typed wire-format client: tools as `tool_use` / `tool_result` blocks.

Like the OpenAI adapter: the SDK runs on the service's shared `httpx.AsyncClient` with its
own retries off; the executor gives each call its timeout and decides retries; failures
become `ModelError`s with safe codes; the API key comes from the route's environment
variable and goes nowhere but the request's header.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anthropic
from anthropic import AsyncAnthropic

from app.adapters.model.sdk import SdkModel
from app.config.models import DEFAULT_MAX_OUTPUT_TOKENS
from app.domain.model.replies import (
    FinalAnswer,
    ModelError,
    ModelReply,
    ModelRequest,
    ProposedCall,
    TokenUsage,
    ToolCallsProposal,
)
from app.domain.model.typed_output import OutputSchema


class AnthropicModel(SdkModel):
    URL_ENV = "ANTHROPIC_BASE_URL"
    SDK = anthropic

    def sdk(self, **options: Any) -> AsyncAnthropic:
        return AsyncAnthropic(**options)

    async def call(self, request: ModelRequest) -> ModelReply:
        system, messages = to_messages(request.messages)
        arguments: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            "messages": messages,
            "timeout": request.timeout_s,
        }
        if system:
            arguments["system"] = system
        if request.tools:
            arguments["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in request.tools
            ]
        if request.output is not None:
            structured = output_config(request.output)
            if structured is not None:
                arguments["output_config"] = structured
        return to_reply(await self._sdk.messages.create(**arguments))

    @staticmethod
    def context_too_long(exc: Any) -> bool:
        message = str(exc.message).lower()
        return exc.status_code in (400, 413) and (
            "prompt is too long" in message or "context" in message
        )


def output_config(output: OutputSchema) -> dict[str, Any] | None:
    """A typed agent's schema as structured outputs, in the subset the API takes (the SDK
    closes objects and moves keywords it lacks into descriptions); None when the schema
    cannot be put that way (e.g. no `type`), and the on-final check alone holds."""
    try:
        schema = anthropic.transform_schema(dict(output.schema))
    except Exception:  # the SDK's own check, which may fail in several ways on a schema
        return None
    return {"format": {"type": "json_schema", "schema": schema}}


def to_messages(messages: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(system, messages): the engine's neutral messages as Messages API turns. Tool results
    (and any later user text) join one user turn, as the API's alternation requires."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message["role"]
        if role == "system":
            system.append(str(message.get("content") or ""))
        elif role == "tool":
            result = {
                "type": "tool_result",
                "tool_use_id": message["call_id"],
                "content": message["content"],
            }
            add("user", [result])
        elif role == "assistant" and message.get("tool_calls"):
            uses = [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["name"],
                    "input": _as_object(call["arguments"]),
                }
                for call in message["tool_calls"]
            ]
            add("assistant", uses)
        else:
            add(role, [{"type": "text", "text": str(message.get("content") or "") or "…"}])
    return "\n\n".join(s for s in system if s), out


def _as_object(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return {}
    return arguments


def to_reply(response: Any) -> ModelReply:
    usage = TokenUsage(
        input_tokens=int(getattr(response.usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(response.usage, "output_tokens", 0) or 0),
    )
    if response.stop_reason == "max_tokens":
        raise ModelError("truncated", "the model's answer was cut at its length limit", usage=usage)
    if response.stop_reason == "refusal":
        raise ModelError("content_filtered", "the model refused to answer", usage=usage)
    uses = [b for b in response.content if getattr(b, "type", None) == "tool_use"]
    texts = [b.text for b in response.content if getattr(b, "type", None) == "text"]
    if uses:
        calls = tuple(ProposedCall(b.id, b.name, b.input) for b in uses)
        return ToolCallsProposal(calls, usage, response.model, "".join(texts) or None)
    return FinalAnswer("".join(texts), usage, response.model)
