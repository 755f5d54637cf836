"""Every error is an RFC 9457 problem document (SPEC §3.7): the shape, the slug per status,
field paths of validation errors, nothing internal leaked, and the trace id."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from pydantic import SecretStr
from sqlalchemy import exc as sa_exc

from app.api.middleware import is_unavailable
from app.config.settings import Settings
from app.main import create_app
from tests.support.assertions import assert_problem
from tests.support.harness import Harness, make_config

FINAL_ONLY = [{"type": "final", "text": "done"}]


def run_body(**overrides: Any) -> dict[str, Any]:
    return {"agent": "tech-radar", "input": "x", "script": FINAL_ONLY, **overrides}


def idem() -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex}


# -- 400 ----------------------------------------------------------------------------------


async def test_malformed_json_is_bad_request(harness: Harness) -> None:
    headers = {**await harness.key(), **idem(), "Content-Type": "application/json"}
    r = await harness.client.post("/v1/runs", headers=headers, content=b'{"agent": "tech-')
    body = assert_problem(r, 400, "bad-request", "/v1/runs")
    assert "errors" not in body


# -- 401 ----------------------------------------------------------------------------------


async def test_missing_authorization_is_unauthenticated(harness: Harness) -> None:
    r = await harness.client.get("/v1/runs")
    assert_problem(r, 401, "unauthenticated", "/v1/runs")
    assert r.headers["www-authenticate"].lower().startswith("bearer")


@pytest.mark.parametrize(
    "authorization",
    ["Bearer tg_not-a-real-key", "Bearer something-else", "Basic dXNlcjpwYXNz", "Bearer"],
)
async def test_wrong_key_is_unauthenticated(harness: Harness, authorization: str) -> None:
    r = await harness.client.get("/v1/runs", headers={"Authorization": authorization})
    assert_problem(r, 401, "unauthenticated", "/v1/runs")
    assert r.headers["www-authenticate"].lower().startswith("bearer")


async def test_unauthenticated_comes_before_validation(harness: Harness) -> None:
    r = await harness.client.post("/v1/runs", headers=idem(), json={"nonsense": True})
    assert_problem(r, 401, "unauthenticated", "/v1/runs")


# -- 403 ----------------------------------------------------------------------------------


async def test_missing_role_is_forbidden(harness: Harness) -> None:
    headers = {**await harness.key(roles="approver"), **idem()}
    r = await harness.client.post("/v1/runs", headers=headers, json=run_body())
    body = assert_problem(r, 403, "forbidden", "/v1/runs")
    assert "caller" in body["detail"]


# -- 404 / 405 ----------------------------------------------------------------------------


async def test_unknown_route_is_not_found(harness: Harness) -> None:
    r = await harness.client.get("/v1/nope", headers=await harness.key())
    assert_problem(r, 404, "not-found", "/v1/nope")
    r = await harness.client.get("/nothing/here")
    assert_problem(r, 404, "not-found", "/nothing/here")


async def test_unknown_run_is_not_found(harness: Harness) -> None:
    headers = await harness.key()
    for path in ("/v1/runs/run_missing", "/v1/runs/run_missing/events"):
        assert_problem(await harness.client.get(path, headers=headers), 404, "not-found", path)


async def test_wrong_method_is_method_not_allowed(harness: Harness) -> None:
    r = await harness.client.delete("/v1/runs", headers=await harness.key())
    assert_problem(r, 405, "method-not-allowed", "/v1/runs")
    assert {"GET", "POST"} <= {m.strip() for m in r.headers["allow"].split(",")}


# -- 422 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"surprise": 1}, "surprise"),
        ({"limits": {"max_steps": 0}}, "limits.max_steps"),
        ({"limits": {"max_cost_usd": 0}}, "limits.max_cost_usd"),
        ({"limits": {"max_tool_calls": 0}}, "limits.max_tool_calls"),
        ({"limits": {"max_steps": 2, "bogus": 1}}, "limits.bogus"),
        ({"wait_s": 31}, "wait_s"),
        ({"wait_s": -1}, "wait_s"),
        ({"input": ""}, "input"),
        ({"script": [{"type": "final", "text": "ok"}, {"type": "telepathy"}]}, "script.1"),
        ({"script": [{"nope": 1}]}, "script.0"),
        ({"script": "not a list"}, "script"),
    ],
)
async def test_invalid_fields_are_validation_errors(
    harness: Harness, overrides: dict[str, Any], path: str
) -> None:
    headers = {**await harness.key(), **idem()}
    r = await harness.client.post("/v1/runs", headers=headers, json=run_body(**overrides))
    body = assert_problem(r, 422, "validation-error", "/v1/runs")
    errors = body["errors"]
    assert errors, body
    assert all(set(e) == {"path", "message"} for e in errors), errors
    assert all(isinstance(e["message"], str) and e["message"] for e in errors), errors
    assert all(not e["path"].startswith("body") for e in errors), errors
    assert [e["path"] for e in errors] == [path], errors


@pytest.mark.parametrize(
    ("script", "paths"),
    [
        ([{"type": "final"}], ["script.0.text"]),
        ([{"type": "final", "text": "ok", "extra": 1}], ["script.0.extra"]),
        ([{"type": "tool_calls", "calls": [{"id": "c1"}]}], ["script.0.calls.0.name"]),
        (
            [{"type": "tool_calls", "calls": [{"id": "c1", "name": "t", "arguments": 5}]}],
            ["script.0.calls.0.arguments", "script.0.calls.0.arguments"],
        ),
        ([{"type": "error", "code": ""}], ["script.0.code"]),
    ],
)
async def test_script_item_paths_name_the_fields_sent(
    harness: Harness, script: list[dict[str, Any]], paths: list[str]
) -> None:
    """The union member pydantic tried (`final`, `tool_calls`, `str`) is not in the path."""
    headers = {**await harness.key(), **idem()}
    r = await harness.client.post("/v1/runs", headers=headers, json=run_body(script=script))
    body = assert_problem(r, 422, "validation-error", "/v1/runs")
    assert [e["path"] for e in body["errors"]] == paths, body["errors"]


async def test_missing_required_field_is_named(harness: Harness) -> None:
    headers = {**await harness.key(), **idem()}
    r = await harness.client.post("/v1/runs", headers=headers, json={"agent": "tech-radar"})
    body = assert_problem(r, 422, "validation-error", "/v1/runs")
    # Required unless the run continues another (`continue_from`).
    assert [e["path"] for e in body["errors"]] == ["input"]


async def test_unknown_agent_is_a_validation_error(harness: Harness) -> None:
    headers = {**await harness.key(), **idem()}
    r = await harness.client.post("/v1/runs", headers=headers, json=run_body(agent="ghost"))
    body = assert_problem(r, 422, "validation-error", "/v1/runs")
    assert [e["path"] for e in body["errors"]] == ["agent"]


async def test_invalid_query_parameter_is_a_validation_error(harness: Harness) -> None:
    r = await harness.client.get("/v1/runs?limit=0", headers=await harness.key())
    body = assert_problem(r, 422, "validation-error", "/v1/runs")
    assert [e["path"] for e in body["errors"]] == ["limit"]


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"data_policy": ["x"]}, "data_policy"),
    ],
)
async def test_unsupported_request_fields_are_refused(
    harness: Harness, overrides: dict[str, Any], path: str
) -> None:
    headers = {**await harness.key(), **idem()}
    r = await harness.client.post("/v1/runs", headers=headers, json=run_body(**overrides))
    body = assert_problem(r, 422, "validation-error", "/v1/runs")
    assert [e["path"] for e in body["errors"]] == [path]
    listed = await harness.client.get("/v1/runs", headers=await harness.key())
    assert listed.json()["items"] == []  # refused before anything was created


async def test_unsupported_fields_left_null_are_accepted(harness: Harness) -> None:
    headers = {**await harness.key(), **idem()}
    body = run_body(
        parent_run_id=None,
        continue_from=None,
        data_policy=None,
        consistency="latest",
        metadata=None,
    )
    r = await harness.client.post("/v1/runs", headers=headers, json=body)
    assert r.status_code == 201, r.text
    assert r.headers["content-type"].split(";")[0] == "application/json"
    run = r.json()
    assert r.headers["location"] == f"/v1/runs/{run['id']}"
    assert run["status"] == "finished" and run["termination_reason"] == "final", run


# -- 413 / 415 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"]
)
async def test_non_json_body_is_unsupported_media_type(harness: Harness, content_type: str) -> None:
    headers = {**await harness.key(), **idem(), "Content-Type": content_type}
    r = await harness.client.post("/v1/runs", headers=headers, content=b'{"agent": "x"}')
    assert_problem(r, 415, "unsupported-media-type", "/v1/runs")


async def test_body_without_content_type_is_unsupported_media_type(harness: Harness) -> None:
    headers = {**await harness.key(), **idem()}
    r = await harness.client.post("/v1/runs", headers=headers, content=b'{"agent": "x"}')
    assert "content-type" not in r.request.headers
    assert_problem(r, 415, "unsupported-media-type", "/v1/runs")


async def test_json_media_types_with_parameters_are_accepted(harness: Harness) -> None:
    headers = {**await harness.key(), **idem(), "Content-Type": "application/json; charset=utf-8"}
    r = await harness.client.post("/v1/runs", headers=headers, content=json.dumps(run_body()))
    assert r.status_code == 201, r.text


async def test_post_without_body_needs_no_content_type(harness: Harness) -> None:
    headers = await harness.key()
    r = await harness.client.post("/v1/runs/run_missing/advance", headers=headers)
    assert_problem(r, 404, "not-found", "/v1/runs/run_missing/advance")


async def test_oversized_body_is_payload_too_large(harness_factory: Any) -> None:
    harness = await harness_factory(settings_override={"max_body_bytes": 2048})
    headers = {**await harness.key(), **idem()}
    big = run_body(input="x" * 4096)
    r = await harness.client.post("/v1/runs", headers=headers, json=big)
    assert_problem(r, 413, "payload-too-large", "/v1/runs")
    assert (await harness.client.get("/v1/runs", headers=headers)).json()["items"] == []


async def test_chunked_body_over_the_limit_is_payload_too_large(harness_factory: Any) -> None:
    harness = await harness_factory(settings_override={"max_body_bytes": 2048})
    headers = {**await harness.key(), **idem(), "Content-Type": "application/json"}
    payload = json.dumps(run_body(input="x" * 4096)).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(payload), 512):
            yield payload[i : i + 512]

    r = await harness.client.post("/v1/runs", headers=headers, content=chunks())
    assert "content-length" not in r.request.headers
    assert_problem(r, 413, "payload-too-large", "/v1/runs")


# -- 500 ----------------------------------------------------------------------------------


async def test_unexpected_exception_is_internal_and_leaks_nothing(
    settings: Settings, db: Any
) -> None:
    app = create_app(settings, config=make_config(), run_driver=False)

    async def explode() -> None:
        raise RuntimeError("secret SELECT * FROM x")

    app.add_api_route("/v1/boom", explode, methods=["GET"])
    transport = httpx.ASGITransport(app=app)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
    ):
        r = await client.get("/v1/boom")
    body = assert_problem(r, 500, "internal", "/v1/boom")
    for leaked in ("secret", "SELECT", "Traceback", "RuntimeError", "explode", ".py"):
        assert leaked not in r.text, r.text
    assert body["trace_id"]


# -- 503 ----------------------------------------------------------------------------------


async def test_database_down_is_unavailable() -> None:
    settings = Settings(
        database_url=SecretStr("postgresql+asyncpg://postgres@127.0.0.1:1/nope"),
        driver_poll_s=0.2,
    )
    app = create_app(settings, config=make_config())
    transport = httpx.ASGITransport(app=app)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
    ):
        r = await client.get("/v1/runs", headers={"Authorization": "Bearer tg_whatever"})
        body = assert_problem(r, 503, "unavailable", "/v1/runs")
        assert int(r.headers["retry-after"]) > 0
        for leaked in ("127.0.0.1", "nope", "Connection", "Traceback"):
            assert leaked not in body["detail"], body

        health = await client.get("/healthz")
        assert health.status_code == 200
        assert health.json() == {"status": "ok"}

        ready = await client.get("/readyz")
        assert_problem(ready, 503, "unavailable", "/readyz")
        assert int(ready.headers["retry-after"]) > 0


# -- trace id -----------------------------------------------------------------------------


async def test_traceparent_trace_id_is_echoed_in_problems(harness: Harness) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    traceparent = f"00-{trace_id}-00f067aa0ba902b7-01"
    r = await harness.client.get("/v1/runs", headers={"traceparent": traceparent})
    body = assert_problem(r, 401, "unauthenticated", "/v1/runs")
    assert body["trace_id"] == trace_id


@pytest.mark.parametrize(
    "traceparent",
    [
        "garbage",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    ],
)
async def test_invalid_traceparent_gets_a_fresh_trace_id(
    harness: Harness, traceparent: str
) -> None:
    r = await harness.client.get("/v1/nope", headers={"traceparent": traceparent})
    body = assert_problem(r, 404, "not-found", "/v1/nope")
    assert len(body["trace_id"]) == 32 and set(body["trace_id"]) <= set("0123456789abcdef")
    assert body["trace_id"] not in traceparent


async def test_problem_types_are_documented(harness: Harness) -> None:
    r = await harness.client.get("/v1/nope")
    type_uri = r.json()["type"]
    doc = await harness.client.get(type_uri)
    assert doc.status_code == 200, doc.text
    body = doc.json()
    assert body["type"] == type_uri
    assert body["code"] == "not-found" and body["status"] == 404
    assert body["title"] and body["meaning"] and body["action"]
    for slug in ("validation-error", "internal", "unavailable", "method-not-allowed"):
        assert (await harness.client.get(f"/problems/{slug}")).status_code == 200
    assert_problem(
        await harness.client.get("/problems/no-such-slug"),
        404,
        "not-found",
        "/problems/no-such-slug",
    )


async def test_each_request_gets_its_own_trace_id(harness: Harness) -> None:
    first = (await harness.client.get("/v1/nope")).json()["trace_id"]
    second = (await harness.client.get("/v1/nope")).json()["trace_id"]
    assert first != second


class _DriverError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__("driver error")
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("exc", "unavailable"),
    [
        (ConnectionRefusedError(), True),
        (TimeoutError(), True),
        (sa_exc.DBAPIError("SELECT 1", None, _DriverError("53300")), True),  # too many conns
        (sa_exc.DBAPIError("SELECT 1", None, _DriverError("57P01")), True),  # admin shutdown
        (sa_exc.DBAPIError("SELECT 1", None, _DriverError("08006")), True),  # connection lost
        (sa_exc.DBAPIError("SELECT 1", None, _DriverError("42P01")), False),  # a bug: no table
        (sa_exc.IntegrityError("INSERT", None, _DriverError("23505")), False),
        (RuntimeError("boom"), False),
        (KeyError("x"), False),
    ],
)
def test_only_database_outages_count_as_unavailable(exc: Exception, unavailable: bool) -> None:
    assert is_unavailable(exc) is unavailable


SPEC_SLUGS = {
    "bad-request": 400,
    "idempotency-key-missing": 400,
    "unauthenticated": 401,
    "forbidden": 403,
    "not-found": 404,
    "method-not-allowed": 405,
    "invalid-state": 409,
    "idempotency-key-in-flight": 409,
    "preview-mismatch": 409,
    "preview-not-approved": 409,
    "version-conflict": 409,
    "preview-expired": 410,
    "payload-too-large": 413,
    "unsupported-media-type": 415,
    "validation-error": 422,
    "idempotency-key-reused": 422,
    "rate-limited": 429,
    "quota-exceeded": 429,
    "internal": 500,
    "unavailable": 503,
}


@pytest.mark.parametrize(("slug", "status"), sorted(SPEC_SLUGS.items()))
async def test_every_spec_slug_has_a_page(harness: Harness, slug: str, status: int) -> None:
    page = await harness.client.get(f"/problems/{slug}")
    assert page.status_code == 200 and page.headers["content-type"] == "application/json"
    body = page.json()
    assert body["code"] == slug and body["status"] == status
    assert body["type"].endswith(f"/problems/{slug}")
    assert len(body["meaning"]) > 10 and len(body["action"]) > 10
    browser = await harness.client.get(f"/problems/{slug}", headers={"Accept": "text/html"})
    assert browser.status_code == 200 and browser.headers["content-type"].startswith("text/html")
    assert f"<code>{slug}</code>" in browser.text and body["title"] in browser.text
