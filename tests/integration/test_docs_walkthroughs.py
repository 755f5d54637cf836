"""The README's and docs' walk-throughs, run as a reader runs them: `python -m app quickstart`
(what `make run` does) in a folder of its own on a fresh database, then each document's
shell blocks in order in bash, against that one server. Every command must succeed, and
every sample output shown after a command must match, in shape, what the command printed
(see tests/support/doc_shapes.py for what "in shape" means)."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.api.examples import RUN_EXAMPLE, RUN_OUT_EXAMPLE
from tests.support.doc_blocks import ROOT, blocks, documents
from tests.support.doc_shapes import differences
from tests.support.doc_shell import Shell, walk
from tests.support.processes import free_port, server, wait_healthy_sync

#: docs/mcp.md needs an MCP server and a config of its own: test_mcp_walkthrough walks it.
OWN_SERVERS = frozenset({"mcp.md"})
WALKED = [
    p
    for p in documents()
    if p.name not in OWN_SERVERS and any(b.kind in ("run", "run-any-status") for b in blocks(p))
]


@pytest.fixture(scope="module")
def reader() -> Iterator[tuple[Path, str]]:
    """(the reader's folder, the server's origin) after `make run` with no database named:
    the quickstart starts an embedded Postgres in the folder, which the reader's commands
    find there too. A server of its own, as a reader's is: on one shared with other tests,
    their open transactions would hold the tenant's feed back (docs/events.md)."""
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        (where / ".venv").symlink_to(Path(sys.prefix))
        port = free_port()
        # No model provider's key: the live agent's runs end `auth` without a request.
        unset = (
            "TOOLGATE_DATABASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_API_KEY",
            "TOOLGATE_CONFIG",
        )
        with server(["quickstart", "--port", str(port)], {}, unset=unset, cwd=where):
            origin = f"http://127.0.0.1:{port}"
            wait_healthy_sync(origin, timeout_s=120)
            yield where, origin


def test_quickstart_keeps_the_demo_key_where_the_docs_read_it(
    reader: tuple[Path, str],
) -> None:
    kept = json.loads((reader[0] / ".data" / "demo-key.json").read_text())
    assert kept["tenant"] == "demo" and kept["key"].startswith("tg_")


def test_the_run_example_of_the_api_docs_is_what_a_run_answers(
    reader: tuple[Path, str],
) -> None:
    """`/docs` shows RUN_EXAMPLE's answer as RUN_OUT_EXAMPLE: so does a real run."""
    folder, origin = reader
    key = json.loads((folder / ".data" / "demo-key.json").read_text())["key"]
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "openapi-example"}
    answer = httpx.post(f"{origin}/v1/runs", json=RUN_EXAMPLE, headers=headers, timeout=30)
    assert answer.status_code == 201
    assert differences(RUN_OUT_EXAMPLE, answer.json()) == []


@pytest.mark.parametrize("document", WALKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_readers_walk_through(document: Path, reader: tuple[Path, str]) -> None:
    folder, origin = reader
    checked = walk(document, Shell(folder, origin, {}, unset=("TOOLGATE_DATABASE_URL",)))
    assert checked or document.name != "README.md"
