"""Typed final output on live routes, against the fake provider on loopback: an
OpenAI-compatible route is asked for Structured Outputs (`response_format` with the
agent's JSON Schema, strict when strict mode takes it) and hears a wrong answer's
validation errors as an observation; an Anthropic route is asked for its structured
output form (`output_config.format`)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.adapters.model.anthropic import AnthropicModel
from app.config.models import ModelRouteConfig
from app.domain.model.replies import ModelRequest
from app.domain.model.typed_output import OutputSchema
from tests.support.fake_openai import FakeOpenAI, says, text
from tests.support.live_model import events_of, live_harness, provider, start

__all__ = ["provider"]  # a fixture: used by name

RING = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ring"],
    "properties": {"ring": {"type": "string", "enum": ["adopt", "trial", "assess", "hold"]}},
}


async def test_an_openai_route_is_asked_for_strict_structured_output_and_hears_errors(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider, {"output_schema": RING})
    provider.answer(text('{"ring": "maybe"}'), text('{"ring": "adopt"}'))
    run = await start(h)

    assert run["termination_reason"] == "final", run
    assert run["output"] == {
        "text": '{"ring": "adopt"}',
        "citations": [],
        "data": {"ring": "adopt"},
    }
    first, second = provider.requests
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "live", "schema": RING, "strict": True},
    }
    assert second["response_format"] == first["response_format"]
    # The rejected answer, then the observation with its validation errors.
    answered, heard = second["messages"][-2:]
    assert answered == {"role": "assistant", "content": '{"ring": "maybe"}'}
    observation = json.loads(heard["content"])
    assert heard["role"] == "user" and observation["code"] == "invalid_output"
    assert "at /ring: 'maybe' is not one of" in observation["message"]
    [rejected] = [e["data"] for e in await events_of(h, run["id"]) if e["type"] == "final.rejected"]
    assert rejected["message"] == observation["message"]


async def test_a_schema_strict_mode_cannot_take_is_sent_as_guidance_only(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    # An optional property and a keyword strict mode lacks: the schema goes, not strict.
    loose = {
        "type": "object",
        "required": ["ring"],
        "properties": {"ring": {"type": "string", "minLength": 4}, "note": {"type": "string"}},
    }
    h = await live_harness(harness_factory, provider, {"output_schema": loose})
    provider.answer(text('{"ring": "hold"}'))
    run = await start(h)

    assert run["output"]["data"] == {"ring": "hold"}
    [request] = provider.requests
    assert request["response_format"]["json_schema"] == {
        "name": "live",
        "schema": loose,
        "strict": False,
    }


async def test_an_untyped_agent_asks_for_no_format(harness_factory, provider: FakeOpenAI) -> None:  # type: ignore[no-untyped-def]
    h = await live_harness(harness_factory, provider)
    provider.answer(text("PostgreSQL"))
    await start(h)
    assert "response_format" not in provider.requests[0]


def _request(output: OutputSchema | None) -> ModelRequest:
    return ModelRequest(
        run_id="run_1",
        step=1,
        attempt=1,
        route="claude",
        instructions="Judge.",
        messages=[{"role": "system", "content": "Judge."}, {"role": "user", "content": "Kafka?"}],
        tools=[],
        timeout_s=5,
        position=0,
        output=output,
    )


async def _anthropic_body(fake: FakeOpenAI, output: OutputSchema | None) -> dict[str, Any]:
    route = ModelRouteConfig(
        provider="anthropic", model="claude-test", base_url=fake.url, api_key_env="TG_KEY"
    )
    fake.answer(says('{"ring": "trial"}'))
    async with httpx.AsyncClient() as client:
        model = AnthropicModel(route, client, environ={"TG_KEY": "sk-ant-test"})
        reply = await model.complete(_request(output))
    assert reply.text == '{"ring": "trial"}'  # type: ignore[union-attr]
    return fake.requests[-1]


async def test_an_anthropic_route_is_asked_for_its_structured_output_form(
    provider: FakeOpenAI,
) -> None:
    body = await _anthropic_body(provider, OutputSchema("ring-judge", RING))
    schema = body["output_config"]["format"]["schema"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert schema["additionalProperties"] is False and schema["required"] == ["ring"]
    assert schema["properties"]["ring"]["enum"] == ["adopt", "trial", "assess", "hold"]

    # Keywords the API lacks move into descriptions (the on-final check still holds them).
    bounded = {**RING, "properties": {"ring": {"type": "string", "maxLength": 6}}}
    body = await _anthropic_body(provider, OutputSchema("ring-judge", bounded))
    described = body["output_config"]["format"]["schema"]["properties"]["ring"]
    assert "maxLength" not in described and "maxLength: 6" in described["description"]


@pytest.mark.parametrize("schema", [{"enum": ["adopt", "hold"]}, {"type": ["string", "null"]}])
async def test_a_schema_the_anthropic_form_cannot_take_is_left_to_the_check(
    provider: FakeOpenAI, schema: dict[str, Any]
) -> None:
    body = await _anthropic_body(provider, OutputSchema("ring-judge", schema))
    assert "output_config" not in body
    assert "output_config" not in await _anthropic_body(provider, None)
