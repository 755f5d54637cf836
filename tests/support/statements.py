"""Counting what the app's engine sends to the database (statements and committed write
transactions), through SQLAlchemy's event hooks: a count, never a timing. And, through
the same hooks, making some statements fail as if the database had gone."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

#: A statement that writes, a CTE's included (`WITH x AS (UPDATE ...)`); not `FOR UPDATE`.
_WRITE = re.compile(
    r"\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|pg_notify", re.IGNORECASE
)


#: What every statement of step writes carries (`app.db.lifecycle.step_writes`: one per batch).
STEP_WRITE = "jsonb_populate_record(run"


class Statements:
    """Every statement the app's engine runs, and the write transactions it commits."""

    def step_writes(self) -> list[str]:
        """The statements that committed batches of step writes."""
        return [s for s in self.all if STEP_WRITE in s]

    def __init__(self) -> None:
        self.all: list[str] = []
        self.committed_writes: list[list[str]] = []
        self._open: dict[int, list[str]] = {}

    def on_statement(self, conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        self.all.append(statement)
        if conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            # A statement on its own commits as its own transaction.
            if _WRITE.search(statement):
                self.committed_writes.append([statement])
            return
        self._open.setdefault(id(conn), []).append(statement)

    def on_commit(self, conn: Any) -> None:
        statements = self._open.pop(id(conn), [])
        if any(_WRITE.search(s) for s in statements):
            self.committed_writes.append(statements)

    def on_rollback(self, conn: Any) -> None:
        self._open.pop(id(conn), None)

    def reading(self, table: str) -> list[str]:
        pattern = re.compile(rf"^\s*SELECT\b.*\bFROM {table}\b", re.IGNORECASE | re.DOTALL)
        return [s for s in self.all if pattern.search(s)]


@contextmanager
def counting(engine: AsyncEngine) -> Iterator[Statements]:
    seen = Statements()
    hooks = [
        ("before_cursor_execute", seen.on_statement),
        ("commit", seen.on_commit),
        ("rollback", seen.on_rollback),
    ]
    for name, fn in hooks:
        event.listen(engine.sync_engine, name, fn)
    try:
        yield seen
    finally:
        for name, fn in hooks:
            event.remove(engine.sync_engine, name, fn)


@contextmanager
def failing(engine: AsyncEngine, marker: str, error: Callable[[], BaseException]) -> Iterator[None]:
    """Every statement of the app's engine that contains `marker` raises `error()` instead of
    reaching the database, as if the database had gone for it; the others go through."""

    def fail(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if marker in statement:
            raise error()

    event.listen(engine.sync_engine, "before_cursor_execute", fail)
    try:
        yield
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", fail)


@contextmanager
def answer_lost(
    engine: AsyncEngine,
    marker: str,
    times: int = 1,
    when: Callable[[Sequence[Any]], bool] = lambda _params: True,
    error: Callable[[], BaseException] = lambda: ConnectionResetError(
        "the connection dropped before the answer came"
    ),
) -> Iterator[list[str]]:
    """The first `times` statements containing `marker` (and whose parameters pass `when`)
    reach the database and take effect, but their answer never comes back (a
    ConnectionResetError instead), as when a process loses its connection after its
    statement committed (or `error`, as when reading a committed answer fails). Yields the
    statements hit."""
    hit: list[str] = []

    def lose(statement: str, params: Any) -> None:
        if marker in statement and len(hit) < times and when(params):
            hit.append(statement)
            raise error()

    def lose_sa(_conn: Any, _cursor: Any, statement: str, params: Any, *_args: Any) -> None:
        lose(statement, params)

    event.listen(engine.sync_engine, "after_cursor_execute", lose_sa)
    try:
        yield hit
    finally:
        event.remove(engine.sync_engine, "after_cursor_execute", lose_sa)


def with_steps(params: Sequence[Any]) -> bool:
    """A batch statement's parameters carry step writes (not only new runs or answers)."""
    return bool(params) and params[0] != []


def with_births(params: Sequence[Any]) -> bool:
    """A batch statement's parameters carry new runs."""
    return len(params) > 2 and params[2] != []


@contextmanager
def commit_answer_lost(engine: AsyncEngine, marker: str, times: int = 1) -> Iterator[list[str]]:
    """The next `times` transactions that ran a statement containing `marker` commit, then
    raise ConnectionResetError, as when the connection drops before COMMIT's answer comes
    back. Yields the marked statements whose commit was hit."""
    hit: list[str] = []
    marked: dict[int, str] = {}

    def mark(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if marker in statement:
            marked[id(conn)] = statement

    def lose(conn: Any) -> None:
        statement = marked.pop(id(conn), None)
        if statement is not None and len(hit) < times:
            hit.append(statement)
            conn.connection.dbapi_connection.commit()  # it takes effect...
            raise ConnectionResetError("the connection dropped before COMMIT's answer came")

    event.listen(engine.sync_engine, "before_cursor_execute", mark)
    event.listen(engine.sync_engine, "commit", lose)
    try:
        yield hit
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", mark)
        event.remove(engine.sync_engine, "commit", lose)
