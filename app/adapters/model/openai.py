"""OpenAI-compatible Chat Completions behind the model port (OpenAI, vLLM, Ollama, LiteLLM
proxies, …), through the official `openai` SDK as a typed wire-format client.

The SDK runs on the service's shared `httpx.AsyncClient` with its own retries off: the
executor alone decides retries, timeouts and deadlines. Each call's timeout is the one
the executor gives (min(route timeout, time left)); a cancel cancels the request. Errors
become `ModelError`s with a safe code — never the provider's text, which may echo the
request. The API key comes from the environment variable the route names and goes
nowhere but the request's Authorization header.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import openai
from openai import AsyncOpenAI

from app.adapters.model.sdk import SdkModel
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
from app.domain.tools.specs import ToolSpec

#: JSON Schema keywords OpenAI's strict function calling accepts (a schema with others is
#: sent non-strict).
_STRICT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "enum", "items", "description"}
)
#: What Structured Outputs also takes in a response format: enough for a schema generated
#: from a Pydantic model (`title`, and nested models as `$defs` with `$ref`).
_OUTPUT_KEYWORDS = _STRICT_KEYWORDS | {"title", "$defs", "$ref"}


class OpenAIModel(SdkModel):
    URL_ENV = "OPENAI_BASE_URL"
    SDK = openai

    def sdk(self, **options: Any) -> AsyncOpenAI:
        return AsyncOpenAI(**options)

    async def call(self, request: ModelRequest) -> ModelReply:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": to_messages(request.messages),
            "timeout": request.timeout_s,
        }
        if request.tools:
            arguments["tools"] = [to_function(t) for t in request.tools]
            arguments["parallel_tool_calls"] = True
        if request.output is not None:
            arguments["response_format"] = response_format(request.output)
        if request.max_output_tokens is not None:
            arguments["max_completion_tokens"] = request.max_output_tokens
        return to_reply(await self._sdk.chat.completions.create(**arguments))

    @staticmethod
    def context_too_long(exc: Any) -> bool:
        body = exc.body if isinstance(exc.body, dict) else {}
        code = str(body.get("code") or (body.get("error") or {}).get("code") or "")
        return exc.status_code == 400 and (
            code == "context_length_exceeded" or "context length" in str(exc.message).lower()
        )


def to_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The engine's neutral messages in Chat Completions form."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": message["call_id"], "content": message["content"]}
            )
        elif role == "assistant" and message.get("tool_calls"):
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call["id"],
                            "type": "function",
                            "function": {
                                "name": call["name"],
                                "arguments": _as_text(call["arguments"]),
                            },
                        }
                        for call in message["tool_calls"]
                    ],
                }
            )
        else:
            out.append({"role": role, "content": message.get("content") or ""})
    return out


def _as_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def to_function(spec: ToolSpec) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.input_schema,
    }
    if strict_ok(spec.input_schema):
        function["strict"] = True
    return {"type": "function", "function": function}


def response_format(output: OutputSchema) -> dict[str, Any]:
    """A typed agent's schema as Structured Outputs: strict when strict mode takes the
    schema, else the schema as guidance only (the on-final check decides either way)."""
    schema = dict(output.schema)
    return {
        "type": "json_schema",
        "json_schema": {
            "name": output.name,
            "schema": schema,
            "strict": strict_ok(schema, _OUTPUT_KEYWORDS),
        },
    }


def strict_ok(schema: Any, keywords: frozenset[str] = _STRICT_KEYWORDS) -> bool:
    """Whether strict mode takes this schema: objects closed, with every property
    required, and only `keywords`."""
    if not isinstance(schema, dict) or not set(schema) <= keywords:
        return False
    if not all(strict_ok(d, keywords) for d in schema.get("$defs", {}).values()):
        return False
    if schema.get("type") == "object":
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", [])) != set(properties):
            return False
        return all(strict_ok(p, keywords) for p in properties.values())
    if schema.get("type") == "array":
        return strict_ok(schema.get("items", {}), keywords)
    return True


def to_reply(response: Any) -> ModelReply:
    if not response.choices:
        raise ModelError("malformed_output", "the model answered no choice", retryable=True)
    choice = response.choices[0]
    usage = TokenUsage(
        input_tokens=int(getattr(response.usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(response.usage, "completion_tokens", 0) or 0),
    )
    if choice.finish_reason == "length":
        raise ModelError("truncated", "the model's answer was cut at its length limit", usage=usage)
    if choice.finish_reason == "content_filter":
        raise ModelError(
            "content_filtered", "the provider's content filter stopped the answer", usage=usage
        )
    message = choice.message
    if message.tool_calls:
        calls = tuple(
            ProposedCall(call.id, call.function.name, call.function.arguments)
            for call in message.tool_calls
            if getattr(call, "function", None) is not None
        )
        return ToolCallsProposal(calls, usage, response.model, message.content or None)
    return FinalAnswer(message.content or "", usage, response.model)
