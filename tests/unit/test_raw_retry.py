"""Which driver errors show a hot-path statement never ran (and may be sent again on
another connection): a terminated backend's notice, also when asyncpg reports it as a lost
connection; never a connection lost with the outcome unknown."""

from __future__ import annotations

import asyncpg
from sqlalchemy.ext.asyncio import create_async_engine

from app.db.errors import is_unavailable
from app.db.raw import _never_ran, _on_pool


def lost(context: BaseException | None) -> BaseException:
    try:
        try:
            if context is not None:
                raise context
            raise asyncpg.ConnectionDoesNotExistError("closed in the middle of operation")
        except BaseException:
            raise asyncpg.ConnectionDoesNotExistError("closed in the middle of operation")  # noqa: B904
    except BaseException as error:
        return error


def test_a_terminated_backend_means_the_statement_never_ran() -> None:
    notice = asyncpg.AdminShutdownError("terminating connection due to administrator command")
    assert _never_ran(notice)
    assert _never_ran(lost(notice))
    assert _never_ran(lost(BrokenPipeError(32, "Broken pipe")))


def test_a_connection_lost_mid_statement_is_an_unknown_outcome() -> None:
    assert not _never_ran(lost(None))
    assert not _never_ran(lost(ConnectionResetError(104, "reset")))
    assert not _never_ran(asyncpg.UniqueViolationError("duplicate key"))


class _Released:
    """A pooled connection whose server went away mid-statement: asyncpg has already
    handed it back to its pool, so asking it anything raises."""

    async def fetch(self, sql: str, *args: object) -> list[object]:
        raise asyncpg.ConnectionDoesNotExistError(
            "connection was closed in the middle of operation"
        )

    def is_closed(self) -> bool:
        raise asyncpg.InterfaceError(
            "cannot call Connection.is_closed(): connection has been released back to the pool"
        )


class _Pool:
    def __init__(self) -> None:
        self.released = 0

    async def acquire(self, timeout: float) -> _Released:  # noqa: ASYNC109 (asyncpg's signature)
        return _Released()

    async def release(self, connection: object) -> None:
        self.released += 1


async def test_a_connection_released_by_its_own_closing_is_an_outage() -> None:
    engine = create_async_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")
    pool = _Pool()
    try:
        await _on_pool(engine, pool, 1.0, "SELECT 1", ())  # type: ignore[arg-type]
    except Exception as error:
        assert is_unavailable(error), repr(error)
    else:
        raise AssertionError("a lost connection answered")
    finally:
        await engine.dispose()
    assert pool.released == 1
