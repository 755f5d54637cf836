"""Webhooks under contention: a change to a tenant's endpoints is ordered against the
tenant's event writes (an endpoint receives every event committed after its registration
answered; no event write meets an endpoint removed under it), and an endpoint that hangs
holds no more of the senders than its cap, so the others' deliveries still go within 2 s."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.tables import event
from app.db.webhooks import endpoints as webhooks_repo
from app.db.webhooks.tables import webhook_delivery
from app.domain.lifecycle.events import EventType
from tests.support.factories import final, run_body
from tests.support.harness import Harness, make_config
from tests.support.webhook_receiver import ADMIN, LOOPBACK, Reply, receiving, register

FINISHED = EventType.RUN_FINISHED


async def _finished_run(h: Harness, headers: dict[str, str]) -> str:
    response = await h.client.post("/v1/runs", headers=headers, json=run_body(final("ok")))
    assert response.status_code == 201 and response.json()["status"] == "finished"
    return str(response.json()["id"])


async def _write_event(connection: AsyncConnection, tenant: str, run_id: str, seq: int) -> None:
    """An event as the engine writes one (the outbox trigger fires), in `connection`'s
    transaction."""
    await connection.execute(
        insert(event).values(
            tenant_id=tenant,
            run_id=run_id,
            seq=seq,
            last_seq=seq,
            at=func.now(),
            events=[[FINISHED, {}]],
        )
    )


async def _deliveries_of(h: Harness, run_id: str, seq: int) -> int:
    async with h.runtime.sessions() as session:
        count = select(func.count()).where(
            webhook_delivery.c.run_id == run_id, webhook_delivery.c.seq == seq
        )
        return int((await session.execute(count)).scalar_one())


async def _pending(task: asyncio.Task[Any], for_s: float = 0.5) -> bool:
    await asyncio.sleep(for_s)
    return not task.done()


async def test_a_registration_waits_for_the_tenants_event_writes_in_progress(
    harness_factory, db
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=make_config(webhooks=LOOPBACK))
    acme = await h.key(roles=ADMIN)
    globex = await h.key(tenant="globex", roles=ADMIN)
    acme_run, globex_run = await _finished_run(h, acme), await _finished_run(h, globex)
    hook = "http://127.0.0.1:9/hook"
    async with db.connect() as writing:
        await _write_event(writing, "acme", acme_run, 100)  # committed only below
        registering = asyncio.create_task(register(h.client, acme, hook, [FINISHED]))
        assert await _pending(registering)
        # Another tenant's registration and event writes go on meanwhile.
        await register(h.client, globex, hook, [FINISHED])
        async with db.begin() as other:
            await _write_event(other, "globex", globex_run, 100)
        await writing.commit()
    await asyncio.wait_for(registering, 5)
    # Committed before the registration answered: not owed to the endpoint.
    assert await _deliveries_of(h, acme_run, 100) == 0
    await _in_own_transaction(db, acme_run, 101)
    assert await _deliveries_of(h, acme_run, 101) == 1
    assert await _deliveries_of(h, globex_run, 100) == 1


async def test_an_event_write_during_a_registration_waits_for_it_and_is_delivered(
    harness_factory, db
) -> None:  # type: ignore[no-untyped-def]
    """The race this closes: an event statement that began before the registration
    committed, and commits after its answer, would not have seen the endpoint."""
    h = await harness_factory(config=make_config(webhooks=LOOPBACK))
    acme = await h.key(roles=ADMIN)
    run_id = await _finished_run(h, acme)

    async with h.runtime.sessions.begin() as session:
        await webhooks_repo.lock_endpoints(session, "acme", wait_s=5)
        await webhooks_repo.insert_endpoint(
            session,
            webhooks_repo.NewEndpoint(
                tenant_id="acme",
                id="wh_race",
                url="http://127.0.0.1:9/hook",
                events=[FINISHED],
                secret="whsec_" + "A" * 44,
                created_at=h.runtime.clock.now(),
                created_by="test",
            ),
        )
        writing = asyncio.create_task(_in_own_transaction(db, run_id, 100))
        assert await _pending(writing)
    await asyncio.wait_for(writing, 5)
    assert await _deliveries_of(h, run_id, 100) == 1


async def test_an_event_write_meets_no_endpoint_removed_under_it(harness_factory, db) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=make_config(webhooks=LOOPBACK))
    acme = await h.key(roles=ADMIN)
    run_id = await _finished_run(h, acme)
    hook = await register(h.client, acme, "http://127.0.0.1:9/hook", [FINISHED])
    async with db.connect() as writing:
        await _write_event(writing, "acme", run_id, 100)
        removing = asyncio.create_task(h.client.delete(f"/v1/webhooks/{hook['id']}", headers=acme))
        assert await _pending(removing)
        await writing.commit()
    assert (await asyncio.wait_for(removing, 5)).status_code == 204

    # The other order: an event written while a removal is uncommitted waits for it, and
    # then fails on no endpoint that is gone (it would meet its foreign key).
    hook = await register(h.client, acme, "http://127.0.0.1:9/hook", [FINISHED])
    async with h.runtime.sessions.begin() as session:
        await webhooks_repo.lock_endpoints(session, "acme", wait_s=5)
        assert await webhooks_repo.delete_endpoint(session, "acme", hook["id"])
        writing = asyncio.create_task(_in_own_transaction(db, run_id, 101))
        assert await _pending(writing)
    await asyncio.wait_for(writing, 5)
    assert await _deliveries_of(h, run_id, 101) == 0


async def _in_own_transaction(db: AsyncEngine, run_id: str, seq: int) -> None:
    async with db.begin() as connection:
        await _write_event(connection, "acme", run_id, seq)


async def test_a_registration_held_up_past_its_wait_is_answered_503(harness_factory, db) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(
        config=make_config(webhooks=LOOPBACK), settings_override={"webhook_lock_wait_s": 0.3}
    )
    acme = await h.key(roles=ADMIN)
    run_id = await _finished_run(h, acme)
    async with db.connect() as writing:
        await _write_event(writing, "acme", run_id, 100)
        refused = await h.client.post(
            "/v1/webhooks",
            headers=acme,
            json={"url": "http://127.0.0.1:9/hook", "events": [FINISHED]},
        )
        await writing.rollback()
    assert refused.status_code == 503, refused.text
    assert refused.json()["code"] == "unavailable" and refused.headers["Retry-After"] == "1"
    async with h.runtime.sessions() as session:
        endpoints = await session.execute(text("SELECT count(*) FROM webhook_endpoint"))
        assert endpoints.scalar_one() == 0


async def test_a_hanging_endpoint_holds_no_more_than_its_cap_of_the_senders(
    harness_factory, db
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(
        config=make_config(webhooks={**LOOPBACK, "timeout_s": 6}),
        settings_override={"webhook_concurrency": 4, "webhook_endpoint_concurrency": 2},
    )
    acme = await h.key(roles=ADMIN)
    globex = await h.key(tenant="globex", roles=ADMIN)
    async with receiving() as hanging, receiving() as healthy:
        hanging.script = [Reply(delay_s=8) for _ in range(20)]
        await register(h.client, acme, hanging.hook(), [FINISHED])
        for _ in range(6):  # six deliveries due at once to the hanging endpoint
            await _finished_run(h, acme)
        await _the_other_tenant_is_served(h, globex, hanging, healthy)
        assert len(hanging.received) == 2  # its cap, though slots were free for more


async def test_one_tenants_slow_endpoints_leave_the_other_tenants_room(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """Two hanging endpoints of one tenant, each within its own cap, could hold every
    slot of a process; the tenant's share keeps room for the others."""
    h = await harness_factory(
        config=make_config(webhooks={**LOOPBACK, "timeout_s": 6}),
        settings_override={
            "webhook_concurrency": 4,
            "webhook_endpoint_concurrency": 2,
            "webhook_tenant_concurrency": 2,
        },
    )
    acme = await h.key(roles=ADMIN)
    globex = await h.key(tenant="globex", roles=ADMIN)
    async with receiving() as hanging, receiving() as healthy:
        hanging.script = [Reply(delay_s=8) for _ in range(20)]
        for path in ("/a", "/b"):
            await register(h.client, acme, hanging.hook(path), [FINISHED])
        for _ in range(4):  # eight deliveries due at once, four to each endpoint
            await _finished_run(h, acme)
        await _the_other_tenant_is_served(h, globex, hanging, healthy)
        assert len(hanging.received) == 2  # the tenant's share, though slots were free


async def _the_other_tenant_is_served(h, globex, hanging, healthy) -> None:  # type: ignore[no-untyped-def]
    """With the hanging endpoint holding what it may, another tenant's delivery goes out
    at once; then a moment for the hanging one to take more, were it allowed to."""
    await hanging.wait_for(2)
    await register(h.client, globex, healthy.hook(), [FINISHED])
    loop = asyncio.get_running_loop()
    await _finished_run(h, globex)
    answered = loop.time()
    [got] = await healthy.wait_for(1, timeout_s=5)
    assert got.at - answered < 2.0
    await asyncio.sleep(0.5)
