"""The one statement a step commits.

Everything a step writes — the run's new values under its lease, its events (their seqs
taken from the run's counter), a new turn, new calls, call outcomes — goes to Postgres as
a single statement of data-modifying CTEs, each of the others joined to the run's update:

    WITH changed  AS (UPDATE run SET ... WHERE <run> AND lease_token = :token
                      AND lease_expires_at > now() AND status = 'running'
                      RETURNING version, event_seq, ...),
         appended AS (INSERT INTO event     SELECT ... FROM changed, <events>),
         turned   AS (INSERT INTO turn      SELECT ... FROM changed),
         proposed AS (INSERT INTO tool_call SELECT ... FROM changed, <calls>),
         settled  AS (UPDATE tool_call SET ... FROM changed, <outcomes> WHERE ...),
         previewed AS (INSERT INTO preview  SELECT ... FROM changed, <previews>),
         decided  AS (UPDATE preview SET status ... FROM changed, <decisions> WHERE ...)
    SELECT version, event_seq, cancel_requested_at FROM changed

A single statement is atomic on its own, so it runs without BEGIN/COMMIT: one round trip
a step. When the lease is no longer held, `changed` is empty, nothing else is written, and
the answer has no row (StaleWrite). Each shape is built and compiled once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, bindparam, cast, column, func, select, true, update
from sqlalchemy import insert as sa_insert
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.clock import DbTime
from app.db.guards import status_in
from app.db.runs_repo import StaleWrite, appended_events, events_param
from app.db.tables import preview, run, tool_call, turn
from app.domain.events import Event
from app.domain.moves import RUN_STEP
from app.domain.records import Call, Preview, Turn
from app.domain.run_patch import RunPatch

_TURN_FIELDS = tuple(f.name for f in fields(Turn))
_CALL_FIELDS = tuple(f.name for f in fields(Call))
_PREVIEW_FIELDS = tuple(f.name for f in fields(Preview))
#: What a step changes on a preview: its status and who moved it when.
_DECISION = ("status", "committed_by", "committed_at", "superseded_by")
#: What an outcome changes on a call row.
_OUTCOME = (
    "status",
    "attempts",
    "error",
    "ends_run",
    "output",
    "source_id",
    "observed_at",
    "source_version",
    "preview_id",
    "output_withheld",
    "operation_id",
    "updated_at",
)


#: The run's columns only others write (a child's creation, a finishing child's
#: settlement): every step's write returns them, so that the holder's budget checks see
#: its children without a read of their own.
SHARED = (
    "reserved_tokens",
    "reserved_cost_usd",
    "reserved_tool_calls",
    "children_input_tokens",
    "children_output_tokens",
    "children_cost_usd",
    "children_tool_calls",
)


@dataclass(frozen=True)
class Applied:
    """What a lease holder learns from its own write: only what other writers move too
    (a cancel request adds an event and sets cancel_requested_at; children reserve and
    settle: `shared`)."""

    version: int
    event_seq: int
    cancel_requested_at: datetime | None
    shared: Mapping[str, Any] = field(default_factory=dict)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "as_dict"):
        return value.as_dict()
    return value


def _records(rows: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps([{k: _json_value(v) for k, v in row.items()} for row in rows])


def _turn_params(record: Turn) -> dict[str, Any]:
    params = {f"t_{name}": getattr(record, name) for name in _TURN_FIELDS}
    params["t_rejection"] = None if record.rejection is None else record.rejection.as_dict()
    params["t_extra_rejections"] = list(record.extra_rejections)
    return params


async def apply(
    connection: AsyncConnection | AsyncSession,
    *,
    tenant_id: str,
    run_id: str,
    lease_token: str,
    patch: RunPatch,
    events: Sequence[Event],
    now: datetime,
    db_time: DbTime,
    turn: Turn | None = None,
    new_calls: Sequence[Call] = (),
    updated_calls: Sequence[Call] = (),
    new_previews: Sequence[Preview] = (),
    updated_previews: Sequence[Preview] = (),
) -> Applied:
    values = patch.values()
    params: dict[str, Any] = {f"v_{name}": value for name, value in values.items()}
    params.update(
        w_tenant=tenant_id, w_run=run_id, w_token=lease_token, w_count=len(events), w_now=now
    )
    params["w_clock"] = db_time.interval(0)
    if events:
        params["w_events"] = events_param(events)
    if turn is not None:
        params.update(_turn_params(turn))
    if new_calls:
        params["w_new_calls"] = _records(
            [{n: getattr(c, n) for n in _CALL_FIELDS} for c in new_calls]
        )
    if updated_calls:
        params["w_outcomes"] = _records(
            [{"id": c.id, **{n: getattr(c, n) for n in _OUTCOME}} for c in updated_calls]
        )
    if new_previews:
        params["w_new_previews"] = _records(
            [{n: getattr(p, n) for n in _PREVIEW_FIELDS} for p in new_previews]
        )
    if updated_previews:
        params["w_decisions"] = _records(
            [{"id": p.id, **{n: getattr(p, n) for n in _DECISION}} for p in updated_previews]
        )
    statement = _statement(
        tuple(sorted(values)),
        bool(events),
        turn is not None,
        bool(new_calls),
        bool(updated_calls),
        bool(new_previews),
        bool(updated_previews),
    )
    row = (await connection.execute(statement, params)).one_or_none()
    if row is None:
        raise StaleWrite(run_id)
    mapping = row._mapping
    shared = {
        name: float(mapping[name]) if name.endswith("cost_usd") else mapping[name]
        for name in SHARED
    }
    return Applied(row.version, row.event_seq, row.cancel_requested_at, shared)


def _recordset(name: str, table: Any, columns: Sequence[str]) -> Any:
    """`jsonb_to_recordset(:name) AS name(col type, ...)`: many rows in one parameter."""
    return (
        func.jsonb_to_recordset(cast(bindparam(name, type_=String()), JSONB))
        .table_valued(*(column(c, table.c[c].type) for c in columns))
        .render_derived(name=name, with_types=True)
    )


def _changed(names: tuple[str, ...]) -> Any:
    """The run's lease-conditional update: the CTE everything else of the step joins."""
    return (
        update(run)
        .where(
            run.c.tenant_id == bindparam("w_tenant", type_=String()),
            run.c.id == bindparam("w_run", type_=String()),
            run.c.lease_token == bindparam("w_token", type_=String()),
            # A lease past its expiry (on the database's clock) writes nothing, even before
            # another process takes it: nothing is started on a lapsed lease.
            run.c.lease_expires_at > DbTime.after_param("w_clock"),
            status_in(run.c.status, RUN_STEP.guard),
        )
        .values(
            {
                **{name: bindparam(f"v_{name}", type_=run.c[name].type) for name in names},
                "version": run.c.version + 1,
                "event_seq": run.c.event_seq + bindparam("w_count", type_=Integer()),
                "updated_at": bindparam("w_now", type_=run.c.updated_at.type),
            }
        )
        .returning(
            run.c.version,
            run.c.event_seq,
            run.c.cancel_requested_at,
            *(run.c[name] for name in SHARED),
        )
        .cte("changed")
    )


