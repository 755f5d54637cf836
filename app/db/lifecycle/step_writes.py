"""The one statement that commits the steps of one or many runs.

Everything a step writes — the run's new values under its lease, its events (their seqs
taken from the run's counter), a new turn, new calls, call outcomes, previews and their
decisions — travels as one JSON item, and a batch of items (one per run) is a single
statement of data-modifying CTEs, each joined to the runs whose update matched (and, in
the same statement, the Idempotency-Key answers of requests that have finished):

    WITH w        AS (SELECT ... FROM batch_items($1)),                   -- one row a run
         changed  AS (UPDATE run SET ... FROM w WHERE <w's run> AND lease_token = w.token
                      AND lease_expires_at > now() AND status = 'running' RETURNING ...),
         appended AS (INSERT INTO event     SELECT ... FROM changed, <its events>),
         turned   AS (INSERT INTO turn      SELECT ... FROM changed, <its turn>),
         proposed AS (INSERT INTO tool_call SELECT ... FROM changed, <its calls>),
         settled  AS (UPDATE tool_call SET ... FROM changed, <its outcomes> WHERE ...),
         previewed AS (INSERT INTO preview  SELECT ... FROM changed, <its previews>),
         decided  AS (UPDATE preview SET ... FROM changed, <its decisions> WHERE ...),
         answered AS (UPDATE idempotency_key SET ... FROM <$2> WHERE <its claim>)
    SELECT i, version, event_seq, ... FROM changed

A single statement is atomic on its own, so it runs without BEGIN/COMMIT: one round trip
and one commit for the whole batch. Each run's write stays conditional on its own lease:
a run whose lease is gone is absent from `changed`, nothing of it is written, and it alone
gets StaleWrite; the others commit. The statement has one shape whatever a step writes
(the run's patch goes through `jsonb_populate_record` over the row itself, so a column
the patch leaves out keeps its value), so it is built once and prepared once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db import column_types
from app.db.approvals import previews
from app.db.lifecycle import births
from app.db.lifecycle.births import Birth, Born
from app.db.lifecycle.json_rows import each, encode
from app.db.lifecycle.runs import COSTS, StaleWrite, event_items
from app.db.session import alone
from app.db.tables import idempotency_key, preview, tool_call, turn
from app.domain.errors import ToolgateError
from app.domain.lifecycle.events import Event
from app.domain.lifecycle.moves import RUN_STEP
from app.domain.lifecycle.records import Call, Preview, Turn
from app.domain.lifecycle.run_columns import NESTED
from app.domain.lifecycle.run_patch import RunPatch

__all__ = [
    "SHARED",
    "Unencodable",
    "Answer",
    "Applied",
    "Birth",
    "Born",
    "StaleWrite",
    "StepWrite",
    "apply_batch",
]

_PATCHED = tuple(f.name for f in fields(RunPatch))
_TURN_FIELDS = tuple(f.name for f in fields(Turn))
_CALL_FIELDS = tuple(f.name for f in fields(Call))
_PREVIEW_FIELDS = previews.NEW_FIELDS
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
SHARED = tuple(name for name, (record, _) in NESTED.items() if record in ("reserved", "children"))


@dataclass(frozen=True)
class Applied:
    """What a lease holder learns from its own write: only what other writers move too
    (a cancel request adds an event and sets cancel_requested_at; children reserve and
    settle: `shared`)."""

    version: int
    event_seq: int
    cancel_requested_at: datetime | None
    shared: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepWrite:
    """One run's step, as the batch statement takes it. `clock_s` is the database clock's
    offset (`DbTime.offset_s`: 0 in service) that the lease's expiry is compared with."""

    tenant_id: str
    run_id: str
    lease_token: str
    patch: RunPatch
    events: Sequence[Event]
    now: datetime
    clock_s: float = 0.0
    turn: Turn | None = None
    new_calls: Sequence[Call] = ()
    updated_calls: Sequence[Call] = ()
    new_previews: Sequence[Preview] = ()
    updated_previews: Sequence[Preview] = ()

    def item(self, index: int) -> dict[str, Any]:
        """The write as one element of the statement's JSON parameter."""
        return {
            "i": index,
            "tenant_id": self.tenant_id,
            "run_id": self.run_id,
            "token": self.lease_token,
            "now": self.now,
            "clock_s": self.clock_s,
            "patch": self.patch.values(),
            "events": event_items(self.events),
            "turns": [] if self.turn is None else [_turn_item(self.turn)],
            "new_calls": [{n: getattr(c, n) for n in _CALL_FIELDS} for c in self.new_calls],
            "outcomes": [
                {"id": c.id, **{n: getattr(c, n) for n in _OUTCOME}} for c in self.updated_calls
            ],
            "new_previews": [previews.row_of(p) for p in self.new_previews],
            "decisions": [
                {"id": p.id, **{n: getattr(p, n) for n in _DECISION}} for p in self.updated_previews
            ],
        }


