"""How far each statement the app sends reaches across tenants, as Postgres's own planner
shows it: every statement the app's engine runs is captured with its parameters (a
SQLAlchemy hook, like `statements.py`), then explained with those parameters. A scan of a
tenant table is *pinned* when its conditions hold `tenant_id = <one value>`: the planner
carries a constant through join equalities (`event.tenant_id = run.tenant_id AND
run.tenant_id = 'acme'` pins both scans), which is the same reasoning a distributed
Postgres uses to send a statement to the one shard holding that value.

Only scans are judged: an INSERT's rows go where their own `tenant_id` says, and trigger
bodies are not in a plan (the schema test reads those)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

_DML = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", re.IGNORECASE)
#: Where a plan node keeps the conditions of its scan.
_CONDITIONS = ("Index Cond", "Filter", "Recheck Cond", "TID Cond")
_LITERAL = r"'((?:[^']|'')*)'::[\w ]+"


@dataclass(frozen=True)
class Captured:
    sql: str
    params: Any


@contextmanager
def capturing(engine: AsyncEngine) -> Iterator[list[Captured]]:
    """Every statement the engine runs meanwhile, with the parameters it was run with (the
    first set of an executemany)."""
    seen: list[Captured] = []

    def on_statement(
        _conn: Any, _cursor: Any, sql: str, params: Any, _context: Any, many: bool
    ) -> None:
        if _DML.match(sql):
            seen.append(Captured(sql, params[0] if many else params))

    event.listen(engine.sync_engine, "before_cursor_execute", on_statement)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", on_statement)


@dataclass(frozen=True)
class Reach:
    """What one statement touches of the tenant tables."""

    sql: str
    #: "UPDATE run", "INSERT event", ...: the tenant tables it writes.
    writes: frozenset[str]
    #: Every tenant table it scans.
    scanned: frozenset[str]
    #: The tenant tables it scans without `tenant_id = <one value>`.
    unpinned: frozenset[str]
    #: The values its pinned scans are pinned to.
    tenants: frozenset[str]
    #: Whether it locks the rows it reads (FOR UPDATE / SKIP LOCKED).
    locks: bool

    @property
    def single_tenant(self) -> bool:
        return not self.unpinned and len(self.tenants) <= 1

    @property
    def marker(self) -> str:
        """What a statement is, in words stable across rewrites of its SQL: what it
        writes, the tenant tables it scans across tenants, and whether it locks rows."""
        wrote = " + ".join(sorted(self.writes)) or "SELECT"
        locked = " FOR UPDATE" if self.locks else ""
        return f"{wrote} over {','.join(sorted(self.unpinned))}{locked}"


def _conjuncts(expression: str) -> list[str]:
    """The top-level AND terms of a condition as EXPLAIN prints it (fully parenthesized):
    `((a = 1) AND ((b = 2) OR (c = 3)))` -> ["a = 1", "(b = 2) OR (c = 3)"]."""
    expression = expression.strip()
    while expression.startswith("(") and _closing(expression, 0) == len(expression) - 1:
        expression = expression[1:-1].strip()
    terms, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(expression):
        if char == "'":
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
        elif not quoted and depth == 0 and expression.startswith(" AND ", i):
            terms.append(expression[start:i])
            start = i + len(" AND ")
    terms.append(expression[start:])
    if len(terms) == 1:
        return terms
    return [term for part in terms for term in _conjuncts(part)]


def _closing(expression: str, opening: int) -> int:
    depth, quoted = 0, False
    for i in range(opening, len(expression)):
        char = expression[i]
        if char == "'":
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
            if depth == 0:
                return i
    return -1


def _pinned_to(node: dict[str, Any], conditions: list[str]) -> str | None:
    """The value a top-level `tenant_id = <literal>` term of the scan's conditions pins it
    to (a term under an OR pins nothing)."""
    column = rf"\(?{re.escape(node['Alias'])}\.tenant_id\)?(?:::[\w ]+)?"
    for condition in conditions:
        for term in _conjuncts(condition):
            found = re.fullmatch(rf"{column} = {_LITERAL}", term) or re.fullmatch(
                rf"{_LITERAL} = {column}", term
            )
            if found is not None:
                return found[1]
    return None


def _conditions(node: dict[str, Any]) -> list[str]:
    """A scan's conditions, with those of the bitmap index scans under a bitmap heap scan."""
    parts = [str(node[k]) for k in _CONDITIONS if k in node]
    for child in node.get("Plans", []):
        if child["Node Type"].startswith("Bitmap"):
            parts.extend(_conditions(child))
    return parts


def plan_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of an EXPLAIN (FORMAT JSON) plan, the node itself first."""
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)


def reach_of(sql: str, plan: dict[str, Any], tenant_tables: Sequence[str]) -> Reach:
    writes, scanned, unpinned, tenants, locks = set(), set(), set(), set(), False
    for node in plan_nodes(plan):
        relation = node.get("Relation Name")
        locks = locks or node["Node Type"] == "LockRows"
        if relation not in tenant_tables:
            continue
        if node["Node Type"] == "ModifyTable":
            writes.add(f"{node['Operation'].upper()} {relation}")
            continue
        scanned.add(relation)
        value = _pinned_to(node, _conditions(node))
        if value is None:
            unpinned.add(relation)
        else:
            tenants.add(value)
    return Reach(
        sql, frozenset(writes), frozenset(scanned), frozenset(unpinned), frozenset(tenants), locks
    )


async def tenant_tables(connection: AsyncConnection) -> list[str]:
    found = await connection.execute(
        text(
            "SELECT table_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY 1"
        )
    )
    return list(found.scalars())


async def reaches(engine: AsyncEngine, captured: Sequence[Captured]) -> list[Reach]:
    """Each distinct statement explained with the parameters it ran with (nothing is run:
    EXPLAIN without ANALYZE plans only), in a transaction rolled back."""
    done: dict[tuple[str, str], Reach] = {}
    async with engine.connect() as connection:
        tables = await tenant_tables(connection)
        for statement in captured:
            key = (statement.sql, repr(statement.params))
            if key in done:
                continue
            explained = await connection.exec_driver_sql(
                "EXPLAIN (VERBOSE, FORMAT JSON) " + statement.sql, tuple(statement.params)
            )
            plan = explained.scalar_one()[0]["Plan"]
            done[key] = reach_of(statement.sql, plan, tables)
        await connection.rollback()
    return list(done.values())
