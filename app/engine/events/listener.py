"""LISTEN/NOTIFY: how a cancel committed by any process reaches the process that holds
the run at once, and how other processes' event streams hear of events committed here.
One dedicated connection per process, outside the pool; when it drops, it is opened
again, and lease upkeep (and the streams' poll) covers the gap."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping

import asyncpg
from sqlalchemy.engine import make_url

from app.db.errors import is_unavailable
from app.engine.process.outage import outage

log = logging.getLogger(__name__)
#: The pause before reconnecting: short after a connection that worked dropped (a
#: process without its connection looks dead to the others, `engine.process.liveness`),
#: longer between tries that fail.
AGAIN_S = 0.2
CHECK_EVERY_S = 2.0
#: How often a connection that seems up is looked at (no statement: its state in memory).
LOOK_EVERY_S = 0.5
#: How long a starting process waits for its listener's first connection.
FIRST_WAIT_S = 3.0


def asyncpg_dsn(url: str) -> str:
    """The SQLAlchemy URL (postgresql+asyncpg://...) as a plain libpq DSN for asyncpg, whose
    DSN parser knows `sslmode`, not the `ssl` keyword the engine takes (`db.urls`), and
    keeps only the last of repeated parameters: several hosts (`host=h1:p1&host=h2:p2`)
    become one comma-separated list (`host=h1:p1,h2:p2`), as libpq writes it."""
    parsed = make_url(url).set(drivername="postgresql")
    if "ssl" in parsed.query:
        mode = parsed.query["ssl"]
        parsed = parsed.difference_update_query(["ssl"]).update_query_dict({"sslmode": mode})
    hosts = parsed.query.get("host")
    if isinstance(hosts, tuple):
        parsed = parsed.update_query_dict({"host": ",".join(hosts)})
    return parsed.render_as_string(hide_password=False)


def named(payload: str) -> tuple[str, str]:
    """The tenant and the id a notification names ("tenant id": a cancel's run, a
    revocation's key). The id, made by the service, has no space; a tenant's name may."""
    tenant_id, _, row_id = payload.rpartition(" ")
    return tenant_id, row_id


class Listener:
    """One connection listening on every channel of `handlers` (channel -> handler of the
    notification's payload)."""

    def __init__(
        self,
        url: str,
        handlers: Mapping[str, Callable[[str], None]],
        not_from_self: frozenset[str] = frozenset(),
        *,
        on_connect: Callable[[asyncpg.Connection], Awaitable[None]] | None = None,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        """`not_from_self`: channels whose notifications sent on this connection are not
        handed back to this process. `on_connect` runs on each new connection before it is
        ready (the process's liveness lock is taken there); `on_lost` when a connection
        that was ready is gone."""
        self._dsn = asyncpg_dsn(url)
        self._handlers = dict(handlers)
        self._not_from_self = not_from_self
        self._on_connect = on_connect
        self._on_lost = on_lost
        self._own_pid = -1
        self.ready = asyncio.Event()
        #: Set once the first connection has been tried, whether it was made or not.
        self._tried = asyncio.Event()
        self._connection: asyncpg.Connection | None = None

    async def first_connection(self) -> bool:
        """Whether the first connection was made, once it has been tried (at most
        `FIRST_WAIT_S`: a database that does not answer keeps the process from serving
        no longer than that).

        A starting process serves after this: what it keeps from the database (an MCP
        server's list, a key's principal) is trusted only while it could hear of a change,
        so a list read before the listener connects would be distrusted, changing no pin,
        until it is read again."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._tried.wait(), FIRST_WAIT_S)
        return self.ready.is_set()

    def _deliver(self, _connection: object, pid: int, channel: str, payload: str) -> None:
        if pid == self._own_pid and channel in self._not_from_self:
            return  # sent by this process, which acted on it already
        try:
            self._handlers[channel](payload)
        except Exception:
            log.warning("a notification could not be handled", exc_info=True)

    def _reconnected(self) -> None:
        # Whatever was announced while nobody listened is lost: handlers that cache
        # something are told with an empty payload, meaning "forget everything".
        for handler in self._handlers.values():
            handler("")

    async def notify(self, channel: str, payload: str) -> bool:
        """Sends a notification on this connection (never a pooled one: a step's connection
        is never held up, nor a dropped one met first here). False while disconnected."""
        connection = self._connection
        if connection is None or connection.is_closed():
            return False
        await connection.execute("SELECT pg_notify($1, $2)", channel, payload)
        return True

    async def run_forever(self) -> None:
        while True:
            connection = None
            try:
                connection = await asyncpg.connect(
                    self._dsn, timeout=5, server_settings={"application_name": "toolgate-listen"}
                )
                closed = asyncio.Event()
                connection.add_termination_listener(lambda _c, ev=closed: ev.set())
                for channel in self._handlers:
                    await connection.add_listener(channel, self._deliver)
                if self._on_connect is not None:
                    await self._on_connect(connection)
                self._reconnected()
                self._own_pid = connection.get_server_pid()
                self._connection = connection
                self.ready.set()
                self._tried.set()
                # The termination callback is not called when the connection breaks under
                # a statement (a notification sent as the server ends the session): look.
                while not connection.is_closed():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(closed.wait(), LOOK_EVERY_S)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_unavailable(exc):
                    outage.seen(exc)  # said once for the whole process
                else:
                    log.warning("listening for notifications failed; reconnecting", exc_info=True)
            finally:
                self._tried.set()
                self._connection = None
                dropped = self.ready.is_set()
                self.ready.clear()
                if dropped and self._on_lost is not None:
                    self._on_lost()
                if connection is not None and not connection.is_closed():
                    connection.terminate()
            await asyncio.sleep(AGAIN_S if dropped else CHECK_EVERY_S)
