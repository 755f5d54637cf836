from tests.conftest import Harness


async def test_query_then_final(harness: Harness) -> None:
    from app.adapters.builtin_tools.demo_data import seed

    async with harness.runtime.sessions.begin() as s:
        await seed(s, tenant_id="acme", now=harness.runtime.clock.now())
    headers = await harness.key()
    r = await harness.client.post(
        "/v1/runs",
        headers=headers,
        json={
            "agent": "tech-radar",
            "input": "dbs?",
            "script": [
                {
                    "type": "tool_calls",
                    "calls": [
                        {
                            "id": "c1",
                            "name": "search_technologies",
                            "arguments": {"query": "database"},
                        }
                    ],
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
                {"type": "final", "text": "PostgreSQL [source:s1]"},
            ],
        },
    )
    print(r.status_code, r.json())
    assert r.status_code == 201
    body = r.json()
    assert body["status"] == "finished", body
    ev = await harness.client.get(f"/v1/runs/{body['id']}/events", headers=headers)
    print([(e["seq"], e["type"]) for e in ev.json()["items"]])
    calls = await harness.client.get(f"/v1/runs/{body['id']}/calls", headers=headers)
    print(calls.json())
