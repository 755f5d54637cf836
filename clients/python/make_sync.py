"""Makes toolgate_client/_sync from toolgate_client/_async with unasync (as httpcore makes
its sync half): the async client is the one written, so the two never drift apart.

    python clients/python/make_sync.py [ROOT]   # writes ROOT/clients/python/toolgate_client/_sync
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import unasync

HERE = Path(__file__).resolve().parent
NAMES = {
    "_async": "_sync",
    "AsyncToolgate": "Toolgate",
    "AsyncRuns": "Runs",
    "AsyncApprovals": "Approvals",
    "AsyncEvents": "Events",
    "AsyncWebhooks": "Webhooks",
    "AsyncRetryTransport": "RetryTransport",
    "AsyncClient": "Client",
    "AsyncHTTPTransport": "HTTPTransport",
    "AsyncBaseTransport": "BaseTransport",
    "asyncio_detailed": "sync_detailed",
    "set_async_httpx_client": "set_httpx_client",
    "handle_async_request": "handle_request",
    "afollow": "follow",
    "aconnect_sse": "connect_sse",
    "aiter_sse": "iter_sse",
    "aread": "read",
    "aclose": "close",
    "asyncio": "time",  # asyncio.sleep is the only use
}


def _check(source: Path) -> None:
    """`asyncio` becomes `time`: right for `asyncio.sleep` only, so nothing else may use it."""
    for path in sorted(source.glob("*.py")):
        others = set(re.findall(r"\basyncio\.(\w+)", path.read_text())) - {"sleep"}
        if others:
            raise SystemExit(f"{path}: asyncio.{sorted(others)[0]} has no sync twin here")


def main(root: Path) -> None:
    source = HERE / "toolgate_client" / "_async"
    _check(source)
    target = root / "clients" / "python" / "toolgate_client" / "_sync"
    shutil.rmtree(target, ignore_errors=True)
    staging = target.parent / "_async_staging" / "_async"
    shutil.copytree(source, staging, ignore=shutil.ignore_patterns("__pycache__"))
    rule = unasync.Rule(str(staging), str(target), additional_replacements=NAMES)
    unasync.unasync_files(sorted(str(p) for p in staging.glob("*.py")), [rule])
    shutil.rmtree(staging.parent)
    for path in sorted(target.glob("*.py")):
        made = path.read_text()
        path.write_text(
            f"# Made from toolgate_client/_async/{path.name} by clients/python/make_sync.py\n"
            f"# (make openapi); edit that file, not this one.\n{made}"
        )
    ruff = [str(Path(sys.executable).parent / "ruff"), "--quiet"]
    config = ["--no-cache", "--config", str(HERE / "pyproject.toml"), str(target)]
    subprocess.run([*ruff, "check", "--fix-only", *config], check=True)
    subprocess.run([*ruff, "format", *config], check=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1])
