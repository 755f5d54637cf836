"""A tenant's quotas (`quotas: {runs_per_minute, daily_cost_usd}`), shared by every
replica: past one, a run is refused `429 quota-exceeded` with `Retry-After`, nothing is
made, and the tenant's other runs and other tenants go on."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, insert, select

from app.db.limits import quotas as quotas_repo
from app.db.limits.quota_tables import tenant_day_cost
from app.db.tables import run
from app.domain.limits.quotas import day_start
from tests.support.approvals import WRITER, move, parked_run, row
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import Harness, make_config

PROBLEM_JSON = "application/problem+json"


async def _runs(h: Harness, tenant: str) -> int:
    async with h.runtime.sessions() as session:
        query = select(func.count()).select_from(run).where(run.c.tenant_id == tenant)
        return int((await session.execute(query)).scalar_one())


async def _at_a_minutes_start(*apps: Harness) -> None:
    """Moves the apps' time to just past the start of a minute on the database's clock, so
    that a test's requests fall in one minute's quota however late in a minute it began."""
    async with apps[0].runtime.sessions() as session:
        now = apps[0].runtime.db_time.now()
        into = (await session.execute(select(func.extract("second", now)))).scalar_one()
    for h in apps:
        h.travel(60 - float(into) + 0.5)


def _assert_quota_refusal(response: Any, *, at_most_s: int) -> int:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    assert response.json()["code"] == "quota-exceeded"
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= at_most_s
    return retry_after


async def test_runs_per_minute_is_shared_by_two_replicas(harness_factory) -> None:  # type: ignore[no-untyped-def]
    config = make_config(quotas={"runs_per_minute": 3})
    first = await harness_factory(config=config)
    second = await harness_factory(config=config)
    await _at_a_minutes_start(first, second)
    headers = await first.key()
    other = await first.key(tenant="globex")
    body = run_body(final("ok"), wait_s=0)

    keyed = {**headers, "Idempotency-Key": "quota-first"}
    answers = [
        await h.client.post("/v1/runs", json=body, headers=k)
        for h, k in ((first, keyed), (second, headers), (first, headers))
    ]
    assert [a.status_code for a in answers] == [201, 201, 201]
    # A replay of an accepted request is answered from its key: it takes no slot.
    replayed = await second.client.post("/v1/runs", json=body, headers=keyed)
    assert replayed.status_code == 201 and replayed.headers["Idempotent-Replayed"] == "true"
    key = {**headers, "Idempotency-Key": "quota-refused"}
    refused = await second.client.post("/v1/runs", json=body, headers=key)
    _assert_quota_refusal(refused, at_most_s=60)
    assert await _runs(first, "acme") == 3  # nothing made
    refused = await first.client.post("/v1/runs", json=body, headers=headers)
    _assert_quota_refusal(refused, at_most_s=60)

    # Another tenant has its own quota.
    assert (await second.client.post("/v1/runs", json=body, headers=other)).status_code == 201

    # The next minute has room again (on the database's clock, the one both share); a
    # refused request's key was not kept, so the same request now goes through.
    first.travel(61)
    again = await first.client.post("/v1/runs", json=body, headers=key)
    assert again.status_code == 201, again.text
    assert await _runs(first, "acme") == 4


async def test_a_days_cost_refuses_new_runs_until_tomorrow(harness_factory) -> None:  # type: ignore[no-untyped-def]
    # 0.1 USD per input token: a run whose model reads 4 tokens costs 0.4 USD.
    config = make_config(quotas={"daily_cost_usd": 0.7}, scripted={"input_cost_per_mtok": 100_000})
    first = await harness_factory(config=config)
    second = await harness_factory(config=config)
    headers = await first.key()
    body = run_body(final("ok", usage=(4, 0)), wait_s=10)

    done = await first.client.post("/v1/runs", json=body, headers=headers)
    assert done.json()["usage"]["cost_usd"] == 0.4, done.text
    # 0.4 spent, under 0.7: one more may start (a run's cost is known only as it goes).
    assert (await second.client.post("/v1/runs", json=body, headers=headers)).status_code == 201
    refused = await second.client.post("/v1/runs", json=body, headers=headers)
    waited = _assert_quota_refusal(refused, at_most_s=24 * 3600)
    assert await _runs(first, "acme") == 2

    first.travel(waited + 1)  # tomorrow, on the service's clock
    assert (await first.client.post("/v1/runs", json=body, headers=headers)).status_code == 201


async def test_replays_and_refused_requests_take_no_slot(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=make_config(quotas={"runs_per_minute": 2}))
    await _at_a_minutes_start(h)
    headers = await h.key()
    body = run_body(final("ok"), wait_s=0)
    keyed = {**headers, "Idempotency-Key": "first"}
    assert (await h.client.post("/v1/runs", json=body, headers=keyed)).status_code == 201
    for _ in range(3):  # replays, answered from the key
        replayed = await h.client.post("/v1/runs", json=body, headers=keyed)
        assert replayed.headers.get("Idempotent-Replayed") == "true", replayed.text
    refused = await h.client.post("/v1/runs", json={**body, "tools": ["nope"]}, headers=headers)
    assert refused.status_code == 422  # refused for its content, before the quota
    # The second slot of the minute is still there.
    assert (await h.client.post("/v1/runs", json=body, headers=headers)).status_code == 201
    _assert_quota_refusal(await h.client.post("/v1/runs", json=body, headers=headers), at_most_s=60)


async def test_a_days_cost_counts_runs_still_going_and_each_finished_run_once(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """The day's cost is the finished runs' running total plus the runs still going: a
    parked run's cost counts, and counts once when it finishes."""
    config = make_config(
        {"tech-radar": WRITER},
        quotas={"daily_cost_usd": 1.0},
        scripted={"input_cost_per_mtok": 100_000},
    )
    h = await harness_factory(config=config)
    await seed_radar(h)
    headers = await h.key()
    kafka = await row(h, "Kafka")
    parks = run_body(tool_calls(move(kafka["id"]), usage=(4, 0)), final("moved"))
    first, second = [await parked_run(h, headers, *parks["script"]) for _ in range(2)]
    assert first["usage"]["cost_usd"] == 0.4 and second["usage"]["cost_usd"] == 0.4
    free = run_body(final("ok"), wait_s=10)
    # 0.8 spent by runs still going, under 1.0.
    assert (await h.client.post("/v1/runs", json=free, headers=headers)).status_code == 201
    cancelled = await h.client.post(f"/v1/runs/{first['id']}/cancel", headers=headers)
    assert cancelled.json()["status"] == "finished", cancelled.text
    # Finished, it is in the day's total, and no longer among the runs going: still 0.8.
    assert (await h.client.post("/v1/runs", json=free, headers=headers)).status_code == 201
    costly = await h.client.post(
        "/v1/runs", json=run_body(final("ok", usage=(4, 0))), headers=headers
    )
    assert costly.json()["usage"]["cost_usd"] == 0.4, costly.text
    # 1.2 now: the next run is refused until tomorrow.
    refused = await h.client.post("/v1/runs", json=free, headers=headers)
    _assert_quota_refusal(refused, at_most_s=24 * 3600)


async def test_the_purge_keeps_the_day_totals_a_quota_may_still_read(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=make_config(quotas={"daily_cost_usd": 1.0}))
    today = day_start(h.runtime.clock.now())
    days = [today - timedelta(days=n) for n in (3, 2, 1, 0)]
    async with h.runtime.sessions.begin() as session:
        await session.execute(
            insert(tenant_day_cost),
            [{"tenant_id": "acme", "day": d.date(), "cost_usd": 1} for d in days],
        )
        await quotas_repo.purge(session, db_time=h.runtime.db_time, today=today)
    async with h.runtime.sessions() as session:
        kept = (await session.execute(select(tenant_day_cost.c.day))).scalars().all()
    assert sorted(kept) == [days[2].date(), days[3].date()]  # yesterday's and today's
