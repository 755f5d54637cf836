"""The built-in radar tools on the per-tenant technology table (SPEC §6)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.tools.builtin.demo_data import seed
from app.adapters.tools.builtin.tech_radar import radar_tools
from app.db.session import make_sessionmaker
from app.domain.ports import ToolContext
from app.domain.tools.specs import Principal, ToolError
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fakes import FakeClock
from tests.support.harness import Harness


def context(tenant: str = "acme") -> ToolContext:
    return ToolContext(
        tenant_id=tenant,
        run_id="run_x",
        step=1,
        call_id="c1",
        operation_id="op_x",
        principal=Principal(tenant, "svc"),
    )


@pytest.fixture
async def tools(db: AsyncEngine) -> dict[str, Any]:
    sessions = make_sessionmaker(db)
    clock = FakeClock()
    async with sessions.begin() as session:
        await seed(session, tenant_id="acme", now=clock.now())
    return radar_tools(sessions, clock)


async def search(tools: dict[str, Any], tenant: str = "acme", **arguments: Any) -> Any:
    return (await tools["search_technologies"].execute(arguments, context(tenant))).output


async def test_search_matches_name_category_or_description_case_insensitively(tools) -> None:  # type: ignore[no-untyped-def]
    by_name = await search(tools, query="postgres")
    assert "PostgreSQL" in [i["name"] for i in by_name["items"]]
    by_category = await search(tools, query="MESSAGING", limit=20)
    assert {i["name"] for i in by_category["items"]} == {"Kafka", "RabbitMQ"}
    by_description = await search(tools, query="event log")
    assert [i["name"] for i in by_description["items"]] == ["Kafka"]
    assert set(by_description["items"][0]) == {"id", "name", "category", "ring", "summary"}


async def test_search_filters_by_ring_limits_to_5_by_default_and_counts_all(tools) -> None:  # type: ignore[no-untyped-def]
    adopt = await search(tools, query="database", ring="adopt")
    assert {i["ring"] for i in adopt["items"]} == {"adopt"}
    everything = await search(tools, query="e")
    assert len(everything["items"]) == 5 and everything["total"] > 5
    two = await search(tools, query="e", limit=2)
    assert len(two["items"]) == 2 and two["total"] == everything["total"]


async def test_search_treats_wildcards_literally(tools) -> None:  # type: ignore[no-untyped-def]
    assert (await search(tools, query="%"))["total"] == 0
    assert (await search(tools, query="_"))["total"] == 0


async def test_get_technology_reads_one_row_with_its_version(tools) -> None:  # type: ignore[no-untyped-def]
    [kafka] = (await search(tools, query="kafka"))["items"]
    result = await tools["get_technology"].execute({"technology_id": kafka["id"]}, context())
    assert result.output["name"] == "Kafka" and result.output["ring"] == "trial"
    assert result.output["version"] == 1 and result.source_version == "1"
    assert result.observed_at and result.observed_at.endswith("Z")


async def test_another_tenants_radar_is_invisible(tools) -> None:  # type: ignore[no-untyped-def]
    [kafka] = (await search(tools, query="kafka"))["items"]
    assert (await search(tools, tenant="globex", query="kafka"))["total"] == 0
    with pytest.raises(ToolError) as refused:
        await tools["get_technology"].execute({"technology_id": kafka["id"]}, context("globex"))
    assert refused.value.code == "not_found" and not refused.value.retryable


async def test_a_run_cannot_read_another_tenants_technology(harness: Harness) -> None:
    await seed_radar(harness, tenant="acme")
    acme, globex = await harness.key(tenant="acme"), await harness.key(tenant="globex")
    found = (
        await harness.client.post(
            "/v1/runs",
            headers=acme,
            json=run_body(
                tool_calls(("c1", "search_technologies", {"query": "kafka"})), final("ok")
            ),
        )
    ).json()
    calls = (await harness.client.get(f"/v1/runs/{found['id']}/calls", headers=acme)).json()
    kafka_id = calls["items"][0]["output"]["items"][0]["id"]
    run = (
        await harness.client.post(
            "/v1/runs",
            headers=globex,
            json=run_body(
                tool_calls(("c1", "get_technology", {"technology_id": kafka_id})), final("none")
            ),
        )
    ).json()
    [call] = (await harness.client.get(f"/v1/runs/{run['id']}/calls", headers=globex)).json()[
        "items"
    ]
    assert call["status"] == "failed" and call["error"]["code"] == "not_found"
    assert call["output"] is None
