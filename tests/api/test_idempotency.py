"""Idempotency-Key (SPEC §3.6) on POST /v1/runs and the other POSTs."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import func, select, text

from app.api.schemas.runs import CreateRunIn
from app.db.tables import idempotency_key, run
from app.domain.access.idempotency import fingerprint
from app.domain.tools.specs import Principal
from app.engine.access import idempotency
from app.engine.access.idempotency import Claim
from app.engine.lifecycle.runs import CreateRun, start_run
from tests.support.assertions import assert_problem
from tests.support.factories import final, run_body
from tests.support.fakes import HeldModel
from tests.support.harness import Harness


def raw_client(h: Harness) -> httpx.AsyncClient:
    """A client that sends exactly the headers a test gives (no automatic key)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=h.app), base_url="http://testserver")


async def run_count(h: Harness) -> int:
    async with h.runtime.sessions() as session:
        return (await session.execute(select(func.count()).select_from(run))).scalar_one()


async def post(
    h: Harness, headers: dict[str, str], key: str | None, body: dict[str, Any]
) -> httpx.Response:
    extra = {"Idempotency-Key": key} if key is not None else {}
    async with raw_client(h) as client:
        return await client.post("/v1/runs", headers={**headers, **extra}, json=body)


async def claim_as_another_request(h: Harness, key: str, body: dict[str, Any]) -> Claim:
    """The claim a concurrent POST /v1/runs with this key and body would hold (its
    fingerprint is over the body as validated)."""
    validated = CreateRunIn.model_validate(body).model_dump(mode="json")
    claim = await idempotency.begin(
        h.runtime,
        tenant_id="acme",
        key=key,
        fingerprint=fingerprint("POST", "/v1/runs", validated),
    )
    assert isinstance(claim, Claim)
    return claim


async def test_key_is_required_on_create(harness: Harness) -> None:
    headers = await harness.key()
    response = await post(harness, headers, None, run_body(final("x")))
    assert_problem(response, 400, "idempotency-key-missing", "/v1/runs")
    assert await run_count(harness) == 0


async def test_same_key_same_body_replays_the_first_answer(harness: Harness) -> None:
    headers = await harness.key()
    body = run_body(final("once"))
    first = await post(harness, headers, "k-1", body)
    second = await post(harness, headers, "k-1", body)
    assert first.status_code == second.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json() == first.json()
    assert second.headers["location"] == first.headers["location"]
    assert await run_count(harness) == 1


async def test_quoted_and_bare_forms_are_one_key(harness: Harness) -> None:
    headers = await harness.key()
    body = run_body(final("once"))
    first = await post(harness, headers, '"abc-123"', body)
    second = await post(harness, headers, "abc-123", body)
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json()["id"] == first.json()["id"]


async def test_same_key_other_body_is_refused(harness: Harness) -> None:
    headers = await harness.key()
    await post(harness, headers, "k-2", run_body(final("one")))
    response = await post(harness, headers, "k-2", run_body(final("two")))
    assert_problem(response, 422, "idempotency-key-reused", "/v1/runs")
    assert await run_count(harness) == 1


async def test_a_request_in_flight_answers_409_with_retry_after(harness_factory) -> None:  # type: ignore[no-untyped-def]
    held = HeldModel()
    h = await harness_factory(models={"scripted": held})
    headers = await h.key()
    body = run_body(final("slow"), wait_s=30)
    first = asyncio.create_task(post(h, headers, "k-3", body))
    await asyncio.wait_for(held.started.wait(), 10)  # its run made, it waits on the run
    second = await post(h, headers, "k-3", body)
    assert_problem(second, 409, "idempotency-key-in-flight", "/v1/runs")
    assert int(second.headers["retry-after"]) >= 1
    held.gate.set()
    assert (await first).status_code == 201
    assert await run_count(h) == 1


async def test_refusals_store_nothing_and_the_key_stays_usable(harness: Harness) -> None:
    headers = await harness.key()
    approver = await harness.key(roles="approver")
    refused = [
        await post(harness, headers, "k-4", run_body(final("x"), agent="nobody")),  # 422
        # 404: no such parent run
        await post(harness, headers, "k-4", {**run_body(final("x")), "parent_run_id": "r"}),
        await post(harness, {"Authorization": "Bearer tg_wrong"}, "k-4", run_body(final("x"))),
        await post(harness, approver, "k-4", run_body(final("x"))),  # 403
    ]
    assert [r.status_code for r in refused] == [422, 404, 401, 403]
    async with harness.runtime.sessions() as session:
        stored = (
            await session.execute(select(func.count()).select_from(idempotency_key))
        ).scalar_one()
    assert stored == 0
    ok = await post(harness, headers, "k-4", run_body(final("finally")))
    assert ok.status_code == 201 and "idempotent-replayed" not in ok.headers


