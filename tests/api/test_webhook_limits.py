"""What a tenant may register (SPEC §3.8): no more endpoints than the operator's cap
(`409 invalid-state`, room again once one is deleted), and no URL naming an address a
delivery may not reach — the internal ranges, and the IPv6 ranges that carry an IPv4
address (NAT64, 6to4, Teredo, IPv4-mapped, -compatible, -translated) — unless the
operator's allowlist names that address."""

from __future__ import annotations

import httpx

from app.domain.lifecycle.events import EventType
from tests.support.assertions import assert_problem
from tests.support.harness import Harness, make_config
from tests.support.webhook_receiver import ADMIN

EVENTS = [EventType.RUN_FINISHED]


async def _register(h: Harness, headers: dict[str, str], url: str) -> httpx.Response:
    return await h.client.post("/v1/webhooks", headers=headers, json={"url": url, "events": EVENTS})


async def test_the_endpoint_past_the_tenants_cap_is_refused_409(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(
        config=make_config(webhooks={"allow": ["https://*"], "max_endpoints_per_tenant": 2})
    )
    acme = await h.key(roles=ADMIN)
    made = [await _register(h, acme, f"https://hooks.example.com/{i}") for i in range(2)]
    assert [r.status_code for r in made] == [201, 201]

    refused = await _register(h, acme, "https://hooks.example.com/2")
    body = assert_problem(refused, 409, "invalid-state", "/v1/webhooks")
    assert "2 webhook endpoints" in body["detail"]
    listed = (await h.client.get("/v1/webhooks", headers=acme)).json()["items"]
    assert len(listed) == 2

    # Another tenant has a cap of its own; a deleted endpoint makes room again.
    globex = await h.key(tenant="globex", roles=ADMIN)
    assert (await _register(h, globex, "https://hooks.example.com/g")).status_code == 201
    await h.client.delete(f"/v1/webhooks/{made[0].json()['id']}", headers=acme)
    assert (await _register(h, acme, "https://hooks.example.com/3")).status_code == 201


#: Addresses no delivery may reach, each in a URL the allowlist `https://*` admits.
REFUSED = [
    "127.0.0.1",
    "10.0.0.7",
    "169.254.169.254",
    "[::1]",
    "[::ffff:10.0.0.7]",  # IPv4-mapped
    "[::a00:7]",  # IPv4-compatible (of 10.0.0.7)
    "[::5db8:d822]",  # IPv4-compatible of a public address: the range is refused
    "[::ffff:0:5db8:d822]",  # IPv4-translated (SIIT)
    "[64:ff9b::a00:7]",  # NAT64 of 10.0.0.7
    "[64:ff9b::7f00:1]",  # NAT64 of 127.0.0.1
    "[64:ff9b::a9fe:a9fe]",  # NAT64 of 169.254.169.254
    "[64:ff9b:1::5db8:d822]",  # local-use NAT64: refused whatever it carries
    "[2002:a00:7::1]",  # 6to4 of 10.0.0.7
    "[2002:5db8:d822::1]",  # 6to4 of a public address: the range is refused
    "[2001:0:5db8:d822::f5ff:fff8]",  # Teredo
]


async def test_a_url_naming_an_address_no_delivery_may_reach_is_refused(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=make_config(webhooks={"allow": ["https://*"]}))
    admin = await h.key(roles=ADMIN)
    for host in REFUSED:
        refused = await _register(h, admin, f"https://{host}/hook")
        body = assert_problem(refused, 422, "validation-error", "/v1/webhooks")
        assert [e["path"] for e in body["errors"]] == ["url"], host
    assert (await h.client.get("/v1/webhooks", headers=admin)).json()["items"] == []


async def test_public_nat64_and_mapped_addresses_and_those_allowed_literally_are_taken(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    allow = ["https://*", "https://[2002:a00:7::1]", "https://10.0.0.7"]
    h = await harness_factory(config=make_config(webhooks={"allow": allow}))
    admin = await h.key(roles=ADMIN)
    for host in [
        "[64:ff9b::5db8:d822]",  # NAT64 of 93.184.216.34: judged by that address
        "[::ffff:93.184.216.34]",
        "[2002:a00:7::1]",  # named by the operator
        "10.0.0.7",
        "[2606:4700::1111]",
    ]:
        taken = await _register(h, admin, f"https://{host}/hook")
        assert taken.status_code == 201, (host, taken.text)
