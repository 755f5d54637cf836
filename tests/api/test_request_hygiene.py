"""Metadata size and echo, limits clamping, and unsupported fields (SPEC §3.1); what no
request may carry in its path, query, headers or body (NUL, lone surrogates, numbers out
of range, a bad Host) answered as a 4xx problem, never a 500."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

import pytest

from tests.support.assertions import assert_problem
from tests.support.factories import final, run_body
from tests.support.harness import Harness


async def test_metadata_up_to_4_kib_is_echoed(harness: Harness) -> None:
    headers = await harness.key()
    metadata = {"ticket": "T-1", "blob": "x" * 3900}
    response = await harness.client.post(
        "/v1/runs", headers=headers, json=run_body(final("ok"), metadata=metadata)
    )
    assert response.status_code == 201 and response.json()["metadata"] == metadata
    again = await harness.client.get(f"/v1/runs/{response.json()['id']}", headers=headers)
    assert again.json()["metadata"] == metadata


async def test_metadata_over_4_kib_is_refused(harness: Harness) -> None:
    headers = await harness.key()
    response = await harness.client.post(
        "/v1/runs", headers=headers, json=run_body(final("ok"), metadata={"blob": "x" * 4100})
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "metadata"


async def test_limits_above_the_caps_are_clamped_and_below_one_refused(harness: Harness) -> None:
    headers = await harness.key()
    response = await harness.client.post(
        "/v1/runs",
        headers=headers,
        json=run_body(
            final("ok"),
            limits={
                "max_steps": 1000,
                "deadline_s": 99999,
                "max_tokens": 10**9,
                "max_cost_usd": 1000,
                "max_tool_calls": 5,
            },
        ),
    )
    assert response.status_code == 201
    assert response.json()["limits"] == {
        "max_steps": 8,
        "deadline_s": 120.0,
        "max_tokens": 50000,
        "max_cost_usd": 1.0,
        "max_tool_calls": 5,
    }
    for field, value in [
        ("max_steps", 0),
        ("max_tokens", -1),
        ("max_tool_calls", 0),
        ("max_cost_usd", 0),
        ("deadline_s", 0),
        ("max_steps", 1.5),
    ]:
        refused = await harness.client.post(
            "/v1/runs", headers=headers, json=run_body(final("ok"), limits={field: value})
        )
        assert refused.status_code == 422, field
        assert refused.json()["errors"][0]["path"] == f"limits.{field}"


async def test_the_run_created_event_says_what_was_asked_and_granted_when_a_cap_lowered_it(
    harness: Harness,
) -> None:
    headers = await harness.key()

    async def created_with(**body: Any) -> dict[str, Any]:
        response = await harness.client.post(
            "/v1/runs", headers=headers, json=run_body(final("ok"), **body)
        )
        assert response.status_code == 201, response.text
        events = await harness.client.get(
            f"/v1/runs/{response.json()['id']}/events", headers=headers
        )
        first = events.json()["items"][0]
        assert first["type"] == "run.created"
        assert first["data"]["limits"] == response.json()["limits"]
        return first["data"]

    asked = {"max_steps": 1000, "deadline_s": 7200, "max_tool_calls": 5}
    data = await created_with(limits=asked)
    assert data["clamped"] == {
        "max_steps": {"asked": 1000, "granted": 8},
        "deadline_s": {"asked": 7200, "granted": 120.0},
    }
    assert data["agent"] == "tech-radar" and data["limits"]["max_tool_calls"] == 5
    within = await created_with(limits={"deadline_s": 60})
    assert set(within) == set(await created_with()) == {"agent", "tools", "limits"}


async def test_a_tool_outside_the_agent_set_cannot_be_chosen(harness: Harness) -> None:
    headers = await harness.key()
    response = await harness.client.post(
        "/v1/runs",
        headers=headers,
        json=run_body(final("ok"), tools=["search_technologies", "move_technology_ring"]),
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "tools.1"
    narrowed = await harness.client.post(
        "/v1/runs", headers=headers, json=run_body(final("ok"), tools=["get_technology"])
    )
    assert narrowed.status_code == 201 and narrowed.json()["tools"] == ["get_technology"]


async def test_a_script_is_only_for_scripted_agents_and_items_are_checked(harness: Harness) -> None:
    headers = await harness.key()
    bad = await harness.client.post(
        "/v1/runs", headers=headers, json=run_body({"type": "final", "text": "x", "surprise": 1})
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["path"].startswith("script.0")
    negative = await harness.client.post(
        "/v1/runs", headers=headers, json=run_body({"type": "final", "text": "x", "delay_ms": -5})
    )
    assert negative.status_code == 422


async def test_script_usage_refuses_unknown_fields(harness: Harness) -> None:
    headers = await harness.key()
    item = {"type": "final", "text": "x", "usage": {"input_tokens": 1, "bogus": 5}}
    response = await harness.client.post("/v1/runs", headers=headers, json=run_body(item))
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "script.0.usage.bogus"


async def test_a_body_on_a_get_is_not_a_media_type_problem(harness: Harness) -> None:
    response = await harness.client.request(
        "GET", "/healthz", content=b"hello", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 200


# -- what no request may carry (the hygiene layer) -----------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/v1/runs/%00",
        "/v1/runs/a%00b/events",
        "/v1/previews/%ED%A0%80",
        "/v1/runs?agent=%00",
        "/v1/runs?agent=x%ED%BF%BF",
        "/v1/events?run_id=%C0%80",
        "/healthz?anything=%00",
    ],
)
async def test_nul_and_lone_surrogates_in_paths_and_queries_are_bad_requests(
    harness: Harness, url: str
) -> None:
    response = await harness.client.get(url, headers=await harness.key())
    assert_problem(response, 400, "bad-request", unquote(url.split("?", 1)[0]))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Authorization", b"Bearer tg_\x00"),
        ("Idempotency-Key", b"key\xed\xa0\x80"),
        ("X-Anything", b"a\x00b"),
        ("Host", b"["),
        ("Host", b"evil.example/path"),
    ],
)
async def test_nul_lone_surrogates_and_bad_hosts_in_headers_are_bad_requests(
    harness: Harness, name: str, value: bytes
) -> None:
    response = await harness.client.get("/healthz", headers={name: value})
    assert_problem(response, 400, "bad-request", "/healthz")


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"input": "\ud800"}, "input"),
        ({"metadata": {"k": "x\udfff"}}, "metadata.k"),
        # pydantic keeps a path's strings in Rust, which has no lone surrogates: U+FFFD
        ({"metadata": {"\ud800": "v"}}, "metadata.\ufffd\ufffd\ufffd"),
        ({"script": [final("\ud800")]}, "script.0.text"),
        ({"limits": {"max_steps": 10**30}}, "limits.max_steps"),
    ],
)
async def test_what_postgres_cannot_store_in_a_body_is_a_validation_error(
    harness: Harness, body: dict[str, Any], path: str
) -> None:
    headers = {**await harness.key(), "Content-Type": "application/json"}
    raw = json.dumps({**run_body(final("ok")), **body})  # ASCII: surrogates as \u escapes
    response = await harness.client.post("/v1/runs", headers=headers, content=raw)
    problem = assert_problem(response, 422, "validation-error", "/v1/runs")
    assert [e["path"] for e in problem["errors"]] == [path]
    assert (await harness.client.get("/v1/runs", headers=headers)).json()["items"] == []


async def test_infinite_numbers_in_a_body_are_validation_errors(harness: Harness) -> None:
    headers = {**await harness.key(), "Content-Type": "application/json"}
    raw = json.dumps(run_body(final("ok"), limits={"deadline_s": 12345})).replace("12345", "1e400")
    response = await harness.client.post("/v1/runs", headers=headers, content=raw)
    problem = assert_problem(response, 422, "validation-error", "/v1/runs")
    assert [e["path"] for e in problem["errors"]] == ["limits.deadline_s"]
