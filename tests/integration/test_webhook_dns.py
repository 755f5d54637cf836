"""Webhook names resolved by the service's own resolver, against a fake name server on
loopback (no test depends on real DNS): a name whose servers never answer stalls no other
tenant's delivery and costs no attempt; an attempt our resolver could not make is listed,
not counted, made again only after a wait, and a delivery whose name never resolves
still ends; a name resolving to an address that carries an internal IPv4 (NAT64, 6to4,
Teredo, mapped, compatible) is refused at each delivery."""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any

from sqlalchemy import text

from app.domain.lifecycle.events import EventType
from tests.support.factories import final, run_body
from tests.support.fake_dns import FakeDns, serving_dns
from tests.support.harness import Harness, make_config
from tests.support.webhook_receiver import ADMIN, LOOPBACK, receiving, register, settled

FINISHED = EventType.RUN_FINISHED
HOLE = "http://blackhole.test:9/hook"


async def _harness(
    harness_factory: Any, dns: FakeDns, *, resolve_s: float, schedule: list[float]
) -> Harness:
    webhooks = {"allow": [*LOOPBACK["allow"], "http://*.test:*"], "retry_schedule_s": schedule}
    h: Harness = await harness_factory(
        config=make_config(webhooks=webhooks),
        settings_override={"webhook_dns_servers": dns.server, "webhook_resolve_s": resolve_s},
    )
    return h


async def _finished_run(h: Harness, headers: dict[str, str]) -> None:
    response = await h.client.post("/v1/runs", headers=headers, json=run_body(final("ok")))
    assert response.status_code == 201 and response.json()["status"] == "finished"


async def _rows(h: Harness, tenant: str) -> list[Any]:
    """The tenant's deliveries as stored: attempts counted, attempts listed, and the wait
    until the next one (seconds, on the database's clock)."""
    async with h.runtime.sessions() as session:
        found = await session.execute(
            text(
                "SELECT attempts, attempts_log, "
                "extract(epoch FROM next_attempt_at - now()) AS wait "
                "FROM webhook_delivery WHERE tenant_id = :t ORDER BY created_at"
            ),
            {"t": tenant},
        )
        return list(found.mappings())


async def _until(h: Harness, tenant: str, done: Any, timeout_s: float = 10) -> list[Any]:
    async with asyncio.timeout(timeout_s):
        while True:
            rows = await _rows(h, tenant)
            if done(rows):
                return rows
            await asyncio.sleep(0.05)


async def test_a_black_hole_name_stalls_no_other_tenant_and_costs_no_attempt(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """Four lookups of a name nobody answers at once (the endpoint's cap; the old pool
    of resolver threads had four): another tenant's delivery still goes within 2 s, at
    its first attempt, and the black-holed deliveries keep their retries."""
    async with serving_dns() as dns, receiving() as healthy:
        dns.black_holes = {"blackhole.test"}
        dns.records = {"good.test": ["127.0.0.1"]}
        h = await _harness(harness_factory, dns, resolve_s=2.0, schedule=[30, 30])
        acme = await h.key(roles=ADMIN)
        globex = await h.key(tenant="globex", roles=ADMIN)
        await register(h.client, acme, HOLE, [FINISHED])
        for _ in range(6):
            await _finished_run(h, acme)
        await dns.wait_asked("blackhole.test", 4)  # lookups under way

        port = healthy.url.rsplit(":", 1)[1]
        hook = await register(h.client, globex, f"http://good.test:{port}/hook", [FINISHED])
        loop = asyncio.get_running_loop()
        await _finished_run(h, globex)
        answered = loop.time()
        [got] = await healthy.wait_for(1, timeout_s=5)
        assert got.at - answered < 2.0
        [delivery] = await settled(h.client, globex, hook["id"], 1)
        assert [(a["status_code"], a["counted"]) for a in delivery["attempts"]] == [(204, True)]

        rows = await _until(h, "acme", lambda rows: all(r["attempts_log"] for r in rows))
    assert len(rows) == 6
    for row in rows:
        assert row["attempts"] == 0  # the resolver's time-out is not the endpoint's failure
        assert [a["counted"] for a in row["attempts_log"]] == [False]
        assert "resolver did not answer" in row["attempts_log"][0]["error"]
        assert row["wait"] > 20  # after the schedule's first wait, not at once


async def test_a_resolver_timeout_is_not_counted_nor_retried_at_once_and_the_delivery_ends(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving_dns() as dns:
        dns.black_holes = {"blackhole.test"}
        h = await _harness(harness_factory, dns, resolve_s=0.4, schedule=[0.8, 0.8])
        acme = await h.key(roles=ADMIN)
        hook = await register(h.client, acme, HOLE, [FINISHED])
        await _finished_run(h, acme)

        [row] = await _until(h, "acme", lambda rows: rows and rows[0]["attempts_log"])
        assert row["attempts"] == 0 and row["attempts_log"][0]["counted"] is False
        assert row["wait"] > 0.5  # of the 0.8 s the schedule gives it: not looping hot

        # Deferred as many times as the schedule has waits, then counted: it ends.
        [delivery] = await settled(h.client, acme, hook["id"], 1, timeout_s=20)
    assert delivery["status"] == "failed"
    assert [a["counted"] for a in delivery["attempts"]] == [False, False, True, True, True]
    assert all(a["status_code"] is None for a in delivery["attempts"])
    assert all("resolver did not answer" in a["error"] for a in delivery["attempts"])


#: Names whose only address carries an internal IPv4 address (127.0.0.1, where the
#: receiver listens), or sits in a range refused whatever it carries.
CARRIERS = {
    "nat64.test": "64:ff9b::7f00:1",
    "localnat64.test": "64:ff9b:1::7f00:1",
    "sixtofour.test": "2002:7f00:1::1",
    "teredo.test": "2001:0:5db8:d822::80ff:fffe",
    "mapped.test": "::ffff:127.0.0.1",
    "compatible.test": "::7f00:1",
}


async def test_a_name_resolving_to_an_address_that_carries_an_internal_one_is_refused(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving_dns() as dns, receiving() as receiver:
        dns.records = {name: [address] for name, address in CARRIERS.items()}
        dns.records["good.test"] = ["127.0.0.1"]  # allowed by its literal: delivered
        h = await _harness(harness_factory, dns, resolve_s=2.0, schedule=[0.2, 0.2])
        acme = await h.key(roles=ADMIN)
        port = receiver.url.rsplit(":", 1)[1]
        hooks = {
            name: await register(h.client, acme, f"http://{name}:{port}/{name}", [FINISHED])
            for name in [*CARRIERS, "good.test"]
        }
        await _finished_run(h, acme)
        settled_by = {
            name: (await settled(h.client, acme, hook["id"], 1))[0] for name, hook in hooks.items()
        }
    assert [r.path for r in receiver.received] == ["/good.test"]
    assert settled_by.pop("good.test")["status"] == "succeeded"
    for name, delivery in settled_by.items():
        assert delivery["status"] == "failed", name
        for attempt in delivery["attempts"]:
            assert attempt["counted"] and attempt["status_code"] is None
            shown = ipaddress.ip_address(CARRIERS[name])
            assert f"not allowed ({shown})" in attempt["error"], (name, attempt)
