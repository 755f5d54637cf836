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


class _Lost:
    """A connection whose server went away mid-statement."""

    async def fetch(self, sql: str, *args: object) -> list[object]:
        raise asyncpg.ConnectionDoesNotExistError(
            "connection was closed in the middle of operation"
        )

    def is_closed(self) -> bool:
        return True


class _Pool:
    def __init__(self) -> None:
        self.released: list[bool] = []

    async def acquire(self, timeout_s: float) -> _Lost:  # noqa: ASYNC109 (the pool's signature)
        return _Lost()

    def release(self, connection: object, *, answered: bool = True) -> None:
        self.released.append(answered)


async def test_a_connection_lost_mid_statement_is_an_outage_and_not_reused() -> None:
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
    assert pool.released == [False]
