"""The TypeScript client (clients/typescript, as committed in dist/) against a real server:
its own tests under `node --test` (clients/typescript/test/*.test.js), told where the
service is. They create and wait, park a run that is approved and committed through the
client, retry a create that yields the same run (also while the first request is still in
flight), resume a stream cut in the middle without a gap, verify a webhook and refuse a
forged one, and honour a 503's Retry-After."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from contextlib import suppress
from pathlib import Path

import pytest

from tests.support.client_service import ClientService, client_service
from tests.support.doc_blocks import blocks
from tests.support.processes import ROOT

NODE_TIMEOUT_S = 90.0
TESTS = ROOT / "clients" / "typescript" / "test"


async def _node(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """node's exit code and output. The servers run in this event loop: node runs beside
    it, never blocking it."""
    node = shutil.which("node")
    assert node, "node (18+) is needed for the TypeScript client's tests"
    process = await asyncio.create_subprocess_exec(
        node,
        *args,
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), NODE_TIMEOUT_S)
    except TimeoutError:
        with suppress(ProcessLookupError):
            process.kill()
        out, _ = await process.communicate()
        pytest.fail(f"node took over {NODE_TIMEOUT_S} s:\n{out.decode()[-6000:]}")
    return process.returncode or 0, out.decode()


def _docs_quick_start(service: ClientService, folder: Path) -> Path:
    """docs/clients.md's TypeScript quick start (its first `js` block), as a reader would
    run it: with the package as `npm install ./clients/typescript` gives it, on the test's
    server."""
    block = next(b for b in blocks(ROOT / "docs" / "clients.md") if b.lang == "js")
    package = (ROOT / "clients" / "typescript" / "dist" / "index.js").as_uri()
    script = block.text.replace('"@toolgate/client"', f'"{package}"')
    script = script.replace("http://127.0.0.1:8000", service.url)
    path = folder / "quickstart.mjs"
    path.write_text(script)
    return path


@pytest.mark.timeout(150)
async def test_the_typescript_client_against_the_service(harness_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async with client_service(harness_factory) as service:
        # The files by name: Node 21+ takes a folder for a module, and Node 18 has no
        # --test-concurrency (the tests within a file run one after another anyway).
        files = sorted(str(p.relative_to(ROOT)) for p in TESTS.glob("*.test.js"))
        assert len(files) >= 2, files
        code, output = await _node("--test", *files, env=service.env())
        assert code == 0, output[-8000:]
        # Every test ran: none skipped for want of the service. The summary is TAP's
        # `# skipped 0` when node's output is not a terminal, the spec reporter's
        # `ℹ skipped 0` where that is the default.
        summary = dict(re.findall(r"^(?:#|ℹ) (tests|pass|skipped) (\d+)$", output, re.M))
        assert summary.get("skipped") == "0", output[-8000:]
        assert int(summary.get("tests", 0)) > 0, output[-8000:]
        assert summary.get("pass") == summary.get("tests"), output[-8000:]
        # The stream test's first stream was cut in the middle by the proxy, then resumed.
        assert service.proxy.cuts >= 1, output[-8000:]

        code, printed = await _node(
            str(_docs_quick_start(service, tmp_path)), env={"TOOLGATE_KEY": service.caller}
        )
        assert code == 0, printed
        lines = printed.splitlines()
        assert lines[0] == "finished final PostgreSQL and Redis are in adopt [source:s1]"
        assert lines[1] == "1 run.created" and lines[-1].endswith(" run.finished")
