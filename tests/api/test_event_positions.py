"""Forged positions: a `Last-Event-ID` that is not plain ASCII digits, and cursors or
event ids that decode to the wrong shape, deeply nested JSON or nothing at all, are
validation errors, never a 500 (nor a stream opened from a misread position)."""

from __future__ import annotations

import base64

import pytest

from app.domain.errors import DomainError
from app.engine.lifecycle.runs import decode_cursor
from tests.support.assertions import assert_problem
from tests.support.factories import final, run_body
from tests.support.harness import Harness

STREAM = {"Accept": "text/event-stream"}


def cursor_of(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


async def finished_run(harness: Harness) -> tuple[dict[str, str], str]:
    headers = await harness.key()
    run = await harness.client.post("/v1/runs", headers=headers, json=run_body(final("x")))
    assert run.json()["status"] == "finished"
    return headers, run.json()["id"]


@pytest.mark.parametrize(
    "last_event_id",
    [
        "²".encode("latin-1"),  # str.isdigit says yes, int() says no
        "¹".encode("latin-1"),
        b"+5",
        b" 5",
        b"5 ",
        b"0x1",
        b"9" * 30,  # past any seq (and bigint)
        b"9" * 5000,  # past what int() reads at all
    ],
)
async def test_a_run_stream_refuses_a_last_event_id_that_is_not_ascii_digits(
    harness: Harness, last_event_id: bytes
) -> None:
    headers, run_id = await finished_run(harness)
    path = f"/v1/runs/{run_id}/events"
    response = await harness.client.get(
        path, headers={**headers, **STREAM, "Last-Event-ID": last_event_id}
    )
    problem = assert_problem(response, 422, "validation-error", path)
    assert [e["path"] for e in problem["errors"]] == ["Last-Event-ID"]


async def test_a_run_stream_still_resumes_from_a_plain_last_event_id(harness: Harness) -> None:
    headers, run_id = await finished_run(harness)
    response = await harness.client.get(
        f"/v1/runs/{run_id}/events", headers={**headers, **STREAM, "Last-Event-ID": "1"}
    )
    assert response.status_code == 200
    assert "id: 1\n" not in response.text and "id: 2\n" in response.text


@pytest.mark.parametrize(
    ("where", "field", "depth"),
    [
        ("header", "Last-Event-ID", 370),
        ("header", "Last-Event-ID", 100_000),  # deeper than json.loads can recurse
        ("after", "after", 370),
        ("after", "after", 2000),
        ("cursor", "cursor", 370),
        ("cursor", "cursor", 2000),
    ],
)
async def test_a_deeply_nested_tenant_event_id_is_a_validation_error(
    harness: Harness, where: str, field: str, depth: int
) -> None:
    headers = await harness.key()
    forged = cursor_of(nested(depth))
    if where == "header":
        response = await harness.client.get(
            "/v1/events", headers={**headers, **STREAM, "Last-Event-ID": forged}
        )
    else:
        response = await harness.client.get(f"/v1/events?{where}={forged}", headers=headers)
    problem = assert_problem(response, 422, "validation-error", "/v1/events")
    assert [e["path"] for e in problem["errors"]] == [field]


@pytest.mark.parametrize(
    "raw",
    [
        nested(370),
        b'["2024-01-01T00:00:00+00:00", "run_\\u0000"]',
        b'["2024-01-01T00:00:00+00:00", "run_\\ud800"]',
        b'["0001-01-01T00:00:00+14:00", "run_x"]',  # year 0 in UTC
        b'["2024-01-01T00:00:00", "run_x"]',  # no time zone
        b'{"a": 1}',
        b"null",
        b"\xff\xfe",
    ],
)
@pytest.mark.parametrize("list_path", ["/v1/runs", "/v1/approvals", "/v1/tools"])
async def test_a_forged_list_cursor_is_a_validation_error(
    harness: Harness, raw: bytes, list_path: str
) -> None:
    response = await harness.client.get(
        f"{list_path}?cursor={cursor_of(raw)}", headers=await harness.key()
    )
    problem = assert_problem(response, 422, "validation-error", list_path)
    assert [e["path"] for e in problem["errors"]] == ["cursor"]


@pytest.mark.parametrize("raw", [nested(100_000), b'"\\u0000"', b'[1, "\\udfff", 1]'])
def test_decoding_a_forged_cursor_refuses_it(raw: bytes) -> None:
    """What the engine decodes is refused there too, whoever passes it on."""
    with pytest.raises(DomainError) as refused:
        decode_cursor(cursor_of(raw))
    assert [e.path for e in refused.value.errors] == ["cursor"]