def _inserted(changed: Any, param: str, table: Any, names: tuple[str, ...], cte: str) -> Any:
    """Rows of the recordset `param` inserted into `table`, only when the run's update
    matched (joined to `changed`)."""
    source = _recordset(param, table, names)
    rows = select(*(source.c[n] for n in names)).select_from(changed).join(source, true())
    return sa_insert(table).from_select(list(names), rows).cte(cte)


def _updated(changed: Any, param: str, table: Any, names: tuple[str, ...], cte: str) -> Any:
    """Rows of `table` (by id) updated with the recordset `param`'s `names`, only when the
    run's update matched: no outcome or decision is written when the lease is gone."""
    source = _recordset(param, table, ("id", *names))
    rows = (
        select(*(source.c[n] for n in ("id", *names)))
        .select_from(changed)
        .join(source, true())
        .subquery(f"{cte}_rows")
    )
    tenant = bindparam("w_tenant", type_=String())
    return (
        update(table)
        .where(table.c.tenant_id == tenant, table.c.id == rows.c.id)
        .values({**{n: rows.c[n] for n in names}, "version": table.c.version + 1})
        .cte(cte)
    )


@functools.lru_cache(maxsize=512)
def _statement(
    names: tuple[str, ...],
    events: bool,
    with_turn: bool,
    new_calls: bool,
    outcomes: bool,
    new_previews: bool = False,
    decisions: bool = False,
) -> Any:
    changed = _changed(names)
    answer = select(
        changed.c.version,
        changed.c.event_seq,
        changed.c.cancel_requested_at,
        *(changed.c[name] for name in SHARED),
    )
    if events:
        before = changed.c.event_seq - bindparam("w_count", type_=Integer())
        appended = appended_events(
            changed,
            tenant=bindparam("w_tenant", type_=String()),
            run_id=bindparam("w_run", type_=String()),
            last_seq=before,
            at=bindparam("w_now", type_=run.c.updated_at.type),
            param="w_events",
        )
        answer = answer.add_cte(appended)
    if with_turn:
        values = [bindparam(f"t_{n}", type_=turn.c[n].type) for n in _TURN_FIELDS]
        rows = select(*values).select_from(changed)
        inserted = sa_insert(turn).from_select(list(_TURN_FIELDS), rows)
        answer = answer.add_cte(inserted.cte("turned"))
    if new_calls:
        answer = answer.add_cte(
            _inserted(changed, "w_new_calls", tool_call, _CALL_FIELDS, "proposed")
        )
    if outcomes:
        answer = answer.add_cte(_updated(changed, "w_outcomes", tool_call, _OUTCOME, "settled"))
    if new_previews:
        answer = answer.add_cte(
            _inserted(changed, "w_new_previews", preview, _PREVIEW_FIELDS, "previewed")
        )
    if decisions:
        answer = answer.add_cte(_updated(changed, "w_decisions", preview, _DECISION, "decided"))
    return answer