async def test_keys_are_scoped_to_the_tenant(harness: Harness) -> None:
    acme = await harness.key(tenant="acme")
    globex = await harness.key(tenant="globex")
    body = run_body(final("x"))
    a = await post(harness, acme, "shared", body)
    b = await post(harness, globex, "shared", body)
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"] and "idempotent-replayed" not in b.headers


async def test_malformed_keys_are_bad_requests(harness: Harness) -> None:
    headers = await harness.key()
    for key in ["x" * 256, "", "has space", "tab\tkey", '"unterminated']:
        response = await post(harness, headers, key, run_body(final("x")))
        assert response.status_code == 400, key
        assert response.json()["code"] in ("bad-request", "idempotency-key-missing"), key
    assert await run_count(harness) == 0
    assert (await post(harness, headers, "x" * 255, run_body(final("x")))).status_code == 201


async def test_an_abandoned_claim_is_taken_over_after_its_lock(harness: Harness) -> None:
    headers = await harness.key()
    body = run_body(final("recovered"))
    await claim_as_another_request(harness, "k-5", body)  # which then crashed
    assert (await post(harness, headers, "k-5", body)).status_code == 409
    harness.travel(harness.runtime.settings.idempotency_lock_s + 1)
    response = await post(harness, headers, "k-5", body)
    assert response.status_code == 201 and response.json()["output"]["text"] == "recovered"
    assert await run_count(harness) == 1


async def test_a_claim_bound_to_a_created_run_never_creates_a_second(harness: Harness) -> None:
    headers = await harness.key()
    body = run_body(final("only one"))
    claim = await claim_as_another_request(harness, "k-6", body)
    # The holder created the run (binding the key in that transaction), then crashed.
    created = (
        await start_run(
            harness.runtime,
            principal=Principal("acme", "svc"),
            request=CreateRun(agent="tech-radar", input=body["input"], script=body["script"]),
            claim=claim,
        )
    ).run
    harness.travel(harness.runtime.settings.idempotency_lock_s + 1)
    response = await post(harness, headers, "k-6", body)
    assert response.status_code == 201 and response.json()["id"] == created.id
    assert response.json()["termination_reason"] == "final"
    assert await run_count(harness) == 1
    replay = await post(harness, headers, "k-6", body)
    assert replay.headers["idempotent-replayed"] == "true" and replay.json()["id"] == created.id


async def test_expired_keys_are_cleared_and_free_again(harness: Harness) -> None:
    headers = await harness.key()
    body = run_body(final("x"))
    first = await post(harness, headers, "k-7", body)
    harness.travel(harness.runtime.settings.idempotency_ttl_s + 1)
    again = await post(harness, headers, "k-7", run_body(final("a new request")))
    assert again.status_code == 201 and again.json()["id"] != first.json()["id"]
    harness.travel(harness.runtime.settings.idempotency_ttl_s + 1)
    assert await idempotency.purge_expired(harness.runtime) == 1
    async with harness.runtime.sessions() as session:
        left = (await session.execute(text("SELECT count(*) FROM idempotency_key"))).scalar_one()
    assert left == 0


async def test_cancel_honours_the_key(harness: Harness) -> None:
    headers = await harness.key()
    created = await post(
        harness, headers, "k-8", run_body(final("slow", delay_ms=20_000), wait_s=0)
    )
    run_id = created.json()["id"]
    async with raw_client(harness) as client:
        first = await client.post(
            f"/v1/runs/{run_id}/cancel", headers={**headers, "Idempotency-Key": "c-1"}
        )
        second = await client.post(
            f"/v1/runs/{run_id}/cancel", headers={**headers, "Idempotency-Key": "c-1"}
        )
        third = await client.post(f"/v1/runs/{run_id}/cancel", headers=headers)
    assert first.status_code == 200 and first.json()["termination_reason"] == "cancelled"
    assert second.status_code == 200 and second.headers["idempotent-replayed"] == "true"
    assert_problem(third, 409, "invalid-state", f"/v1/runs/{run_id}/cancel")


async def test_nan_in_a_body_is_a_bad_request_not_a_crash(harness: Harness) -> None:
    headers = await harness.key()
    raw = (
        '{"agent": "tech-radar", "input": "q", "script": [{"type": "tool_calls", "calls": '
        '[{"id": "c1", "name": "search_technologies", '
        '"arguments": {"query": "x", "limit": NaN}}]}]}'
    )
    async with raw_client(harness) as client:
        response = await client.post(
            "/v1/runs",
            headers={**headers, "Idempotency-Key": "nan-1", "Content-Type": "application/json"},
            content=raw,
        )
    assert response.status_code == 400 and response.json()["code"] == "bad-request"
    assert await run_count(harness) == 0


async def key_rows(h: Harness) -> int:
    async with h.runtime.sessions() as session:
        return (
            await session.execute(select(func.count()).select_from(idempotency_key))
        ).scalar_one()


