"""Real server processes (`python -m app …` in its own session, killed with its group) and
waiting for them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx

from app.adapters.clock import SystemClock
from app.engine.access.keys import create_key

ROOT = Path(__file__).resolve().parents[2]


async def caller_key(sessions) -> str:  # type: ignore[no-untyped-def]
    _, key = await create_key(
        sessions, SystemClock(), tenant_id="acme", subject="svc", roles=["caller"], scopes=None
    )
    return key


def run_cli(
    *args: str, env: dict[str, str] | None = None, unset: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """`python -m app ARGS` to its end, with `env` over this process's environment."""
    environment = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**environment, **(env or {})},
        timeout=120,
    )


def cli_out(env: dict[str, str], *args: str) -> str:
    """`python -m app ARGS`, which must succeed: what it printed."""
    done = run_cli(*args, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(
    args: list[str], env: dict[str, str], unset: tuple[str, ...] = (), cwd: Path = ROOT
) -> Iterator[subprocess.Popen[bytes]]:
    """`python -m app ARGS` running in `cwd` (where relative paths such as `.data` are)."""
    environment = {k: v for k, v in os.environ.items() if k not in unset}
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", *args],
            cwd=cwd,
            env={**environment, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        process.output = log  # type: ignore[attr-defined]  # for wait_healthy's failure
        try:
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)


async def wait_healthy(
    base: str, timeout_s: float = 60, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Until `base` answers /healthz; with `process` (from `server`), what it printed when
    it ends first or never answers."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    async with httpx.AsyncClient(base_url=base, timeout=2) as client:
        while loop.time() < end:
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get("/healthz")).status_code == 200:
                    return
            if process is not None and process.poll() is not None:
                break
            await asyncio.sleep(0.2)
    said = ""
    if process is not None:
        output = process.output  # type: ignore[attr-defined]
        output.seek(0)
        said = f" (exit {process.poll()}):\n" + output.read().decode(errors="replace")[-3000:]
    raise AssertionError(f"{base} never became healthy{said}")


def wait_healthy_sync(base: str, timeout_s: float = 60) -> None:
    """`wait_healthy` for a test that is not a coroutine."""
    asyncio.run(wait_healthy(base, timeout_s))


async def wait_finished(
    base: str, headers: dict[str, str], run_id: str, timeout_s: float = 60
) -> dict:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    async with httpx.AsyncClient(base_url=base, timeout=5) as client:
        while loop.time() < end:
            body = (await client.get(f"/v1/runs/{run_id}", headers=headers)).json()
            if body["status"] == "finished":
                return body
            await asyncio.sleep(0.2)
    raise AssertionError("the run never finished")
