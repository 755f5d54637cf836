"""Lists: filters, limits and cursors of runs, events and calls."""

from __future__ import annotations

from typing import Any

from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import Harness


async def all_pages(h: Harness, headers: dict[str, str], url: str) -> list[list[Any]]:
    """Every page of a list, following next_cursor to its end."""
    pages, cursor = [], None
    while True:
        page = (
            await h.client.get(url + (f"&cursor={cursor}" if cursor else ""), headers=headers)
        ).json()
        pages.append(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages


async def test_runs_are_listed_newest_first_with_a_cursor(harness: Harness) -> None:
    headers = await harness.key()
    created = []
    for i in range(5):
        response = await harness.client.post(
            "/v1/runs", headers=headers, json=run_body(final(f"answer {i}"))
        )
        created.append(response.json()["id"])
    pages = await all_pages(harness, headers, "/v1/runs?limit=2")
    assert all(len(page) <= 2 for page in pages)
    assert [item["id"] for page in pages for item in page] == list(reversed(created))


async def test_runs_filter_by_status_and_agent(harness: Harness) -> None:
    headers = await harness.key()
    done = (
        await harness.client.post("/v1/runs", headers=headers, json=run_body(final("x")))
    ).json()
    slow = (
        await harness.client.post(
            "/v1/runs", headers=headers, json=run_body(final("slow", delay_ms=20_000), wait_s=0)
        )
    ).json()
    running = (await harness.client.get("/v1/runs?status=running", headers=headers)).json()
    finished = (await harness.client.get("/v1/runs?status=finished", headers=headers)).json()
    assert [r["id"] for r in running["items"]] == [slow["id"]]
    assert [r["id"] for r in finished["items"]] == [done["id"]]
    other = (await harness.client.get("/v1/runs?agent=nobody", headers=headers)).json()
    assert other["items"] == []
    bad = await harness.client.get("/v1/runs?status=sleeping", headers=headers)
    assert bad.status_code == 422 and bad.json()["errors"][0]["path"] == "status"
    await harness.client.post(f"/v1/runs/{slow['id']}/cancel", headers=headers)


async def test_events_page_with_after_and_cursor(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = (
        await harness.client.post(
            "/v1/runs",
            headers=headers,
            json=run_body(
                tool_calls(("c1", "search_technologies", {"query": "db"})), final("ok [source:s1]")
            ),
        )
    ).json()
    every = (
        await harness.client.get(f"/v1/runs/{run['id']}/events?limit=200", headers=headers)
    ).json()
    seqs = [e["seq"] for e in every["items"]]
    assert every["next_cursor"] is None and seqs == list(range(1, len(seqs) + 1))
    after = (
        await harness.client.get(f"/v1/runs/{run['id']}/events?after=3", headers=headers)
    ).json()
    assert [e["seq"] for e in after["items"]] == seqs[3:]
    pages = await all_pages(harness, headers, f"/v1/runs/{run['id']}/events?limit=3")
    assert [e["seq"] for page in pages for e in page] == seqs


async def test_calls_page_with_a_cursor(harness: Harness) -> None:
    await seed_radar(harness)
    headers = await harness.key()
    run = (
        await harness.client.post(
            "/v1/runs",
            headers=headers,
            json=run_body(
                tool_calls(*[(f"c{i}", "search_technologies", {"query": "a"}) for i in range(3)]),
                final("ok"),
            ),
        )
    ).json()
    first = (
        await harness.client.get(f"/v1/runs/{run['id']}/calls?limit=2", headers=headers)
    ).json()
    assert [c["call_id"] for c in first["items"]] == ["c0", "c1"] and first["next_cursor"]
    rest = (
        await harness.client.get(
            f"/v1/runs/{run['id']}/calls?limit=2&cursor={first['next_cursor']}", headers=headers
        )
    ).json()
    assert [c["call_id"] for c in rest["items"]] == ["c2"] and rest["next_cursor"] is None


async def test_a_foreign_cursor_is_a_validation_error(harness: Harness) -> None:
    headers = await harness.key()
    response = await harness.client.get("/v1/runs?cursor=not-a-cursor", headers=headers)
    assert response.status_code == 422
    assert response.json()["errors"][0]["path"] == "cursor"


async def test_limit_above_200_is_refused(harness: Harness) -> None:
    headers = await harness.key()
    response = await harness.client.get("/v1/runs?limit=201", headers=headers)
    assert response.status_code == 422 and response.json()["errors"][0]["path"] == "limit"


async def test_tools_and_agents_page_by_name(harness_factory) -> None:  # type: ignore[no-untyped-def]
    from tests.support.harness import DEFAULT_AGENT, make_config

    agents = {name: DEFAULT_AGENT for name in ("a-one", "b-two", "c-three")}
    h = await harness_factory(config=make_config(agents))
    headers = await h.key()
    first = (await h.client.get("/v1/agents?limit=2", headers=headers)).json()
    assert [a["name"] for a in first["items"]] == ["a-one", "b-two"] and first["next_cursor"]
    rest = (
        await h.client.get(f"/v1/agents?limit=2&cursor={first['next_cursor']}", headers=headers)
    ).json()
    assert [a["name"] for a in rest["items"]] == ["c-three"] and rest["next_cursor"] is None
    tools = (await h.client.get("/v1/tools?limit=1", headers=headers)).json()
    assert [t["name"] for t in tools["items"]] == ["get_technology"] and tools["next_cursor"]
