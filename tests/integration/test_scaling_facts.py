"""The facts docs/scaling.md builds its distribution by tenant on, checked on the migrated
database and on what the app sends it.

The schema: every table but the named reference ones holds `tenant_id` and leads its
primary key with it; foreign keys pair `tenant_id` with `tenant_id`; unique keys include it
but the API key's hash; no sequence or identity column; the columns stamped with a
transaction id and the triggers are the named ones, each keeping to its row's tenant.

The statements: a tour through the app of two tenants (runs with tool calls, snapshot and
continued runs, approvals, a child run and cancels, a queued run claimed by the driver,
lease renewal, webhooks, the kill switch, keys, retention and the counters' purges) is
captured, and every statement explained with its own parameters: each scan of a tenant
table is pinned to one `tenant_id` but in the cross-tenant statements named here, the
same list as the document's."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.forensics import replay
from app.db.limits import quotas as quotas_repo
from app.db.tools import switches
from app.db.webhooks import claims
from app.domain.lifecycle.events import EventType
from app.domain.limits.quotas import day_start
from app.engine.limits import retention
from tests.support.approvals import WRITER, move, row
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import Harness, make_config
from tests.support.tenancy import Reach, capturing, reaches
from tests.support.webhook_receiver import LOOPBACK, Receiver, receiving, register, settled

#: Tables without `tenant_id`: the operator's config versions, the pinned declarations of
#: its MCP tools and the processes serving (reference tables, copied to every node),
#: the console's sign-ins under way (nobody is known yet) and Alembic's own.
REFERENCE = {"config_version", "mcp_declaration", "process", "console_login", "alembic_version"}
#: The unique keys not scoped to a tenant: a request's key and a console session's cookie
#: are each found by their hash alone.
GLOBAL_UNIQUE = {"uq_api_key_key_hash", "pk_console_session"}
#: Tenant tables whose primary key is a hash that finds the row whatever its tenant.
BY_HASH = {"console_session"}
#: The columns stamped with the writing transaction's id (`pg_current_xact_id()`).
XID_COLUMNS = {("event", "xid"), ("technology_version", "xid")}
#: (table, trigger) -> what its body must hold: its writes and joins keep to the row's tenant.
TRIGGERS = {
    ("event", "event_webhook_outbox"): [
        "w.tenant_id = a.tenant_id",
        "pg_advisory_xact_lock_shared(2003331889, hashtext(t.tenant_id))",
    ],
    ("run", "run_child_finished"): ["r.tenant_id = NEW.tenant_id", "run.tenant_id = NEW.tenant_id"],
    ("run", "run_finished_day_cost"): ["VALUES (NEW.tenant_id"],
    ("technology", "technology_history"): ["VALUES (OLD.tenant_id", "VALUES (NEW.tenant_id"],
    # Writes nothing: refuses every change of an acceptance.
    ("mcp_declaration_acceptance", "mcp_declaration_acceptance_kept"): ["RAISE EXCEPTION"],
}
#: The statements that scan tenant tables across tenants (a marker: what a statement writes,
#: which tenant tables it scans unpinned, whether it locks rows), named as docs/scaling.md
#: names them. A statement not here that crosses tenants fails the tour test: make it keep
#: to one tenant, or name it here and in the document.
CROSS_TENANT = {
    "SELECT over api_key": "the API key lookup by hash (every request)",
    "UPDATE run over preview,run FOR UPDATE": "the driver's claim, with the parked-run sweep",
    "UPDATE run over run": "lease renewal (UPDATE … FROM unnest)",
    "UPDATE webhook_delivery over event,webhook_delivery,webhook_endpoint FOR UPDATE": (
        "the webhook senders' claim"
    ),
    "UPDATE webhook_delivery over webhook_delivery": "the webhook senders' hand-back",
    "DELETE event + DELETE preview + DELETE run + DELETE run_script + DELETE tool_call"
    " + DELETE turn over event,preview,run,run_script,tool_call,turn FOR UPDATE": (
        "retention: finished runs, with everything they hold"
    ),
    "DELETE event over event,run FOR UPDATE": "retention: events of finished runs",
    "DELETE webhook_delivery over webhook_delivery FOR UPDATE": "retention: deliveries",
    "DELETE technology_version over run,technology_version FOR UPDATE": (
        "retention: technology history"
    ),
    "DELETE idempotency_key over idempotency_key FOR UPDATE": "retention: expired keys",
    "DELETE tool_rate over tool_rate": "purge: rate-limit counters",
    "DELETE run_rate over run_rate": "purge: run-rate counters",
    "DELETE tenant_day_cost over tenant_day_cost": "purge: daily cost totals",
    "SELECT over run": "replay: a run found by id in any tenant (operator CLI)",
    "INSERT event + INSERT idempotency_key + INSERT run + INSERT run_script"
    " + UPDATE idempotency_key over idempotency_key": (
        "a child run's creation: the batch's births, one birth (its tenant in its JSON item)"
    ),
    "INSERT event + INSERT idempotency_key + INSERT preview + INSERT run + INSERT run_script"
    " + INSERT tool_call + INSERT turn + UPDATE idempotency_key + UPDATE preview + UPDATE run"
    " + UPDATE tool_call over idempotency_key,preview,run,tool_call": (
        "the commit batcher: steps, new runs and Idempotency-Key answers of many runs, of any"
        " tenants"
    ),
}
#: What the tour must have written within one tenant: the hot path and its neighbours.
#: (Turns, new calls, previews, new runs and their keys' bindings are written only by the
#: births' and the commit batcher's statements, which CROSS_TENANT names.)
PINNED_WRITES = {
    "UPDATE run",
    "INSERT event",
    "UPDATE tool_call",
    "UPDATE preview",
    "UPDATE technology",
    "UPDATE webhook_delivery",
    "DELETE tool_switch",
    "UPDATE api_key",
}
DAY_S = 86_400


async def _rows(db: AsyncEngine, sql: str) -> list[Any]:
    async with db.connect() as connection:
        return list((await connection.execute(text(sql))).all())


async def test_tenant_tables_lead_their_primary_key_with_tenant_id_and_the_rest_are_named(
    db: AsyncEngine,
) -> None:
    tables = {
        r[0] for r in await _rows(db, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    }
    tenant = {
        r[0]
        for r in await _rows(
            db,
            "SELECT table_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND column_name = 'tenant_id'",
        )
    }
    assert tables - tenant == REFERENCE
    keys = await _rows(
        db,
        """SELECT c.conrelid::regclass::text, a.attname FROM pg_constraint c
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
           WHERE c.contype = 'p' AND c.connamespace = 'public'::regnamespace""",
    )
    led = {table for table, first in keys if first == "tenant_id"}
    assert led == tenant - BY_HASH and len(keys) == len(tables)


async def test_every_foreign_key_pairs_tenant_id_with_tenant_id(db: AsyncEngine) -> None:
    pairs = await _rows(
        db,
        """SELECT c.conname, a.attname, f.attname FROM pg_constraint c,
               unnest(c.conkey, c.confkey) AS k(mine, theirs)
           JOIN pg_attribute a ON true JOIN pg_attribute f ON true
           WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
             AND a.attrelid = c.conrelid AND a.attnum = k.mine
             AND f.attrelid = c.confrelid AND f.attnum = k.theirs""",
    )
    keys = {name for name, _, _ in pairs}
    paired = {name for name, mine, theirs in pairs if mine == theirs == "tenant_id"}
    assert len(keys) >= 5 and paired == keys


async def test_unique_keys_hold_tenant_id_but_the_api_key_hash(db: AsyncEngine) -> None:
    unique = await _rows(
        db,
        f"""SELECT i.indexrelid::regclass::text,
                  bool_or(a.attname = 'tenant_id') FROM pg_index i
           JOIN pg_class t ON t.oid = i.indrelid AND t.relnamespace = 'public'::regnamespace
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
           WHERE i.indisunique
             AND t.relname NOT IN ({", ".join(f"'{t}'" for t in sorted(REFERENCE))})
           GROUP BY 1""",
    )
    assert len(unique) > len(GLOBAL_UNIQUE)
    assert {name for name, scoped in unique if not scoped} == GLOBAL_UNIQUE


async def test_no_sequence_nor_identity_and_the_xid_columns_are_the_named_ones(
    db: AsyncEngine,
) -> None:
    sequences = await _rows(
        db,
        "SELECT relname FROM pg_class"
        " WHERE relkind = 'S' AND relnamespace = 'public'::regnamespace",
    )
    identity = await _rows(
        db,
        "SELECT table_name FROM information_schema.columns"
        " WHERE table_schema = 'public'"
        " AND (is_identity = 'YES' OR column_default LIKE 'nextval%')",
    )
    stamped = await _rows(
        db,
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND column_default LIKE '%pg_current_xact_id()%'",
    )
    assert (sequences, identity) == ([], [])
    assert {tuple(r) for r in stamped} == XID_COLUMNS


async def test_the_triggers_are_the_named_ones_and_keep_to_their_rows_tenant(
    db: AsyncEngine,
) -> None:
    found = await _rows(
        db,
        """SELECT c.relname, t.tgname, (t.tgtype & 1) = 1, p.prosrc FROM pg_trigger t
           JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
           WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace""",
    )
    assert {(table, name) for table, name, _, _ in found} == set(TRIGGERS)
    for table, name, _, body in found:
        for needle in TRIGGERS[(table, name)]:
            assert needle in body, (name, needle)
    # The outbox is the one statement-level trigger (with a transition table).
    per_statement = {name for _, name, per_row, _ in found if not per_row}
    assert per_statement == {"event_webhook_outbox"}


# -- the tour -------------------------------------------------------------------------


def _config() -> Any:
    config = make_config(
        {"tech-radar": WRITER},
        webhooks=LOOPBACK,
        quotas={"runs_per_minute": 1000, "daily_cost_usd": 100},
    )
    kept = config.retention.model_copy(update={"runs_days": 3, "events_days": 2})
    return config.model_copy(update={"retention": kept})


async def _run(h: Harness, headers: dict[str, str], *script: Any, **fields: Any) -> dict[str, Any]:
    answer = await h.client.post("/v1/runs", headers=headers, json=run_body(*script, **fields))
    assert answer.status_code == 201, answer.text
    return answer.json()


async def _runs_and_reads(h: Harness, admin: dict[str, str], other: dict[str, str]) -> None:
    search = ("c1", "search_technologies", {"query": "database"})
    keyed = {**admin, "Idempotency-Key": "tour-1"}
    body = run_body(tool_calls(search), tool_calls(search), final("done [source:s1]"))
    first = await h.client.post("/v1/runs", headers=keyed, json=body)
    again = await h.client.post("/v1/runs", headers=keyed, json=body)
    done = first.json()
    assert done["status"] == "finished" and again.headers["Idempotent-Replayed"] == "true"
    for path in ("", "/events", "/calls", "/diagnosis"):
        answer = await h.client.get(f"/v1/runs/{done['id']}{path}", headers=admin)
        assert answer.status_code == 200, (path, answer.text)
    for path in ("/v1/runs", "/v1/events", f"/v1/events?run_id={done['id']}"):
        assert (await h.client.get(path, headers=admin)).status_code == 200
    pinned = await _run(
        h, admin, tool_calls(search), final("then [source:s1]"), consistency="snapshot"
    )
    continued = await _run(h, admin, final("again"), continue_from=done["id"])
    theirs = await _run(h, other, tool_calls(search), final("theirs [source:s1]"))
    assert {pinned["status"], continued["status"], theirs["status"]} == {"finished"}


async def _approvals_and_children(
    h: Harness, admin: dict[str, str], approver: dict[str, str], techs: list[str]
) -> None:
    parked = await _run(h, admin, tool_calls(move(techs[0])), final("Moved [source:s1]"))
    preview_id = parked["pending_approvals"][0]["preview_id"]
    assert (await h.client.get("/v1/approvals", headers=approver)).status_code == 200
    url = f"/v1/previews/{preview_id}"
    preview = (await h.client.get(url, headers=approver)).json()
    approved = await h.client.post(
        f"{url}/approve", headers=approver, json={"content_hash": preview["content_hash"]}
    )
    assert approved.status_code == 200, approved.text
    committed = await h.client.post(
        f"{url}/commit", headers={**approver, "Idempotency-Key": "tour-c"}, json={"wait_s": 5}
    )
    assert committed.json()["run"]["status"] == "finished", committed.text
    parent = await _run(h, admin, tool_calls(move(techs[1])), final("x"))
    limits = {"max_tokens": 100, "max_cost_usd": 0.1, "max_tool_calls": 2}
    child = await _run(
        h, admin, tool_calls(move(techs[2])), parent_run_id=parent["id"], limits=limits, wait_s=0
    )
    cancelled = await h.client.post(f"/v1/runs/{parent['id']}/cancel", headers=admin)
    assert cancelled.status_code == 200, cancelled.text
    # The parked child was woken by the cancel; with no poller running, poll by hand.
    for _ in range(50):
        await h.driver.poll_once()
        seen = await h.driver.wait("acme", child["id"], 0.2)
        if seen.termination_reason is not None:
            break
    assert seen.termination_reason == "cancelled"


async def _claim_and_renew(h: Harness, admin: dict[str, str], other: dict[str, str]) -> None:
    """Runs of both tenants held here at once (renewed by one statement), and a run queued
    for want of a slot, then claimed by the driver's poll."""
    slow = run_body(final("x", delay_ms=60_000), wait_s=0)
    held = [
        (await h.client.post("/v1/runs", headers=headers, json=slow)).json()
        for headers in (admin, other)
    ]
    assert [r["status"] for r in held] == ["running", "running"]
    settings = h.runtime.settings
    settings.max_active_runs, free = 1, settings.max_active_runs
    queued = await _run(h, other, final("later"), wait_s=0)
    settings.max_active_runs = free
    assert queued["status"] == "queued"
    assert await h.driver.poll_once() == 1
    assert (await h.driver.wait("globex", queued["id"], 10)).status == "finished"
    await h.driver.keeper.renew_once()
    for record, headers in zip(held, (admin, other), strict=True):
        answer = await h.client.post(f"/v1/runs/{record['id']}/cancel", headers=headers)
        assert answer.json()["status"] == "finished", answer.text


