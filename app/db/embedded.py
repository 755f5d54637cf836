"""The embedded Postgres (pgserver) used when no TOOLGATE_DATABASE_URL is given.

pgserver listens on a Unix socket only. Start it once in the parent process, before any
worker forks, and hand the URL down through the environment.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

DATABASE = "toolgate"


def pgserver_module() -> ModuleType:
    """pgserver, imported without its platformdirs warning. pgserver keeps a lock file in
    the user's runtime directory; where XDG_RUNTIME_DIR is unset (a container, a cron job,
    `sudo`) platformdirs uses /tmp/runtime-$UID instead, a folder it makes private, and
    warns on import, so on every command. The fallback is what is wanted here, and the
    warning asks the user for nothing they need to do."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
            import pgserver
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "TOOLGATE_DATABASE_URL is unset and the embedded Postgres is not installed: "
            "pip install 'toolgate[embedded]' or set TOOLGATE_DATABASE_URL"
        ) from exc
    return pgserver


def start_embedded(data_dir: Path) -> tuple[str, Any]:
    """Starts (or reuses) the server under `data_dir/pg`; returns (async URL, server)."""
    pgserver = pgserver_module()
    pgdata = (data_dir / "pg").resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(str(pgdata), cleanup_mode="stop")
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
    if "(1 row)" not in exists:
        server.psql(f"CREATE DATABASE {DATABASE};")
    return f"postgresql+asyncpg://postgres@/{DATABASE}?host={pgdata}", server
