"""The event hub wakes the right streams, and tells other processes in one coalesced,
bounded notification."""

from __future__ import annotations

import asyncio
import json

from app.engine.events import event_hub
from app.engine.events.event_feeds import Snapshot
from app.engine.events.event_hub import EventHub


async def test_a_commit_wakes_its_tenants_streams_and_that_runs_only() -> None:
    hub = EventHub()
    tenant = hub.subscribe("acme")
    run = hub.subscribe("acme", "run_1")
    other_run = hub.subscribe("acme", "run_2")
    elsewhere = hub.subscribe("globex")
    hub.committed("acme", "run_1")
    assert await tenant.wait(0.5) and await run.wait(0.5)
    assert not await other_run.wait(0.05) and not await elsewhere.wait(0.05)
    # Woken once per wake-up: the next wait waits again.
    assert not await tenant.wait(0.05)
    hub.unsubscribe(run)
    hub.committed("acme", "run_1")
    assert not await run.wait(0.05)


async def test_other_processes_hear_everything_committed_meanwhile_in_one_notification() -> None:
    hub = EventHub()
    sent: list[str] = []

    async def notify(payload: str) -> None:
        sent.append(payload)

    publisher = asyncio.create_task(hub.publish_forever(notify))
    try:
        for i in range(5):
            hub.committed("acme", f"run_{i}")
        await asyncio.sleep(event_hub.COALESCE_S * 4)
        assert len(sent) == 1
        assert sorted(map(tuple, json.loads(sent[0]))) == [("acme", f"run_{i}") for i in range(5)]
        await asyncio.sleep(event_hub.COALESCE_S * 4)
        assert len(sent) == 1  # nothing committed, nothing sent
    finally:
        publisher.cancel()


async def test_a_notification_wakes_the_runs_it_names_and_anything_unreadable_wakes_all() -> None:
    hub = EventHub()
    named = hub.subscribe("acme", "run_1")
    unnamed = hub.subscribe("acme", "run_2")
    hub.on_notification(json.dumps([["acme", "run_1"]]))
    assert await named.wait(0.5) and not await unnamed.wait(0.05)
    for payload in ("", "*", "not json"):
        hub.on_notification(payload)
        assert await named.wait(0.5) and await unnamed.wait(0.5)


def test_a_payload_too_long_for_notify_says_everyone_should_look() -> None:
    few = EventHub.payload([("acme", "run_1")])
    assert json.loads(few) == [["acme", "run_1"]]
    many = EventHub.payload([("acme", f"run_{'x' * 60}{i}") for i in range(200)])
    assert many == event_hub.EVERYTHING


def test_a_snapshot_saw_what_had_ended_when_it_was_taken() -> None:
    snapshot = Snapshot("100:105:101,103")
    assert [x for x in range(98, 108) if snapshot.saw(x)] == [98, 99, 100, 102, 104]
    assert not Snapshot("7:7:").saw(7) and Snapshot("7:7:").saw(6)