async def _admin_work(h: Harness, admin: dict[str, str]) -> None:
    for verb in ("disable", "enable"):
        answer = await h.client.post(f"/v1/tools/search_technologies/{verb}", headers=admin)
        assert answer.status_code == 200, answer.text
    made = await h.client.post(
        "/v1/keys", headers=admin, json={"name": "tour", "roles": ["caller"], "scopes": []}
    )
    assert made.status_code == 201, made.text
    assert (await h.client.get("/v1/keys", headers=admin)).status_code == 200
    gone = await h.client.delete(f"/v1/keys/{made.json()['id']}", headers=admin)
    assert gone.status_code in (200, 204), gone.text


async def _webhooks(
    h: Harness, hooks: list[tuple[dict[str, str], str]], receiver: Receiver
) -> None:
    """A claim of both tenants' deliveries handed back (as a stopping sender does), then
    the sender's own claim sends them."""
    rt = h.runtime
    async with rt.sessions.begin() as session:
        claimed = await claims.claim_due(
            session,
            limit=50,
            per_endpoint=4,
            per_tenant=16,
            lease_s=30,
            token="tour",
            db_time=rt.db_time,
        )
        assert {c.tenant_id for c in claimed} == {"acme", "globex"}
        await claims.hand_back(session, claimed, rt.db_time)
    assert await h.driver.webhooks.send_due() == len(claimed)
    await receiver.wait_for(len(claimed))
    for headers, hook_id in hooks:
        assert await settled(h.client, headers, hook_id, 1)


