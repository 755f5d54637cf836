"""PgBouncer in transaction mode in front of the test database: Debian's `pgbouncer`
package (`make test` installs it when it is missing, through scripts/system-packages), one
process per test with a config of its own. A missing pgbouncer fails the test rather than
skipping it."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from tests.support.processes import free_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def _host(database_url: str) -> str:
    url = make_url(database_url)
    return str(url.query.get("host") or url.host or "127.0.0.1")


def _run_as(host: str) -> list[str]:
    """PgBouncer refuses to run as root and drops to another user itself: the owner of the
    server's socket folder (an embedded server's is private to it), else nobody."""
    if os.geteuid() != 0:
        return []
    user = pwd.getpwuid(Path(host).stat().st_uid).pw_name if host.startswith("/") else "nobody"
    return ["-u", user]


def _config(folder: Path, database_url: str, port: int, pool_size: int) -> Path:
    url = make_url(database_url)
    host = _host(database_url)
    user = url.username or "postgres"
    users = folder / "users.txt"
    # With trust, the user must still be listed; its password is what the pooler logs in with.
    users.write_text(f'"{user}" "{url.password or ""}"\n')
    ini = folder / "pgbouncer.ini"
    ini.write_text(
        "[databases]\n"
        f"* = host={host} port={url.port or 5432}\n"
        "[pgbouncer]\n"
        "listen_addr = 127.0.0.1\n"
        f"listen_port = {port}\n"
        "unix_socket_dir =\n"
        "auth_type = trust\n"
        f"auth_file = {users}\n"
        "pool_mode = transaction\n"
        # Few server connections for many clients: every one of them is shared.
        f"default_pool_size = {pool_size}\n"
        "max_client_conn = 500\n"
    )
    return ini


def _wait_listening(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    end = time.monotonic() + 10
    while time.monotonic() < end and process.poll() is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise AssertionError(f"pgbouncer did not start:\n{log.read_text()}")


@contextlib.contextmanager
def pgbouncer(database_url: str, *, pool_size: int = 3) -> Iterator[str]:
    """Yields the URL of `database_url`'s database through a new PgBouncer in transaction
    mode with `pool_size` server connections."""
    assert os.access(PGBOUNCER, os.X_OK), (
        f"{PGBOUNCER} is missing: install Debian's pgbouncer (apt-get install pgbouncer)"
    )
    folder = Path(tempfile.mkdtemp(prefix="toolgate-pgbouncer-"))
    port = free_port()
    ini = _config(folder, database_url, port, pool_size)
    with running(ini, port, _run_as(_host(database_url))):
        url = make_url(database_url).difference_update_query(["host"])
        yield url.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)


@contextlib.contextmanager
def running(ini: Path, port: int, run_as: list[str]) -> Iterator[None]:
    """PgBouncer on `ini` (in a folder of its own), until it listens on `port`; stopped and
    its folder removed at the end."""
    folder = ini.parent
    folder.chmod(0o755)  # readable by the user it runs as
    log = folder / "pgbouncer.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [PGBOUNCER, *run_as, str(ini)], stdout=out, stderr=subprocess.STDOUT
        )
    try:
        _wait_listening(port, process, log)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(folder, ignore_errors=True)


async def prepared_on_servers(pooled_url: str, servers: int) -> dict[int, list[str]]:
    """The named prepared statements left on each of the pooler's server connections (by
    backend pid). `servers` transactions are held open at once, so each is on another
    server connection: with the pool's size, every one of them is seen."""
    url = make_url(pooled_url)
    params = {
        "host": url.host,
        "port": url.port,
        "user": url.username,
        "password": url.password,
        "database": url.database,
        # This look must itself leave nothing behind (unnamed statements only).
        "statement_cache_size": 0,
    }
    connections = [await asyncpg.connect(**params) for _ in range(servers)]
    try:
        found: dict[int, list[str]] = {}
        transactions = [c.transaction() for c in connections]
        for connection, transaction in zip(connections, transactions, strict=True):
            await transaction.start()
            pid = await connection.fetchval("SELECT pg_backend_pid()")
            names = await connection.fetch("SELECT name FROM pg_prepared_statements")
            found[pid] = [row["name"] for row in names]
        for transaction in transactions:
            await transaction.rollback()
        return found
    finally:
        for connection in connections:
            await connection.close()
