"""Real server processes sharing one database: a delivery whose sender is SIGKILLed while
the receiver holds the request is sent again by the other process, with the same
`webhook-id`, once the dead sender's lease lapses."""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import httpx
import yaml
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.clock import SystemClock
from app.config.files import DEMO_CONFIG_PATH
from app.db.session import make_sessionmaker
from app.domain.lifecycle.events import EventType
from app.engine.access.keys import create_key
from tests.support.factories import final, run_body
from tests.support.processes import free_port, server, wait_healthy
from tests.support.webhook_receiver import LOOPBACK, Reply, receiving, register, settled


def _config_file() -> str:
    """The demo config, with loopback receivers allowed and a 3 s attempt timeout (so a
    dead sender's lease lapses after 3 + 5 s)."""
    config = yaml.safe_load(DEMO_CONFIG_PATH.read_text())
    config["webhooks"] = {**LOOPBACK, "timeout_s": 3}
    path = Path(tempfile.mkdtemp(prefix="toolgate-webhooks-")) / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


async def test_a_delivery_is_sent_again_with_its_id_when_its_sender_is_killed(
    db: AsyncEngine, database_url: str
) -> None:
    _, key = await create_key(
        make_sessionmaker(db),
        SystemClock(),
        tenant_id="acme",
        subject="ops",
        roles=["admin", "caller"],
        scopes=None,
    )
    headers = {"Authorization": f"Bearer {key}"}
    env = {
        "TOOLGATE_DATABASE_URL": database_url,
        "TOOLGATE_CONFIG": _config_file(),
        "TOOLGATE_WEBHOOK_POLL_S": "0.2",
        "TOOLGATE_DRIVER_POLL_S": "0.2",
    }
    port_a, port_b = free_port(), free_port()
    base_a, base_b = f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}"
    async with receiving() as receiver:
        receiver.script = [Reply(204, delay_s=60)]  # the first request is never answered
        with server(["serve", "--port", str(port_a)], env) as a:
            await wait_healthy(base_a)
            async with httpx.AsyncClient(base_url=base_a, timeout=30) as client:
                hook = await register(client, headers, receiver.hook(), [EventType.RUN_FINISHED])
                created = await client.post(
                    "/v1/runs",
                    headers={**headers, "Idempotency-Key": "webhook-kill-1"},
                    json=run_body(final("done")),
                )
                assert created.json()["status"] == "finished", created.text
            [held] = await receiver.wait_for(1, timeout_s=10)
            # Killed mid-delivery, the request in flight (well before its 3 s timeout, so
            # the attempt is never recorded); the other process starts only then, however
            # long a slow machine takes to start it.
            os.killpg(a.pid, signal.SIGKILL)
            a.wait(timeout=10)
            with server(["serve", "--port", str(port_b)], env):
                await wait_healthy(base_b)
                again = (await receiver.wait_for(2, timeout_s=30))[1]
                async with httpx.AsyncClient(base_url=base_b, timeout=30) as client:
                    [delivery] = await settled(client, headers, hook["id"], 1)
    assert again.id == held.id == delivery["id"]
    assert again.verified(hook["secret"]) == held.verified(hook["secret"])
    assert delivery["status"] == "succeeded"
    assert [a["status_code"] for a in delivery["attempts"]] == [204]