@dataclass(frozen=True)
class Answer:
    """An Idempotency-Key's request is done: its answer, kept for retries to replay, on
    the condition that the request still holds the key's claim. `body` is JSON text, as
    the response carried it (stored without being parsed and encoded again)."""

    tenant_id: str
    key: str
    claim_token: str
    status: int
    headers: Mapping[str, str]
    body: str

    def item(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "key": self.key,
            "token": self.claim_token,
            "status": self.status,
            "headers": dict(self.headers),
            "body": self.body,
        }


def _turn_item(record: Turn) -> dict[str, Any]:
    item = {name: getattr(record, name) for name in _TURN_FIELDS}
    item["extra_rejections"] = list(record.extra_rejections)
    item["instructions_hash"] = column_types.as_json(record.instructions_hash)
    item["tool_schema_hash"] = column_types.as_json(record.tool_schema_hash)
    return item


class Unencodable(ToolgateError):
    """A write of the batch cannot be encoded as JSON: nothing was sent."""


async def apply_batch(
    connection: AsyncEngine | AsyncConnection,
    writes: Sequence[StepWrite],
    answers: Sequence[Answer] = (),
    births: Sequence[Birth] = (),
) -> tuple[list[Applied | None], list[Born | None]]:
    """Commits every write whose run's lease still holds, every answer whose claim still
    holds and every birth whose key binding takes hold, in one statement; for each write,
    in order, what it learned, or None when its lease was gone (nothing of it written);
    for each birth, what it learned, or None when its binding did not take hold (nothing
    of it made). The runs must be distinct."""
    try:
        steps = [encode(w.item(i)) for i, w in enumerate(writes)]
        kept = [encode(a.item()) for a in answers]
        made = [encode(b.item(i)) for i, b in enumerate(births)]
    except (TypeError, ValueError) as exc:
        raise Unencodable(str(exc)) from exc
    rows = await alone(connection, statement(), (steps, kept, made))
    found: list[Applied | None] = [None] * len(writes)
    born: list[Born | None] = [None] * len(births)
    for row in rows:
        if row[0] == "b":
            born[row[1]] = Born(row[-2], row[-1])
            continue
        shared = {
            name: float(value) if name in COSTS else value
            for name, value in zip(SHARED, row[5:-2], strict=True)
        }
        found[row[1]] = Applied(row[2], row[3], row[4], shared)
    return found, born


# -- the statement ---------------------------------------------------------------------------
_DIALECT = postgresql.dialect()


def _typed(table: Any, names: Sequence[str]) -> str:
    """`name type, ...` for a jsonb_to_recordset column list, typed as the table's."""
    return ", ".join(f"{n} {table.c[n].type.compile(dialect=_DIALECT)}" for n in names)


def _listed(names: Sequence[str], prefix: str = "") -> str:
    return ", ".join(f"{prefix}{n}" for n in names)


def _inserted(cte: str, table: Any, key: str, names: Sequence[str]) -> str:
    """The rows of each changed run's array `key`, inserted into `table`."""
    return (
        f"{cte} AS (INSERT INTO {table.name} ({_listed(names)}) "
        f"SELECT {_listed(names, 'x.')} FROM changed, "
        f"jsonb_to_recordset(changed.{key}) AS x({_typed(table, names)}))"
    )


