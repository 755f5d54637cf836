"""Two real `serve` processes on one database: a tenant's quota is shared by both, and a
key revoked through one is refused at once by it and, as soon as the revocation's
notification arrives, by the other, which had kept the key's principal."""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.support.factories import final, run_body
from tests.support.processes import cli_out, free_port, server, wait_healthy
from tests.support.waiting import until

CONFIG = """
models:
  scripted: {provider: scripted}
agents:
  tech-radar:
    model: scripted
    tools: [search_technologies]
quotas: {runs_per_minute: 3}
"""


async def test_a_quota_and_a_revocation_hold_across_two_processes(
    own_database: str, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    env = {"TOOLGATE_DATABASE_URL": own_database, "TOOLGATE_CONFIG": str(config)}
    cli_out(env, "db", "upgrade")
    # Principals kept far longer than the test: only a notification makes B forget one.
    env["TOOLGATE_KEY_CACHE_S"] = "300"
    made = cli_out(
        env, "keys", "create", "--tenant", "acme", "--subject", "ops", "--roles", "admin,caller"
    )
    admin = json.loads(made.strip().splitlines()[-1])["key"]

    def key_of(tenant: str) -> str:
        if tenant == "acme":
            return admin
        argv = ("keys", "create", "--tenant", tenant, "--subject", "ops", "--roles", "caller")
        return json.loads(cli_out(env, *argv).strip().splitlines()[-1])["key"]

    engine = create_async_engine(own_database)

    async def minute() -> datetime:
        async with engine.connect() as connection:
            return (await connection.execute(text("SELECT date_trunc('minute', now())"))).one()[0]

    ports = free_port(), free_port()
    with (
        server(["serve", "--port", str(ports[0])], env),
        server(["serve", "--port", str(ports[1])], env),
    ):
        a, b = (f"http://127.0.0.1:{p}" for p in ports)
        await wait_healthy(a)
        await wait_healthy(b)
        headers = {"Authorization": f"Bearer {admin}"}
        async with (
            httpx.AsyncClient(base_url=a, headers=headers, timeout=30) as on_a,
            httpx.AsyncClient(base_url=b, headers=headers, timeout=30) as on_b,
        ):
            try:
                await _quota_is_shared(on_a, on_b, key_of, minute)
            finally:
                await engine.dispose()
            await _revocation_reaches_the_other(on_a, on_b)


async def _quota_is_shared(
    on_a: httpx.AsyncClient,
    on_b: httpx.AsyncClient,
    key_of: Callable[[str], str],
    minute: Callable[[], Awaitable[datetime]],
) -> None:
    body = run_body(final("ok"), wait_s=0)
    # The four requests must fall in one minute of the database's clock. Should a minute
    # begin while they are made (seldom: they take well under a second), they are made
    # again, by another tenant, whose counter that minute has not touched.
    for tenant in ("acme", "initech"):
        auth = {"Authorization": f"Bearer {key_of(tenant)}"}
        began = await minute()
        codes = []
        for client in (on_a, on_b, on_a, on_b):
            headers = {**auth, "Idempotency-Key": secrets.token_hex(8)}
            codes.append((await client.post("/v1/runs", json=body, headers=headers)).status_code)
        if await minute() == began:
            break
    # Three runs a minute for the tenant, whichever process takes them.
    assert codes == [201, 201, 201, 429], codes


async def _revocation_reaches_the_other(on_a: httpx.AsyncClient, on_b: httpx.AsyncClient) -> None:
    made = await on_a.post(
        "/v1/keys", json={"name": "svc", "roles": ["caller"], "scopes": ["radar:read"]}
    )
    assert made.status_code == 201, made.text
    caller = {"Authorization": f"Bearer {made.json()['key']}"}
    for client in (on_a, on_b, on_b):
        assert (await client.get("/v1/me", headers=caller)).status_code == 200
    revoked = await on_a.delete(f"/v1/keys/{made.json()['id']}")
    assert revoked.status_code == 204
    assert (await on_a.get("/v1/me", headers=caller)).status_code == 401

    async def refused_by_b() -> bool:
        return (await on_b.get("/v1/me", headers=caller)).status_code == 401

    await until(refused_by_b, timeout_s=5, what="the revocation reaching the other process")
