"""The clients' rules that need no server: one error class per problem type the service
documents (Python and TypeScript), the retry policy's waits and what it may send twice,
and `Retry-After` read in both its forms."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest
from toolgate_client._async.transport import AsyncRetryTransport
from toolgate_client._shared import env_proxy
from toolgate_client.errors import (
    PROBLEM_CLASSES,
    ProblemError,
    VersionConflict,
    problem_from,
    retry_after_s,
)
from toolgate_client.retry import RetryPolicy, later, replayable
from toolgate_client.streams import HEALTHY_S, Position, StreamBroken

from app.api.problems import PROBLEM_TYPES

ROOT = Path(__file__).resolve().parents[2]


def test_every_problem_type_the_service_documents_has_its_own_error_class() -> None:
    assert set(PROBLEM_CLASSES) == set(PROBLEM_TYPES)
    assert len({cls.__name__ for cls in PROBLEM_CLASSES.values()}) == len(PROBLEM_TYPES)


def test_a_problem_body_becomes_its_class_and_anything_else_a_plain_problem() -> None:
    body = b'{"code": "version-conflict", "status": 409, "detail": "d", "new_preview_id": "prv_2"}'
    error = problem_from(409, body, httpx.Headers())
    assert isinstance(error, VersionConflict) and error.new_preview_id == "prv_2"
    odd = problem_from(502, b"<html>bad gateway</html>", httpx.Headers({"Retry-After": "3"}))
    assert type(odd) is ProblemError and odd.status == 502 and odd.retry_after_s == 3
    newer = problem_from(409, b'{"code": "some-new-code", "detail": "d"}', httpx.Headers())
    assert type(newer) is ProblemError and newer.code == "some-new-code"
    assert error.code == "version-conflict" and odd.code == ""


@pytest.mark.parametrize("attempt", [1, 2, 3, 4])
def test_a_retry_after_is_waited_with_at_most_a_fifth_more(attempt: int) -> None:
    delay = RetryPolicy(max_attempts=5).delay(attempt, 2.0)
    assert delay is not None and 2.0 <= delay <= 2.4


def test_waits_are_bounded_and_attempts_counted() -> None:
    policy = RetryPolicy(max_attempts=3, max_delay_s=10, backoff_s=1)
    assert policy.delay(3, 1.0) is None  # the third attempt was the last
    assert policy.delay(1, 11.0) is None  # longer than the policy waits: the caller decides
    waits = [policy.delay(n, None) for n in (1, 2)]
    assert 0.5 <= waits[0] <= 1 and 1 <= waits[1] <= 2  # doubling, jittered down


def test_only_requests_that_may_be_sent_twice_are_retried() -> None:
    post = httpx.Request("POST", "http://x/v1/runs")
    keyed = httpx.Request("POST", "http://x/v1/runs", headers={"Idempotency-Key": "k"})
    assert not replayable(post) and replayable(keyed)
    assert replayable(httpx.Request("GET", "http://x/v1/runs"))
    in_flight = httpx.Response(409, json={"code": "idempotency-key-in-flight"})
    conflict = httpx.Response(409, json={"code": "version-conflict"})
    assert later(in_flight) and not later(conflict)
    assert later(httpx.Response(503)) and later(httpx.Response(429))
    assert not later(httpx.Response(500)) and not later(httpx.Response(422))


def test_retry_after_is_read_as_seconds_or_as_a_date() -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert retry_after_s(httpx.Headers({"Retry-After": "2"})) == 2
    assert 25 <= (retry_after_s(httpx.Headers({"Retry-After": soon})) or 0) <= 30
    assert retry_after_s(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_s(httpx.Headers()) is None


def test_the_typescript_client_has_a_class_per_problem_type_too() -> None:
    source = (ROOT / "clients/typescript/src/errors.ts").read_text()
    codes = re.findall(r'static override readonly code = "([a-z-]+)";', source)
    assert sorted(codes) == sorted(PROBLEM_TYPES)


def test_a_stream_that_stayed_open_is_not_a_failure_but_short_ones_are() -> None:
    position = Position(dict, {})
    policy = RetryPolicy(max_attempts=3)
    for _ in range(5):  # each connection lived long enough: it goes on for ever
        position.opened(200)
        position.opened_at = time.monotonic() - HEALTHY_S
        assert position.pause(policy) <= 0.1 and position.failures == 0
    position.opened(200)
    position.pause(policy)  # closed at once: the first failure in a row
    position.pause(policy)  # refused: the second
    with pytest.raises(StreamBroken):
        position.pause(policy)  # refused again: the third, and the policy's last
    finished = Position(dict, {})
    assert not finished.opened(204) and finished.finished  # a finished run, nothing after


class CutOnce(httpx.AsyncByteStream):
    def __init__(self, cut: bool) -> None:
        self.cut = cut

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'{"items": ['
        if self.cut:
            raise httpx.ReadError("connection lost in the middle of the answer")
        yield b"]}"


async def test_an_answer_cut_in_the_middle_is_retried_when_the_request_may_be_sent_twice() -> None:
    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.method)
        return httpx.Response(200, stream=CutOnce(cut=len(sent) == 1))

    transport = AsyncRetryTransport(httpx.MockTransport(answer), RetryPolicy(backoff_s=0.01))
    async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
        assert (await client.get("/v1/runs")).json() == {"items": []}
        assert sent == ["GET", "GET"]
        with pytest.raises(httpx.ReadError):  # no key: it may not be sent twice
            sent.clear()
            await client.post("/v1/runs/run_1/cancel")
        assert sent == ["POST"]


def test_the_proxy_comes_from_the_environment_as_httpx_would_take_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "toolgate.internal")
    assert env_proxy("https://api.example.com") == "http://proxy.internal:3128"
    assert env_proxy("https://toolgate.internal") is None
    assert env_proxy("http://api.example.com") is None  # no HTTP_PROXY, no ALL_PROXY
    monkeypatch.setenv("ALL_PROXY", "http://every.internal:3128")
    assert env_proxy("http://api.example.com") == "http://every.internal:3128"
