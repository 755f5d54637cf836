"""Webhook deliveries to a receiver on loopback started by the test: signed per Standard
Webhooks (verified with the standardwebhooks library), the same `webhook-id` on retries,
a run's events in order, 410 disabling the endpoint, redirects not followed, a name that
resolves to loopback refused, and a rotation's two signatures."""

from __future__ import annotations

import asyncio
import logging

import pytest
from standardwebhooks.webhooks import WebhookVerificationError

from app.domain.lifecycle.events import EventType
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import Harness, make_config
from tests.support.webhook_receiver import (
    ADMIN,
    LOOPBACK,
    Reply,
    deliveries,
    receiving,
    register,
    settled,
)

FINISHED = EventType.RUN_FINISHED
CREATED = EventType.RUN_CREATED


async def _harness(harness_factory, **webhooks) -> Harness:  # type: ignore[no-untyped-def]
    return await harness_factory(config=make_config(webhooks={**LOOPBACK, **webhooks}))


async def _run(h: Harness, headers: dict[str, str], *script: dict) -> dict:
    response = await h.client.post(
        "/v1/runs", headers=headers, json=run_body(*script or (final("ok"),))
    )
    assert response.status_code == 201, response.text
    return response.json()


async def test_a_delivery_is_signed_sent_within_2_s_and_is_the_event_as_the_api_shows_it(
    harness_factory,
) -> None:
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        hook = await register(h.client, headers, receiver.hook(), [CREATED, FINISHED])
        loop = asyncio.get_running_loop()
        run = await _run(h, headers)
        answered = loop.time()
        assert run["status"] == "finished"
        got = await receiver.wait_for(2)
    assert [r.verified(hook["secret"])["type"] for r in got] == [CREATED, FINISHED]
    assert got[1].at - answered < 2.0
    feed = (await h.client.get(f"/v1/events?run_id={run['id']}", headers=headers)).json()
    shown = {item["seq"]: item for item in feed["items"]}
    for r in got:
        assert r.event == shown[r.event["seq"]]
        assert r.id.startswith("msg_") and r.headers["content-type"] == "application/json"
    with pytest.raises(WebhookVerificationError):
        got[0].verified("whsec_" + "A" * 44)


async def test_retries_after_two_500s_keep_the_webhook_id_and_are_listed_with_status_and_latency(
    harness_factory,
) -> None:
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        receiver.script = [Reply(500), Reply(500, delay_s=0.05)]
        hook = await register(h.client, headers, receiver.hook(), [FINISHED])
        await _run(h, headers)
        got = await receiver.wait_for(3)
        [delivery] = await settled(h.client, headers, hook["id"], 1)
    assert len({r.id for r in got}) == 1 and got[0].id == delivery["id"]
    for r in got:
        r.verified(hook["secret"])
    assert delivery["status"] == "succeeded" and delivery["next_attempt_at"] is None
    assert [a["status_code"] for a in delivery["attempts"]] == [500, 500, 204]
    assert all(isinstance(a["latency_ms"], int) for a in delivery["attempts"])
    assert delivery["attempts"][1]["latency_ms"] >= 50


async def test_a_runs_events_arrive_in_order_even_when_one_is_retried(harness_factory) -> None:
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    search = ("c1", "search_technologies", {"query": "db"})
    async with receiving() as receiver:
        receiver.script = [Reply(500), Reply(503)]  # the run's first event fails twice
        await register(h.client, headers, receiver.hook(), [t.value for t in EventType])
        run = await _run(h, headers, tool_calls(search), final("ok"))
        # The run's own timeline: the tenant feed may hold back events while another
        # transaction (a sender's) is open, and would undercount them.
        timeline = await h.client.get(f"/v1/runs/{run['id']}/events?limit=200", headers=headers)
        seqs = [item["seq"] for item in timeline.json()["items"]]
        got = await receiver.wait_for(len(seqs) + 2)
    arrived = [r.event["seq"] for r in got]
    assert arrived == [seqs[0], seqs[0], *seqs]


async def test_410_disables_the_endpoint(harness_factory) -> None:
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        receiver.script = [Reply(410)]
        hook = await register(h.client, headers, receiver.hook(), [FINISHED])
        await _run(h, headers)
        [delivery] = await settled(h.client, headers, hook["id"], 1)
        await _run(h, headers)
        listed = (await h.client.get("/v1/webhooks", headers=headers)).json()["items"]
        # Deliveries are written with the events they carry (the outbox): the second
        # run's events, committed when its request answered, made none for the disabled
        # endpoint, so there is nothing left that could be sent, now or later.
        assert len(await deliveries(h.client, headers, hook["id"])) == 1
    assert delivery["status"] == "failed"
    assert [a["status_code"] for a in delivery["attempts"]] == [410]
    assert len(receiver.received) == 1
    assert listed[0]["disabled_at"] is not None and "410" in listed[0]["disabled_reason"]


