"""A replay's scratch runs are the replay's alone: no service process's poller claims
one (it would step it with its real model routes and the recorded input), and no key
can be made for a scratch tenant."""

from __future__ import annotations

from sqlalchemy import select

from app.db.radar.radar_tables import technology
from app.domain.forensics.replay import SCRATCH_PREFIX
from tests.support.approvals import WRITER, move, parked_run
from tests.support.factories import final, seed_radar, tool_calls
from tests.support.fakes import FakeClock
from tests.support.harness import Harness, make_config
from tests.support.processes import run_cli


async def _kafka(h: Harness, tenant: str) -> str:
    async with h.runtime.sessions() as session:
        found = await session.execute(
            select(technology.c.id).where(
                technology.c.tenant_id == tenant, technology.c.name == "Kafka"
            )
        )
        return str(found.scalar_one())


async def test_the_poller_never_claims_a_scratch_tenants_run(harness_factory) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    config = make_config({"tech-radar": WRITER}, approvals={"preview_ttl_s": 60})
    h = await harness_factory(config=config, clock_=clock, run_driver=False)
    scratch = f"{SCRATCH_PREFIX}0123abcd"
    runs = {}
    for tenant in ("acme", scratch):
        await seed_radar(h, tenant)
        caller = await h.key(tenant=tenant, subject="svc", roles="caller")
        script = tool_calls(move(await _kafka(h, tenant))), final("expired")
        runs[tenant] = await parked_run(h, caller, *script)
    clock.advance(61)  # both previews expire: both runs become runnable, without a lease
    assert await h.driver.poll_once() == 0
    assert await h.driver.poll_once() == 1  # acme's only
    finished = await h.driver.wait("acme", runs["acme"]["id"], 10)
    assert finished.termination_reason == "final"
    left = await h.driver.wait(scratch, runs[scratch]["id"], 0)
    assert left.status != "finished" and left.lease is None


def test_no_key_is_made_for_a_scratch_tenant(database_url: str) -> None:
    env = {"TOOLGATE_DATABASE_URL": database_url}
    args = ("--tenant", f"{SCRATCH_PREFIX}x", "--subject", "s", "--roles", "caller")
    done = run_cli("keys", "create", *args, env=env)
    assert done.returncode == 2 and "replay" in done.stderr