def _updated(cte: str, table: Any, key: str, names: Sequence[str]) -> str:
    """Rows of `table` (by tenant and id) updated from each changed run's array `key`."""
    sets = ", ".join(f"{n} = x.{n}" for n in names)
    return (
        f"{cte} AS (UPDATE {table.name} SET {sets}, version = {table.name}.version + 1 "
        f"FROM (SELECT changed.tenant_id AS w_tenant, changed.id AS w_run, x.* FROM changed, "
        f"jsonb_to_recordset(changed.{key}) AS x({_typed(table, ('id', *names))})) AS x "
        # Only the changed run's own rows, whatever an id in its write says.
        f"WHERE {table.name}.tenant_id = x.w_tenant AND {table.name}.id = x.id "
        f"AND {table.name}.run_id = x.w_run)"
    )


def _answered() -> str:
    """The Idempotency-Key answers of requests that still hold their key's claim."""
    table = idempotency_key.name
    return (
        f"answered AS (UPDATE {table} SET state = 'done', response_status = a.status, "
        "response_headers = a.headers, response_body = a.body::json "
        f"FROM {each('$2')} "
        "AS a(tenant_id text, key text, token text, status integer, headers jsonb, body text) "
        f"WHERE {table}.tenant_id = a.tenant_id AND {table}.key = a.key "
        f"AND {table}.claim_token = a.token)"
    )


@functools.cache
def statement() -> str:
    guard = ", ".join(f"'{s}'" for s in sorted(RUN_STEP.guard))
    keys = "new_calls jsonb, outcomes jsonb, new_previews jsonb, decisions jsonb"
    changed = (
        f"changed AS (UPDATE run SET ({_listed(_PATCHED)}) = "
        f"(SELECT {_listed(_PATCHED, 'p.')} FROM jsonb_populate_record(run, w.patch) AS p), "
        "version = run.version + 1, "
        "event_seq = run.event_seq + jsonb_array_length(w.events), updated_at = w.now "
        "FROM w WHERE run.tenant_id = w.tenant_id AND run.id = w.run_id "
        "AND run.lease_token = w.token "
        # A lease past its expiry (on the database's clock) writes nothing, even before
        # another process takes it: nothing is started on a lapsed lease.
        "AND run.lease_expires_at > now() + w.clock_s * interval '1 second' "
        f"AND run.status IN ({guard}) "
        "RETURNING w.i, run.tenant_id, run.id, run.version, run.event_seq, "
        f"run.cancel_requested_at, {_listed(SHARED, 'run.')}, w.now, w.events, "
        "w.turns, w.new_calls, w.outcomes, w.new_previews, w.decisions)"
    )
    appended = (
        "appended AS (INSERT INTO event (tenant_id, run_id, seq, last_seq, at, events) "
        "SELECT changed.tenant_id, changed.id, "
        "changed.event_seq - jsonb_array_length(changed.events) + 1, changed.event_seq, "
        "changed.now, changed.events FROM changed "
        f"WHERE jsonb_array_length(changed.events) > 0 UNION ALL {births.EVENTS})"
    )
    parts = [
        f"w AS (SELECT w.* FROM {each('$1')} AS w(i integer, "
        "tenant_id text, run_id text, token text, now timestamptz, clock_s float8, "
        f"patch jsonb, events jsonb, turns jsonb, {keys}))",
        changed,
        *births.ctes(each("$3")),
        appended,
        _inserted("turned", turn, "turns", _TURN_FIELDS),
        _inserted("proposed", tool_call, "new_calls", _CALL_FIELDS),
        _updated("settled", tool_call, "outcomes", _OUTCOME),
        _inserted("previewed", preview, "new_previews", _PREVIEW_FIELDS),
        _updated("decided", preview, "decisions", _DECISION),
        _answered(),
    ]
    columns = ("version", "event_seq", "cancel_requested_at", *SHARED)
    stepped = f"SELECT 's', i, {_listed(columns)}, NULL, NULL FROM changed"
    answer = f"{stepped} UNION ALL {births.answer(len(columns))}"
    return "WITH " + ",\n".join(parts) + "\n" + answer