async def test_refusals_before_the_body_is_read_store_nothing(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(settings_override={"max_body_bytes": 2048})
    headers = {**await h.key(), "Idempotency-Key": "k-9"}
    async with raw_client(h) as client:
        too_large = await client.post("/v1/runs", headers=headers, json=run_body(final("x" * 4000)))
        not_json = await client.post(
            "/v1/runs",
            headers={**headers, "Content-Type": "text/plain"},
            content=b"agent=tech-radar",
        )
        bad_key = await client.post(
            "/v1/runs", headers={**headers, "Idempotency-Key": "a b"}, json=run_body(final("x"))
        )
    assert [too_large.status_code, not_json.status_code, bad_key.status_code] == [413, 415, 400]
    assert await key_rows(h) == 0
    assert (await post(h, await h.key(), "k-9", run_body(final("x")))).status_code == 201


async def test_advance_replays_under_the_same_key(harness: Harness) -> None:
    headers = await harness.key()
    run = (
        await post(harness, headers, "k-10", run_body(final("x", delay_ms=300), wait_s=0))
    ).json()
    async with raw_client(harness) as client:
        first = await client.post(
            f"/v1/runs/{run['id']}/advance",
            headers={**headers, "Idempotency-Key": "a-1"},
            json={"wait_s": 5},
        )
        again = await client.post(
            f"/v1/runs/{run['id']}/advance",
            headers={**headers, "Idempotency-Key": "a-1"},
            json={"wait_s": 5},
        )
        other = await client.post(
            f"/v1/runs/{run['id']}/advance",
            headers={**headers, "Idempotency-Key": "a-1"},
            json={"wait_s": 4},
        )
    assert first.status_code == 200 and first.json()["status"] == "finished"
    assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()
    assert_problem(other, 422, "idempotency-key-reused", f"/v1/runs/{run['id']}/advance")


async def test_a_reused_key_is_reported_before_the_new_bodys_own_errors(harness: Harness) -> None:
    headers = await harness.key()
    first = await post(harness, headers, "k-9", run_body(final("x")))
    assert first.status_code == 201
    # The same key with another, invalid body: the key's misuse is what the client hears.
    reused = await post(harness, headers, "k-9", run_body(final("x"), agent="no-such-agent"))
    assert_problem(reused, 422, "idempotency-key-reused", "/v1/runs")
    # A fresh key with that body is the body's own error, and stores nothing.
    invalid = await post(harness, headers, "k-10", run_body(final("x"), agent="no-such-agent"))
    assert invalid.status_code == 422 and invalid.json()["code"] == "validation-error"
    assert await run_count(harness) == 1


async def test_an_answer_lost_with_the_database_is_stored_once_it_answers(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    held = HeldModel()  # the run goes on past the request's wait
    h = await harness_factory(
        settings_override={"db_pool_size": 1, "db_pool_timeout_s": 0.3}, models={"scripted": held}
    )
    headers = {**(await h.key()), "Idempotency-Key": "lost-1"}
    # The answer is stored at wait_s, while the test holds the pool's only connection.
    body = run_body(final("x"), wait_s=0.5)
    async with raw_client(h) as client:
        request = asyncio.create_task(client.post("/v1/runs", headers=headers, json=body))
        await asyncio.wait_for(held.started.wait(), 10)  # the run is made
        # The pool's only connection is taken while the request stores its answer.
        async with h.app.state.engine.connect() as held:
            await held.execute(text("SELECT 1"))
            first = await request
            await asyncio.sleep(0.3)
        assert first.status_code == 201
        for _ in range(40):  # the owed answer goes in once a connection is free
            again = await client.post("/v1/runs", headers=headers, json=body)
            if again.status_code != 409:
                break
            await asyncio.sleep(0.25)
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()


async def test_the_fingerprint_is_over_the_request_as_validated(harness: Harness) -> None:
    headers = {**(await harness.key()), "Idempotency-Key": "validated-1"}
    script = [{"type": "final", "text": "done"}]
    first = await harness.client.post(
        "/v1/runs", headers=headers, json={"agent": "tech-radar", "input": "q", "script": script}
    )
    assert first.status_code == 201
    # The same request, its defaults written out and a number spelled as a float.
    again = await harness.client.post(
        "/v1/runs",
        headers=headers,
        json={
            "agent": "tech-radar",
            "input": "q",
            "script": [{"type": "final", "text": "done", "delay_ms": 0}],
            "wait_s": 10.0,
            "tools": None,
        },
    )
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    other = await harness.client.post(
        "/v1/runs",
        headers=headers,
        json={"agent": "tech-radar", "input": "another", "script": script},
    )
    assert other.status_code == 422 and other.json()["code"] == "idempotency-key-reused"
