"""How every run is made: one JSON item with its first events, its script and its request
key's binding, inserted by the CTEs built here. A request's run travels in the batch
statement (`db.lifecycle.step_writes`) beside other runs' steps — one round trip and one
commit for all; a child's goes on its own (`create`) in its parent's reservation
transaction.

Each birth is conditional on its own binding: `insert` a claim of the key that nobody
holds yet, or `bind` the claim its request holds; when the binding does not take hold,
nothing of that run is written, and it alone learns so (None). A run is created leased on
the database's clock, and a snapshot run keeps the snapshot of the statement itself.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.access.idempotency import Binding
from app.db.lifecycle.json_rows import each, encode
from app.db.lifecycle.runs import event_items, run_row
from app.db.session import alone
from app.db.tables import idempotency_key
from app.domain.lifecycle.records import SNAPSHOT
from app.domain.lifecycle.run_changes import Creation
from app.domain.lifecycle.run_columns import COLUMNS


@dataclass(frozen=True)
class Birth:
    """A run to create; `clock_s` is the database clock's offset (`DbTime.offset_s`, 0 in
    service) that its lease and its key's lock and expiry are counted from."""

    creation: Creation
    binding: Binding | None = None
    clock_s: float = 0.0

    def item(self, index: int) -> dict[str, Any]:
        creation, binding = self.creation, self.binding
        row = run_row(creation.run)
        row["event_seq"] = len(creation.events)
        item: dict[str, Any] = {
            "i": index,
            "tenant_id": creation.run.tenant_id,
            "run_id": creation.run.id,
            "run": row,
            "events": event_items(creation.events),
            "script": None if creation.script is None else list(creation.script),
            "lease_s": None if creation.lease_s is None else self.clock_s + creation.lease_s,
            "snapshot": creation.run.consistency == SNAPSHOT,
        }
        if binding is not None:
            item.update(
                bkind=binding.kind,
                b_tenant=binding.tenant_id,
                b_key=binding.key,
                b_token=binding.token,
                b_fingerprint=binding.fingerprint,
                b_lock_s=self.clock_s + binding.lock_s,
                b_ttl_s=self.clock_s + binding.ttl_s,
                b_created=binding.created_at,
            )
        return item


@dataclass(frozen=True)
class Born:
    """What a birth learns from the database: its lease's expiry and its snapshot."""

    lease_expires_at: datetime | None
    read_snapshot: str | None


def ctes(rows: str) -> list[str]:
    """The births' CTEs, reading `rows` (a FROM item of JSON objects, for a column list to
    follow): `b` (one row a birth), the key bindings that took hold (`bound`), the runs
    (`born`) and their scripts. Their events are inserted with the steps' (`appended`),
    so that the event table's statement trigger fires once a batch."""
    keys = idempotency_key.name
    cols = ", ".join(COLUMNS)
    values = ", ".join(
        "CASE WHEN nb.lease_s IS NULL THEN p.lease_expires_at "
        "ELSE now() + nb.lease_s * interval '1 second' END"
        if n == "lease_expires_at"
        else "CASE WHEN nb.snapshot THEN pg_current_snapshot()::text ELSE p.read_snapshot END"
        if n == "read_snapshot"
        else f"p.{n}"
        for n in COLUMNS
    )
    return [
        f"b AS (SELECT b.* FROM {rows} AS b(i integer, "
        "tenant_id text, run_id text, run jsonb, events jsonb, script jsonb, lease_s float8, "
        "snapshot boolean, bkind text, b_tenant text, b_key text, b_token text, "
        "b_fingerprint text, b_lock_s float8, b_ttl_s float8, b_created timestamptz))",
        f"rebound AS (UPDATE {keys} SET resource_id = b.run_id FROM b "
        f"WHERE b.bkind = 'bind' AND {keys}.tenant_id = b.b_tenant "
        f"AND {keys}.key = b.b_key AND {keys}.claim_token = b.b_token RETURNING b.i)",
        f"claimed AS (INSERT INTO {keys} (tenant_id, key, fingerprint, state, claim_token, "
        "locked_until, created_at, expires_at, resource_id) "
        "SELECT b.b_tenant, b.b_key, b.b_fingerprint, 'in_flight', b.b_token, "
        "now() + b.b_lock_s * interval '1 second', b.b_created, "
        "now() + b.b_ttl_s * interval '1 second', b.run_id FROM b WHERE b.bkind = 'insert' "
        # In one order whatever the batch: two statements claiming the same keys never
        # wait on each other in a cycle; of two births of one key, the first one wins.
        "ORDER BY b.b_tenant, b.b_key, b.i "
        "ON CONFLICT (tenant_id, key) DO NOTHING RETURNING tenant_id, key, claim_token)",
        "bound AS (SELECT b.* FROM b WHERE b.bkind IS NULL "
        "UNION ALL SELECT b.* FROM b JOIN rebound ON rebound.i = b.i "
        "UNION ALL SELECT b.* FROM b JOIN claimed ON b.bkind = 'insert' "
        "AND claimed.tenant_id = b.b_tenant AND claimed.key = b.b_key "
        "AND claimed.claim_token = b.b_token)",
        f"born AS (INSERT INTO run ({cols}) SELECT {values} "
        "FROM bound AS nb, jsonb_populate_record(NULL::run, nb.run) AS p "
        "RETURNING tenant_id, id, lease_expires_at, read_snapshot)",
        "scripted AS (INSERT INTO run_script (tenant_id, run_id, script) "
        "SELECT nb.tenant_id, nb.run_id, nb.script FROM bound AS nb "
        "JOIN born ON born.tenant_id = nb.tenant_id AND born.id = nb.run_id "
        "WHERE nb.script IS NOT NULL)",
    ]


#: The births' first events, as rows of the batch's one event insert (one row a birth:
#: seqs 1 to the count of its events).
EVENTS = (
    "SELECT born.tenant_id, born.id, 1, jsonb_array_length(nb.events), "
    "(nb.run ->> 'created_at')::timestamptz, nb.events FROM born "
    "JOIN bound AS nb ON nb.tenant_id = born.tenant_id AND nb.run_id = born.id "
    "WHERE jsonb_array_length(nb.events) > 0"
)


def answer(step_columns: int) -> str:
    """The births' rows of the batch's answer, padded to the steps' columns."""
    pad = ", ".join(["NULL"] * step_columns)
    return (
        f"SELECT 'b', nb.i, {pad}, born.lease_expires_at, born.read_snapshot FROM born "
        "JOIN bound AS nb ON nb.tenant_id = born.tenant_id AND nb.run_id = born.id"
    )


@functools.cache
def statement() -> str:
    """The births of the array `$1` on their own: the CTEs of the batch, their events
    inserted by themselves."""
    appended = (
        f"appended AS (INSERT INTO event (tenant_id, run_id, seq, last_seq, at, events) {EVENTS})"
    )
    return (
        "WITH " + ",\n".join([*ctes(each("$1")), appended]) + "\n"
        "SELECT born.lease_expires_at, born.read_snapshot FROM born"
    )


async def create(session: AsyncSession, birth: Birth) -> Born | None:
    """One run made in `session`'s transaction (a child's, beside its parent's
    reservation); None when its binding did not take hold (nothing was made)."""
    rows = await alone(session, statement(), ([encode(birth.item(0))],))
    return Born(rows[0][0], rows[0][1]) if rows else None
