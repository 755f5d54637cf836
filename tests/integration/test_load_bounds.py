"""Every bound holds at every moment: a process serves at most TOOLGATE_HTTP_CONCURRENCY
requests at once and refuses the next one at once (503 with Retry-After), an open event
stream holds no request slot, and one tenant cannot take every event stream (429)."""

from __future__ import annotations

import asyncio
import contextlib

import httpx

from tests.support.backend import serving_app
from tests.support.factories import final, run_body, tool_calls
from tests.support.fakes import ProbeTool, probe_spec
from tests.support.harness import Harness
from tests.support.streams import reopens, stream
from tests.support.waiting import until

#: The database pool would make a request wait this long; a refusal must not wait at all.
AT_ONCE_S = 1.0


def held_run(h: Harness, headers: dict[str, str]) -> asyncio.Task[httpx.Response]:
    """A create that stays in flight (waiting for its run) until the probe's gate opens."""
    body = run_body(tool_calls(("c1", "probe", {"q": "x"})), final("done"), wait_s=30)
    return asyncio.create_task(h.client.post("/v1/runs", headers=headers, json=body))


async def test_a_request_past_the_http_bound_is_refused_at_once_and_served_once_slots_free(
    harness_factory,  # type: ignore[no-untyped-def]
) -> None:
    probe = ProbeTool(probe_spec(timeout_s=60), gate=asyncio.Event())
    h = await harness_factory(probe=probe, settings_override={"http_concurrency": 2})
    headers = await h.key()
    retried = {**headers, "Idempotency-Key": "refused-then-retried"}
    try:
        first = held_run(h, headers)
        await until(lambda: probe.executions == 1, timeout_s=20)
        # One request in flight: the second slot is free.
        assert (await h.client.get("/v1/runs", headers=headers)).status_code == 200
        second = held_run(h, headers)
        await until(lambda: probe.executions == 2, timeout_s=20)

        loop = asyncio.get_running_loop()
        started = loop.time()
        refused = await h.client.post("/v1/runs", headers=retried, json=run_body(final("Hi.")))
        assert loop.time() - started < AT_ONCE_S
        assert refused.status_code == 503
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.headers["retry-after"] == "1"
        problem = refused.json()
        assert problem["code"] == "unavailable"
        assert problem["type"].endswith("/problems/unavailable")
        assert problem["trace_id"] and problem["instance"] == "/v1/runs"
        assert (await h.client.get("/v1/runs", headers=headers)).status_code == 503
        # The probes are never refused for load.
        assert (await h.client.get("/healthz")).status_code == 200
        assert (await h.client.get("/readyz")).status_code == 200
    finally:
        probe.gate.set()  # type: ignore[union-attr]
    created = await asyncio.wait_for(asyncio.gather(first, second), 30)
    assert [c.status_code for c in created] == [201, 201]
    assert [c.json()["termination_reason"] for c in created] == ["final", "final"]
    # The refusal stored nothing under its Idempotency-Key: the retry creates the run.
    again = await h.client.post("/v1/runs", headers=retried, json=run_body(final("Hi.")))
    assert again.status_code == 201 and "idempotent-replayed" not in again.headers
    assert again.json()["termination_reason"] == "final"


async def test_an_open_event_stream_holds_no_request_slot(
    harness_factory,  # type: ignore[no-untyped-def]
) -> None:
    h = await harness_factory(settings_override={"http_concurrency": 1})
    headers = await h.key()
    async with (
        serving_app(h.app) as base,
        stream(base, "/v1/events", headers) as (response, _),
    ):
        assert response.status_code == 200
        # The stream's own limit bounds it from here on; ordinary requests go on.
        for _ in range(3):
            assert (await h.client.get("/v1/runs", headers=headers)).status_code == 200


async def test_a_tenant_past_its_stream_share_is_refused_while_another_tenant_streams(
    harness_factory,  # type: ignore[no-untyped-def]
) -> None:
    h = await harness_factory(settings_override={"max_streams": 4})  # a tenant's share: 2
    acme = await h.key()
    globex = await h.key(tenant="globex")
    async with serving_app(h.app) as base:
        async with contextlib.AsyncExitStack() as held:
            for _ in range(2):
                response, _ = await held.enter_async_context(stream(base, "/v1/events", acme))
                assert response.status_code == 200
            refused, _ = await held.enter_async_context(stream(base, "/v1/events", acme))
            assert refused.status_code == 429
            await refused.aread()
            assert refused.headers["content-type"] == "application/problem+json"
            assert refused.json()["code"] == "rate-limited"
            assert refused.headers["retry-after"] == "5"
            # The server has room, and another tenant gets it.
            theirs, _ = await held.enter_async_context(stream(base, "/v1/events", globex))
            assert theirs.status_code == 200

        # Closed streams give their tenant's slots back.
        assert await reopens(base, acme)
