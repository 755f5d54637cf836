"""The committed OpenAPI document is the one the app serves."""

from __future__ import annotations

import json
from pathlib import Path

from app.openapi import openapi_json
from tests.conftest import DEFAULT_AGENT, Harness, make_config

COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


async def test_committed_openapi_equals_the_served_document(harness: Harness) -> None:
    served = (await harness.client.get("/openapi.json")).json()
    assert json.loads(COMMITTED.read_text()) == served, "run `make openapi` and commit the result"


def test_openapi_command_prints_the_committed_document() -> None:
    assert openapi_json() == COMMITTED.read_text()


async def test_document_does_not_depend_on_the_config(harness_factory) -> None:  # type: ignore[no-untyped-def]
    agent = {**DEFAULT_AGENT, "tools": ["get_technology"]}
    h = await harness_factory(config=make_config({"zz-unusual-agent": agent}))
    response = await h.client.get("/openapi.json")
    assert "zz-unusual-agent" not in response.text
    assert response.json() == json.loads(COMMITTED.read_text())