async def _purges(h: Harness, run_id: str) -> None:
    """What a driver's purge pass runs, days later, and the replay's lookup by id."""
    rt = h.runtime
    h.travel(4 * DAY_S)
    done = await retention.purge(rt.sessions, retention.pass_of(rt))
    assert sum(done.removed.values()) > 0
    async with rt.sessions.begin() as session:
        await switches.purge_rates(session, db_time=rt.db_time)
        await quotas_repo.purge(session, db_time=rt.db_time, today=day_start(rt.clock.now()))
        assert await replay.runs_by_id(session, run_id=run_id, tenant_id=None) == []


async def _tour(h: Harness, receiver: Receiver) -> list[Reach]:
    admin = await h.key(subject="ops", roles="admin,caller")
    approver = await h.key(subject="alice", roles="approver")
    other = await h.key(tenant="globex", subject="ops", roles="admin,caller")
    techs = [(await row(h, name))["id"] for name in ("Kafka", "GraphQL", "DuckDB")]
    finished = [EventType.RUN_FINISHED]
    engine = h.app.state.engine
    with capturing(engine) as seen:
        hooks = [
            (headers, (await register(h.client, headers, receiver.hook(), finished))["id"])
            for headers in (admin, other)
        ]
        await _runs_and_reads(h, admin, other)
        await _approvals_and_children(h, admin, approver, techs)
        await _claim_and_renew(h, admin, other)
        await _admin_work(h, admin)
        await _webhooks(h, hooks, receiver)
        await _purges(h, "run_gone")
    return await reaches(engine, seen)


async def test_every_statement_keeps_to_one_tenant_but_the_named_cross_tenant_ones(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=_config(), run_driver=False)
    for tenant in ("acme", "globex"):
        await seed_radar(h, tenant)
    async with receiving() as receiver:
        found = await _tour(h, receiver)
    crossing: dict[str, set[str]] = {}
    for r in found:
        if not r.single_tenant:
            crossing.setdefault(r.marker, set()).add(r.sql)
    assert set(crossing) == set(CROSS_TENANT), {m: sorted(s)[0][:160] for m, s in crossing.items()}
    # One statement each: another statement of the same shape (a read of `run` that lost its
    # tenant, say) is not let through by the replay lookup's entry.
    assert {m: len(s) for m, s in crossing.items() if len(s) > 1} == {}
    pinned = [r for r in found if r.single_tenant and r.scanned | r.writes]
    assert {t for r in pinned for t in r.tenants} == {"acme", "globex"}
    assert {w for r in pinned for w in r.writes} >= PINNED_WRITES
    read = {t for r in pinned for t in r.scanned}
    assert read >= {"run", "event", "tool_call", "technology_version", "webhook_endpoint"}
