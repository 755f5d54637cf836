"""A scripted run over the API and its calls, as most tests of tools make and read them."""

from __future__ import annotations

from typing import Any

from tests.support.factories import run_body
from tests.support.harness import Harness


async def create(h: Harness, *script: dict[str, Any]) -> dict[str, Any]:
    """A run of the default agent on `script`, created (201) and answered."""
    response = await h.client.post("/v1/runs", headers=await h.key(), json=run_body(*script))
    assert response.status_code == 201, response.text
    return response.json()


async def calls_of(h: Harness, run_id: str) -> list[dict[str, Any]]:
    answer = await h.client.get(f"/v1/runs/{run_id}/calls", headers=await h.key())
    return answer.json()["items"]
