"""Which driver errors show a hot-path statement never ran (and may be sent again on
another connection): a terminated backend's notice, also when asyncpg reports it as a lost
connection; never a connection lost with the outcome unknown."""

from __future__ import annotations

import asyncpg

from app.db.raw import _never_ran


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
