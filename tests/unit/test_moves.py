"""The transition tables are authoritative: every edge they list is made by a declared
move (or is named as made by none yet), every move is built from their edges only, and
the statements that change a status take their guards from the moves."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.dialects import postgresql

import app.domain.lifecycle.moves as moves
from app.db.approvals import previews
from app.db.lifecycle import leases, runs, step_writes
from app.domain.lifecycle.run_changes import CancelRequest, Sweep
from app.domain.lifecycle.status import (
    CALL_TRANSITIONS,
    MOVES,
    PREVIEW_TRANSITIONS,
    RUN_TRANSITIONS,
    CallStatus,
    InvalidTransition,
    RunStatus,
    move,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)
TABLES = {"run": RUN_TRANSITIONS, "call": CALL_TRANSITIONS, "preview": PREVIEW_TRANSITIONS}
EDGES = sorted(
    (kind, current, target)
    for kind, table in TABLES.items()
    for current, targets in table.items()
    for target in targets
)


@pytest.mark.parametrize("edge", EDGES, ids=[f"{k}:{a}->{b}" for k, a, b in EDGES])
def test_every_edge_of_the_tables_is_made_by_a_declared_move(edge: tuple[str, str, str]) -> None:
    kind, current, target = edge
    makers = [m for m in MOVES.values() if m.kind == kind and (current, target) in m.edges()]
    assert makers or edge in moves.UNMADE, f"no move makes {kind} {current} -> {target}"
    assert not (makers and edge in moves.UNMADE), f"{edge} is made: drop it from UNMADE"


def test_every_move_is_made_of_table_edges_only() -> None:
    for declared in MOVES.values():
        for current, target in declared.edges():
            assert target in TABLES[declared.kind][current], (declared.name, current, target)


def test_a_move_the_table_lacks_is_refused_when_declared() -> None:
    with pytest.raises(InvalidTransition):
        move("run", "resurrect", {RunStatus.FINISHED}, {RunStatus.RUNNING})
    with pytest.raises(InvalidTransition):
        move("call", "redo", {CallStatus.SUCCEEDED}, {CallStatus.EXECUTING})
    assert ("run", "resurrect") not in MOVES


def test_a_move_refuses_a_change_it_does_not_make() -> None:
    moves.CALL_START.check(CallStatus.APPROVED, CallStatus.EXECUTING)
    with pytest.raises(InvalidTransition):
        moves.CALL_START.check(CallStatus.AWAITING_APPROVAL, CallStatus.EXECUTING)
    with pytest.raises(InvalidTransition):
        moves.RUN_STEP.check(RunStatus.QUEUED, RunStatus.RUNNING)


def _sql(statement: object) -> str:
    compiled = statement.compile(  # type: ignore[attr-defined]
        dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}
    )
    return str(compiled)


def test_the_statements_guards_are_the_moves() -> None:
    assert "AND run.status IN ('running') " in step_writes.statement()
    sweep = _sql(previews.sweep(Sweep(at=AT, limit=10)))
    assert "run.status = 'awaiting_approval'" in sweep and "SET status='running'" in sweep
    claimable = _sql(leases._claimable(leases.DbTime()))
    assert "run.status IN ('queued', 'running')" in claimable
    cancel = _sql(runs.cancel_statement(CancelRequest("t", "r", "u", AT)))
    assert "run.status IN ('awaiting_approval', 'queued', 'running')" in cancel
    assert "WHEN (run.status = 'awaiting_approval') THEN 'running'" in cancel


def _moves_used_in(path: Path) -> set[str]:
    """The names of `domain.lifecycle.moves` a module uses: `moves.X`, or imported from it."""
    tree = ast.parse(path.read_text())
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "moves"
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "app.domain.lifecycle.moves":
            used |= {alias.name for alias in node.names}
    return used


def test_every_declared_move_is_made_by_the_code() -> None:
    """Each edge of the tables has its move (above); each move has code that makes it, so
    every edge is walked from its table row to the statement or rule that performs it."""
    app = Path(moves.__file__).parents[2]
    used: set[str] = set()
    for path in app.rglob("*.py"):
        if path != Path(moves.__file__):
            used |= _moves_used_in(path)
    declared = {name for name, value in vars(moves).items() if value in MOVES.values()}
    assert declared, "no move found"
    assert declared <= used, f"declared but made by no code: {sorted(declared - used)}"