async def test_a_redirect_is_a_failed_attempt_and_is_not_followed(harness_factory) -> None:
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        elsewhere = {"Location": receiver.hook("/elsewhere")}
        receiver.script = [Reply(307, headers=elsewhere) for _ in range(3)]
        hook = await register(h.client, headers, receiver.hook(), [FINISHED])
        await _run(h, headers)
        [delivery] = await settled(h.client, headers, hook["id"], 1)
    assert delivery["status"] == "failed"
    assert [a["status_code"] for a in delivery["attempts"]] == [307, 307, 307]
    assert all("redirect" in a["error"] for a in delivery["attempts"])
    assert {r.path for r in receiver.received} == {"/hook"}


async def test_a_name_that_resolves_to_loopback_is_refused_at_delivery(harness_factory) -> None:
    """`localhost` passes the allowlist by name, but its address is loopback, which no
    pattern allows by its literal: the request is never sent (DNS rebinding)."""
    h = await _harness(harness_factory, allow=["http://localhost:*"])
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        port = receiver.url.rsplit(":", 1)[1]
        hook = await register(h.client, headers, f"http://localhost:{port}/hook", [FINISHED])
        await _run(h, headers)
        [delivery] = await settled(h.client, headers, hook["id"], 1)
    assert receiver.received == []
    assert delivery["status"] == "failed" and len(delivery["attempts"]) == 3
    assert all("destination refused" in a["error"] for a in delivery["attempts"])
    assert all(a["status_code"] is None for a in delivery["attempts"])


async def test_a_rotation_signs_with_both_secrets_for_24_hours(harness_factory) -> None:
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        hook = await register(h.client, headers, receiver.hook(), [FINISHED])
        rotated = await h.client.post(f"/v1/webhooks/{hook['id']}/rotate", headers=headers)
        assert rotated.status_code == 200
        new = rotated.json()
        await _run(h, headers)
        [during] = await receiver.wait_for(1)
        h.travel(24 * 3600 + 60)
        await _run(h, headers)
        got = await receiver.wait_for(2)
    assert new["secret"] != hook["secret"] and new["previous_secret_expires_at"] is not None
    assert during.headers["webhook-signature"].count("v1,") == 2
    during.verified(hook["secret"])
    during.verified(new["secret"])
    after = got[1]  # signed at the test's clock, a day ahead: checked without the time
    assert after.headers["webhook-signature"].count("v1,") == 1
    assert after.signed_by(new["secret"]) and not after.signed_by(hook["secret"])
    assert during.signed_by(hook["secret"]) and during.signed_by(new["secret"])


async def test_the_secret_never_appears_after_its_answer(
    harness_factory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        receiver.script = [Reply(500)]
        hook = await register(h.client, headers, receiver.hook(), [FINISHED])
        await _run(h, headers)
        await settled(h.client, headers, hook["id"], 1)
        seen = [
            (await h.client.get("/v1/webhooks", headers=headers)).text,
            (await h.client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=headers)).text,
            caplog.text,
            *(r.body.decode() + str(r.headers) for r in receiver.received),
        ]
    key_part = hook["secret"].removeprefix("whsec_")
    assert all(key_part not in text for text in seen)


async def test_when_a_delivery_fails_for_good_the_later_events_of_its_run_are_not_sent(
    harness_factory,
) -> None:
    """What an endpoint got of a run is a prefix of it, and a dead endpoint costs one
    retry schedule per run, not one per event."""
    h = await _harness(harness_factory)
    headers = await h.key(roles=ADMIN)
    async with receiving() as receiver:
        receiver.script = [Reply(500) for _ in range(20)]
        hook = await register(h.client, headers, receiver.hook(), [t.value for t in EventType])
        run = await _run(h, headers)
        timeline = await h.client.get(f"/v1/runs/{run['id']}/events?limit=200", headers=headers)
        items = await settled(h.client, headers, hook["id"], len(timeline.json()["items"]))
        await asyncio.sleep(0.5)
    by_seq = sorted(items, key=lambda d: d["seq"])
    assert [d["status"] for d in by_seq] == ["failed"] + ["abandoned"] * (len(by_seq) - 1)
    assert [len(d["attempts"]) for d in by_seq] == [3] + [0] * (len(by_seq) - 1)
    assert [r.id for r in receiver.received] == [by_seq[0]["id"]] * 3


async def test_a_stopping_process_hands_its_deliveries_in_flight_back(harness_factory) -> None:
    """Sent again by another process at once, not when the lease (15 + 5 s) lapses."""
    a = await _harness(harness_factory)
    headers = await a.key(roles=ADMIN)
    async with receiving() as receiver:
        receiver.script = [Reply(204, delay_s=60)]
        await register(a.client, headers, receiver.hook(), [FINISHED])
        await _run(a, headers)
        [held] = await receiver.wait_for(1)
        await _harness(harness_factory)  # another process on the same database
        loop = asyncio.get_running_loop()
        stopped = loop.time()
        await a.driver.stop()
        again = (await receiver.wait_for(2, timeout_s=10))[1]
    assert again.id == held.id
    assert again.at - stopped < 5
