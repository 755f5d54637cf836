"""A Postgres primary with a streaming-replication standby on this machine, for failover
tests and benchmarks: Debian's Postgres 15 binaries, each server in a temporary folder,
on free ports, listening on 127.0.0.1 only. Optionally a PgBouncer in front of it that is
pointed at the new primary after a failover, as operators do it with a pooler.

    with replicated_pair() as pair:              # the standby streams, listed as `sync`
        url = pair.url()                          # multi-host, target_session_attrs=read-write
        ...                                       # migrate, start the service on `url`, load it
        timings = fail_over(pair)                 # crash the primary, promote the standby
        print(timings.back_at - timings.crashed_at)

    with replicated_pair() as pair, pgbouncer_for(pair) as pooler:
        pooler.url, pooler.session_url            # transaction- and session-mode aliases
        timings = fail_over(pair, pooler=pooler)  # ... and point the pooler at the new primary

The API, all of it blocking (from a coroutine: `await asyncio.to_thread(fail_over, pair)`):

- `replicated_pair(synchronous=True)`: a context manager yielding a `Pair`.
- `Pair.url(database="postgres", libpq=False)`: the service's multi-host URL (the
  driver's form, or libpq's `postgresql://u@h1:p1,h2:p2/db?...`); `Pair.primary` and
  `Pair.standby` are `Node`s (`.port`, `.host`, `.sql(query)` through psql, `.log`);
  `Pair.crash_primary()`, `Pair.promote()` (returns once the standby accepts writes).
- `fail_over(pair, down_s=0.0, pooler=None) -> Failover`: crash, `down_s` without a
  primary, promote (and repoint `pooler`); its times are `time.monotonic()` values (the
  clock of asyncio's `loop.time()` too).
- `pgbouncer_for(pair)`: a context manager yielding a `Pooler` (`.url`, `.session_url`,
  `.point_at(node)`: rewrite its config and `RELOAD;`).

The database is `postgres`, the user `postgres` (trust); nothing is created in it.

Synchronous replication (`synchronous=True`, the default) is set on the primary only,
after the base backup, so that a promoted standby, which has no standby of its own, does
not wait on one at every commit. With it, a commit is acknowledged only once the standby
has flushed it (`synchronous_commit=on`): nothing acknowledged is lost by the crash.
Both servers run with `fsync=off` (start-up in a second or two): a crash here is the
server process's, not the machine's, so what was written stays in the page cache.

As root (Postgres refuses to run as root) the servers run as the `postgres` user, and
PgBouncer drops to `nobody`. Whatever was started is stopped and its folder removed when
the context ends, however it ends (and at interpreter exit, as a last resort).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.pgbouncer import running
from tests.support.processes import free_port

BIN = Path(os.environ.get("TOOLGATE_PG_BIN", "/usr/lib/postgresql/15/bin"))
#: The standby's name, as the primary lists it (pg_stat_replication, synchronous_standby_names).
STANDBY_NAME = "standby"
USER = "postgres"
#: Servers started and not yet stopped, stopped at exit if a test left them behind.
_RUNNING: set[Path] = set()


def _as_owner(command: list[str]) -> list[str]:
    """`command` as the `postgres` user when this process is root."""
    return ["runuser", "-u", USER, "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str], timeout_s: float = 60) -> str:
    done = subprocess.run(
        _as_owner(command), capture_output=True, text=True, timeout=timeout_s, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:2])} failed: {done.stderr[-2000:]}")
    return done.stdout


@dataclass(frozen=True)
class Node:
    """One server: its data folder, its port (on 127.0.0.1) and its log file."""

    name: str
    data: Path
    port: int
    log: Path

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def sql(self, query: str, database: str = "postgres", timeout_s: float = 10) -> str:
        """The result of `query` (psql's unaligned, tuples-only output), stripped."""
        command = [str(BIN / "psql"), "-X", "-q", "-tA", "-h", "127.0.0.1"]
        command += ["-p", str(self.port), "-U", USER, "-d", database, "-c", query]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: {done.stderr.strip()}")
        return done.stdout.strip()

    def answers(self, query: str, database: str = "postgres") -> str | None:
        """`sql(query)`, or None while the server does not answer it."""
        try:
            return self.sql(query, database, timeout_s=5)
        except (RuntimeError, subprocess.TimeoutExpired):
            return None

    def start(self, folder: Path) -> None:
        options = f"-p {self.port} -h 127.0.0.1 -k {folder}"
        _run(
            [str(BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w"]
            + ["-o", options, "start"]
        )
        _RUNNING.add(self.data)

    def stop(self, mode: str = "fast") -> None:
        """Stops the server (`immediate`: a crash); nothing when it is not running."""
        if (self.data / "postmaster.pid").exists():
            _run([str(BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])
        _RUNNING.discard(self.data)


@dataclass
class Pair:
    """A primary and its standby (after `promote`, the standby is the primary)."""

    folder: Path
    primary: Node
    standby: Node
    synchronous: bool

    def url(self, database: str = "postgres", *, libpq: bool = False) -> str:
        """The multi-host URL of both servers, the primary first, for the service
        (`target_session_attrs=read-write`: a connection lands on whichever accepts
        writes). `libpq=True`: the form operators write, `postgresql://u@h1:p1,h2:p2/db`;
        else the SQLAlchemy asyncpg dialect's `?host=h1:p1&host=h2:p2`."""
        hosts = [self.primary.host, self.standby.host]
        attrs = "target_session_attrs=read-write"
        if libpq:
            return f"postgresql://{USER}@{','.join(hosts)}/{database}?{attrs}"
        query = "&".join(f"host={h}" for h in hosts)
        return f"postgresql+asyncpg://{USER}@/{database}?{query}&{attrs}"

    def crash_primary(self) -> float:
        """`pg_ctl stop -m immediate` on the primary; when it was down (time.monotonic)."""
        self.primary.stop("immediate")
        return time.monotonic()

    def promote(self, timeout_s: float = 30) -> float:
        """Promotes the standby and waits until it accepts writes; when it did
        (time.monotonic)."""
        _run([str(BIN / "pg_ctl"), "-D", str(self.standby.data), "-w", "promote"])
        end = time.monotonic() + timeout_s
        while self.standby.answers("SELECT pg_is_in_recovery()") != "f":
            if time.monotonic() > end:
                raise AssertionError(f"the standby was not promoted in {timeout_s} s")
            time.sleep(0.02)
        return time.monotonic()

    def stop(self) -> None:
        for node in (self.standby, self.primary):
            with contextlib.suppress(Exception):
                node.stop("immediate")


@dataclass(frozen=True)
class Failover:
    """When (time.monotonic) the primary was crashed, the standby accepted writes, and
    writes could reach it (the promotion, or the pooler's reload after it)."""

    crashed_at: float
    promoted_at: float
    back_at: float


def fail_over(pair: Pair, *, down_s: float = 0.0, pooler: Pooler | None = None) -> Failover:
    """The whole failover, blocking (from a coroutine: `asyncio.to_thread(fail_over, pair)`):
    crashes the primary, leaves the service without a writable server for `down_s`
    seconds (as a failover manager takes to decide), promotes the standby, points `pooler`
    (if any) at it, and returns."""
    crashed_at = pair.crash_primary()
    time.sleep(down_s)
    promoted_at = pair.promote()
    if pooler is not None:
        pooler.point_at(pair.standby)
    return Failover(crashed_at, promoted_at, time.monotonic())


def _streaming_in_sync(primary: Node, synchronous: bool) -> bool:
    state = primary.answers(
        "SELECT sync_state FROM pg_stat_replication "
        f"WHERE application_name = '{STANDBY_NAME}' AND state = 'streaming'"
    )
    return state == ("sync" if synchronous else "async")


def _make_pair(folder: Path, synchronous: bool) -> Pair:
    primary = Node("primary", folder / "primary", free_port(), folder / "primary.log")
    standby = Node("standby", folder / "standby", free_port(), folder / "standby.log")
    pair = Pair(folder, primary, standby, synchronous)
    _run([str(BIN / "initdb"), "-D", str(primary.data), "-U", USER, "--auth=trust",
          "--no-sync", "--no-instructions"], timeout_s=120)  # fmt: skip
    with (primary.data / "postgresql.conf").open("a") as conf:
        # Copied to the standby by the base backup: both run so.
        conf.write("fsync = off\nfull_page_writes = off\nsynchronous_commit = on\n")
        conf.write("wal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n")
    primary.start(folder)
    conninfo = f"host=127.0.0.1 port={primary.port} user={USER} application_name={STANDBY_NAME}"
    _run([str(BIN / "pg_basebackup"), "-D", str(standby.data), "-d", conninfo, "-R",
          "-X", "stream", "-c", "fast", "--no-sync"], timeout_s=120)  # fmt: skip
    if synchronous:
        # The primary's alone: the standby's copy of the config has none.
        primary.sql(f"ALTER SYSTEM SET synchronous_standby_names = '{STANDBY_NAME}'")
        primary.sql("SELECT pg_reload_conf()")
    standby.start(folder)
    end = time.monotonic() + 30
    while not _streaming_in_sync(primary, synchronous):
        if time.monotonic() > end:
            raise AssertionError(f"the standby never streamed:\n{standby.log.read_text()}")
        time.sleep(0.05)
    return pair


@contextlib.contextmanager
def replicated_pair(*, synchronous: bool = True) -> Iterator[Pair]:
    """A running primary and standby (streaming, `sync` when `synchronous`); both stopped
    and their folder removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="toolgate-replication-"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam(USER)
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    folder.chmod(0o755)
    pair: Pair | None = None
    try:
        pair = _make_pair(folder, synchronous)
        yield pair
    finally:
        if pair is not None:
            pair.stop()
        _stop_all(folder)
        shutil.rmtree(folder, ignore_errors=True)


def _stop_all(folder: Path | None = None) -> None:
    """Stops every server this process started (under `folder` only, when given)."""
    for data in list(_RUNNING):
        if folder is None or folder in data.parents:
            with contextlib.suppress(Exception):
                Node("left", data, 0, data / "unused").stop("immediate")


atexit.register(_stop_all)


@dataclass
class Pooler:
    """A PgBouncer in front of the pair's primary: `url` (database `postgres`, transaction
    mode) and `session_url` (the same database, session mode: for LISTEN and migrations)."""

    folder: Path
    port: int
    admin: Node  # its admin console, reached as a "server" on its port

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://{USER}@127.0.0.1:{self.port}/postgres"

    @property
    def session_url(self) -> str:
        return f"postgresql+asyncpg://{USER}@127.0.0.1:{self.port}/postgres_session"

    def point_at(self, node: Node) -> None:
        """Rewrites its config to send every new server connection to `node`, and
        reloads it (`RELOAD;` on its admin console): what operators do at a failover."""
        _write_pgbouncer_config(self.folder, self.port, node)
        self.admin.sql("RELOAD", database="pgbouncer")


def _write_pgbouncer_config(folder: Path, port: int, node: Node) -> Path:
    server = f"host=127.0.0.1 port={node.port} dbname=postgres"
    (folder / "users.txt").write_text(f'"{USER}" ""\n')
    ini = folder / "pgbouncer.ini"
    ini.write_text(
        "[databases]\n"
        f"postgres = {server}\n"
        f"postgres_session = {server} pool_mode=session\n"
        "[pgbouncer]\n"
        "listen_addr = 127.0.0.1\n"
        f"listen_port = {port}\n"
        "unix_socket_dir =\n"
        "auth_type = trust\n"
        f"auth_file = {folder / 'users.txt'}\n"
        f"admin_users = {USER}\n"
        "pool_mode = transaction\n"
        "default_pool_size = 10\n"
        "max_client_conn = 500\n"
        # A server that refused a login is tried again after this (default 15 s).
        "server_login_retry = 1\n"
        # A client waiting for a server connection is refused after this (default 120 s).
        "query_wait_timeout = 5\n"
        "server_connect_timeout = 3\n"
    )
    return ini


@contextlib.contextmanager
def pgbouncer_for(pair: Pair) -> Iterator[Pooler]:
    """A PgBouncer pointed at `pair`'s primary; stopped and its folder removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="toolgate-failover-pgbouncer-"))
    port = free_port()
    ini = _write_pgbouncer_config(folder, port, pair.primary)
    with running(ini, port, ["-u", "nobody"] if os.geteuid() == 0 else []):
        yield Pooler(folder, port, Node("pgbouncer", folder, port, folder / "pgbouncer.log"))
