"""A client generated from the committed OpenAPI document with openapi-python-client works:
it drives the quick start (a scripted run to its final answer), reads a problem answer, and
follows a list's cursor, against the service over HTTP."""

from __future__ import annotations

import asyncio
import importlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app.config.settings import Settings
from app.main import create_app
from tests.support.backend import serving_app
from tests.support.factories import final, seed_radar, tool_calls
from tests.support.harness import make_config
from tests.support.processes import ROOT

GENERATOR = Path(sys.executable).parent / "openapi-python-client"


def generate(folder: Path) -> Any:
    """The client package, generated into `folder` and imported."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(ROOT / "openapi" / "openapi.json"),
            "--output-path",
            str(folder / "toolgate_client"),
            "--meta",
            "none",
        ],  # fmt: skip
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("toolgate_client")
    finally:
        sys.path.remove(str(folder))


class Operations:
    """The generated package's operations of one tag, imported as they are asked for."""

    def __init__(self, package: str) -> None:
        self.package = package

    def __getattr__(self, name: str) -> Any:
        return importlib.import_module(f"{self.package}.{name}")


@pytest.fixture
async def service(settings: Settings, harness) -> AsyncIterator[tuple[str, str]]:  # type: ignore[no-untyped-def]
    await seed_radar(harness)
    headers = await harness.key()
    app = create_app(settings, config=make_config(), run_driver=False)
    async with serving_app(app, lifespan="on") as url:
        yield url, headers["Authorization"].removeprefix("Bearer ")


# The generator alone may take up to its own 300 s bound on a loaded machine.
@pytest.mark.timeout(360)
async def test_a_generated_client_drives_the_quick_start_a_problem_and_a_cursor(
    service: tuple[str, str], tmp_path: Path
) -> None:
    url, key = service
    client_package = await asyncio.to_thread(generate, tmp_path)
    runs = Operations("toolgate_client.api.runs")
    models = importlib.import_module("toolgate_client.models")
    client = client_package.AuthenticatedClient(base_url=url, token=key)

    body = models.CreateRunIn.from_dict(
        {
            "agent": "tech-radar",
            "input": "Which databases are in adopt?",
            "script": [
                tool_calls(("c1", "search_technologies", {"query": "database"})),
                final("PostgreSQL [source:s1]"),
            ],
        }
    )
    for key_name in ("quick-1", "quick-2"):
        created = await runs.create_run.asyncio_detailed(
            client=client, body=body, idempotency_key=key_name
        )
        assert created.status_code == 201, created.content
        run = created.parsed
        assert isinstance(run, models.RunOut)
        assert run.termination_reason == models.TerminationReason.FINAL
        assert run.output.text == "PostgreSQL [source:s1]"
    advanced = await runs.advance_run.asyncio_detailed(run.id, client=client)
    assert advanced.status_code == 409  # finished: no null body or header needed to ask
    assert isinstance(advanced.parsed, models.Problem)
    assert advanced.parsed.code == "invalid-state"

    refused = await runs.create_run.asyncio_detailed(
        client=client,
        body=models.CreateRunIn.from_dict({"agent": "nope", "input": "x", "script": []}),
        idempotency_key="bad-1",
    )
    assert refused.status_code == 422
    assert isinstance(refused.parsed, models.Problem)
    assert [e.path for e in refused.parsed.errors] == ["agent"]

    first = await runs.list_runs.asyncio(client=client, limit=1)
    assert len(first.items) == 1 and isinstance(first.next_cursor, str)
    rest = await runs.list_runs.asyncio(client=client, limit=1, cursor=first.next_cursor)
    assert len(rest.items) == 1 and rest.items[0].id != first.items[0].id
    events = await runs.list_run_events.asyncio(run.id, client=client)
    assert events.items[-1].type_ == models.EventType.RUN_FINISHED
