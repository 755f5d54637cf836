"""The transition tables are authoritative: every edge they list is made by a declared
move (or is named as made by none yet), every move is built from their edges only, and
the statements that change a status take their guards from the moves."""

from __future__ import annotations

import pytest
from sqlalchemy.dialects import postgresql

import app.domain.moves as moves
from app.db import leases_repo, previews_repo, step_writes
from app.domain.status import (
    CALL_TRANSITIONS,
    MOVES,
    PREVIEW_TRANSITIONS,
    RUN_TRANSITIONS,
    CallStatus,
    InvalidTransition,
    RunStatus,
    move,
)

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
    step = _sql(step_writes._statement(("status",), False, False, False, False))
    assert "run.status = 'running'" in step
    sweep = _sql(previews_repo.sweep(previews_repo.datetime(2026, 1, 1), 10))
    assert "run.status = 'awaiting_approval'" in sweep and "SET status='running'" in sweep
    claimable = _sql(leases_repo._claimable(leases_repo.DbTime()))
    assert "run.status IN ('queued', 'running')" in claimable
