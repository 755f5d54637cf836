"""The audit chain (SPEC §3.10): every decision and operator action appends an entry in
the transaction that makes it, hashed over the one before; `GET /v1/audit` pages through
a tenant's chain; `python -m app audit verify` finds an entry changed, removed or moved;
appends at the same moment never fork the chain; retention never removes an entry."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from sqlalchemy import func, select, text

from app.db.audit.tables import audit_entry
from app.engine.limits import retention
from tests.support.approvals import approvals_harness, approve, commit, keys, move, parked_run, row
from tests.support.factories import final, tool_calls
from tests.support.harness import Harness
from tests.support.processes import run_cli

ADMIN = "admin,caller,approver"


async def _chain(h: Harness, headers: dict[str, str], limit: int = 500) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = ""
    while True:
        page = await h.client.get(f"/v1/audit?limit={limit}{cursor}", headers=headers)
        assert page.status_code == 200, page.text
        body = page.json()
        items += body["items"]
        if body["next_cursor"] is None:
            return items
        cursor = f"&cursor={body['next_cursor']}"


def _verify(database_url: str, *flags: str) -> tuple[int, list[dict[str, Any]], str]:
    done = run_cli("audit", "verify", *flags, env={"TOOLGATE_DATABASE_URL": database_url})
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, lines, done.stderr


async def _parked_move(h: Harness, caller: dict[str, str], ring: str = "adopt") -> str:
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"], ring)), final("ok"))
    return run["pending_approvals"][0]["preview_id"]


async def test_decisions_and_operator_actions_are_chained_and_verified(
    harness_factory, database_url: str
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, alice = await keys(h)
    admin = await h.key(subject="root", roles=ADMIN)

    first = await _parked_move(h, caller)
    await approve(h, alice, first)
    assert (await commit(h, alice, first, "commit-1")).status_code == 200
    second = await _parked_move(h, caller, "hold")
    revised = await h.client.post(
        f"/v1/previews/{second}/revise",
        headers=alice,
        json={
            "arguments": {**move((await row(h, "Kafka"))["id"])[2], "ring": "trial"},
            "reason": "trial first",
        },
    )
    assert revised.status_code == 200, revised.text
    newest = revised.json()["preview"]["id"]
    rejected = await h.client.post(
        f"/v1/previews/{newest}/reject", headers=alice, json={"reason": "not this quarter"}
    )
    assert rejected.status_code == 200
    for verb in ("disable", "enable"):
        switched = await h.client.post(f"/v1/tools/move_technology_ring/{verb}", headers=admin)
        assert switched.status_code == 200, switched.text
    made = await h.client.post(
        "/v1/keys",
        headers=admin,
        json={"name": "bob's key", "subject": "bob", "roles": ["approver"], "scopes": []},
    )
    assert made.status_code == 201, made.text
    key_id = made.json()["id"]
    assert (await h.client.delete(f"/v1/keys/{key_id}", headers=admin)).status_code == 204
    hook = await h.client.post(
        "/v1/webhooks",
        headers=admin,
        json={"url": "https://hooks.example.com/tg", "events": ["run.finished"]},
    )
    assert hook.status_code == 201, hook.text
    hook_id = hook.json()["id"]
    assert (await h.client.delete(f"/v1/webhooks/{hook_id}", headers=admin)).status_code == 204

    chain = await _chain(h, admin, limit=3)  # paged, three at a time
    assert [e["seq"] for e in chain] == list(range(1, len(chain) + 1))
    assert all(b["prev_hash"] == a["hash"] for a, b in zip(chain, chain[1:], strict=False))
    # The test's keys, made as the command line makes them, then what the test did.
    made_here = [e for e in chain if e["actor"] == "operator (command line)"]
    assert {e["action"] for e in made_here} == {"create_key"} and len(made_here) == 3
    entries = [e for e in chain if e not in made_here]
    assert [(e["action"], e["actor"], e["target"]) for e in entries] == [
        ("approve", "alice", first),
        ("commit", "alice", first),
        ("revise", "alice", second),
        ("reject", "alice", newest),
        ("disable_tool", "root", "move_technology_ring"),
        ("enable_tool", "root", "move_technology_ring"),
        ("create_key", "root", key_id),
        ("revoke_key", "root", key_id),
        ("register_webhook", "root", hook_id),
        ("delete_webhook", "root", hook_id),
    ]
    assert entries[3]["data"]["reason"] == "not this quarter"
    assert entries[2]["data"]["new_preview_id"] == newest
    assert "key" not in entries[6]["data"] and entries[6]["data"]["roles"] == ["approver"]
    shown = json.dumps(entries)
    assert made.json()["key"] not in shown and hook.json()["secret"] not in shown

    # Roles: only admins read it; another tenant sees its own (empty) chain.
    assert (await h.client.get("/v1/audit", headers=alice)).status_code == 403
    other = await h.key(tenant="globex", subject="ops", roles="admin")
    [own] = (await h.client.get("/v1/audit", headers=other)).json()["items"]
    assert (own["seq"], own["action"], own["data"]["subject"]) == (1, "create_key", "ops")

    code, lines, _ = _verify(database_url)
    assert code == 0 and {"tenant": "acme", "entries": 13, "holds": True} in lines
    assert {"tenant": "globex", "entries": 1, "holds": True} in lines
    code, lines, _ = _verify(database_url, "--tenant", "acme")
    assert code == 0 and lines == [{"tenant": "acme", "entries": 13, "holds": True}]
    code, lines, said = _verify(database_url, "--tenant", "nobody")
    assert code == 0 and lines == [{"tenant": "nobody", "entries": 0, "holds": True}]
    assert "no audit entries" in said
    for cursor in ("²", "99999999999999999999", "-1", "x"):
        wrong = await h.client.get(f"/v1/audit?cursor={cursor}", headers=admin)
        assert wrong.status_code == 422 and wrong.json()["code"] == "validation-error", cursor
    # A switch already where it is asked to be, or a key revoked again, changes nothing:
    # no entry either.
    for _ in range(2):
        await h.client.post("/v1/tools/move_technology_ring/enable", headers=admin)
        assert (await h.client.delete(f"/v1/keys/{key_id}", headers=admin)).status_code == 204
    assert len(await _chain(h, admin)) == len(chain)


async def _tampered(h: Harness, database_url: str, *statements: str) -> tuple[int, str]:
    async with h.runtime.sessions.begin() as session:
        for statement in statements:
            await session.execute(text(statement))
    code, lines, said = _verify(database_url, "--tenant", "acme")
    assert code == 1, (statements, lines, said)
    [line] = lines
    assert line["holds"] is False
    return line["seq"], said


async def test_a_changed_removed_or_moved_entry_is_named(
    harness_factory, database_url: str
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    admin = await h.key(subject="root", roles="admin")
    for i in range(6):
        verb = "disable" if i % 2 == 0 else "enable"
        await h.client.post(f"/v1/tools/move_technology_ring/{verb}", headers=admin)
    code, _, _ = _verify(database_url, "--tenant", "acme")
    assert code == 0
    async with h.runtime.sessions() as session:
        kept = [dict(r) for r in (await session.execute(select(audit_entry))).mappings()]

    async def restore() -> None:
        async with h.runtime.sessions.begin() as session:
            await session.execute(text("DELETE FROM audit_entry WHERE tenant_id = 'acme'"))
            await session.execute(audit_entry.insert(), kept)
        assert _verify(database_url, "--tenant", "acme")[0] == 0

    seq, said = await _tampered(
        h, database_url, "UPDATE audit_entry SET actor = 'mallory' WHERE seq = 3"
    )
    assert seq == 3 and "entry 3" in said and "does not match its content" in said
    await restore()
    seq, _ = await _tampered(h, database_url, "DELETE FROM audit_entry WHERE seq = 4")
    assert seq == 4
    await restore()
    seq, _ = await _tampered(
        h,
        database_url,
        "UPDATE audit_entry SET seq = -2 WHERE seq = 2",  # entries 2 and 5 swap places
        "UPDATE audit_entry SET seq = 2 WHERE seq = 5",
        "UPDATE audit_entry SET seq = 5 WHERE seq = -2",
    )
    assert seq == 2
    await restore()
    last = len(kept)
    seq, said = await _tampered(h, database_url, f"DELETE FROM audit_entry WHERE seq = {last}")
    assert seq == last and "head" in said  # the last one: the chain's head still names it


async def test_decisions_at_the_same_moment_never_fork_the_chain(
    harness_factory, database_url: str
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller = await h.key(subject="svc-shop", roles="caller")
    admin = await h.key(subject="root", roles=ADMIN)
    approvers = [await h.key(subject=f"a{i}", roles="approver") for i in range(8)]
    kafka = await row(h, "Kafka")
    previews = []
    for _ in approvers:  # eight runs of the tenant, each parked on its own preview
        run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("ok"))
        previews.append(run["pending_approvals"][0]["preview_id"])
    await asyncio.gather(*(approve(h, k, p) for k, p in zip(approvers, previews, strict=True)))
    chain = await _chain(h, admin)
    assert [e["seq"] for e in chain] == list(range(1, len(chain) + 1))
    approvals = [e for e in chain if e["action"] == "approve"]
    assert sorted(e["target"] for e in approvals) == sorted(previews)
    assert _verify(database_url, "--tenant", "acme")[0] == 0

    # A decision refused changes nothing: no entry either.
    again = await h.client.post(
        f"/v1/previews/{previews[0]}/approve",
        headers=approvers[1],
        json={"content_hash": "sha256:0"},
    )
    assert again.status_code == 409
    assert await _chain(h, admin) == chain


async def test_retention_never_removes_an_entry(harness_factory, database_url: str) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory, preview_ttl_s=3600)
    caller, alice = await keys(h)
    preview_id = await _parked_move(h, caller)
    await approve(h, alice, preview_id)
    assert (await commit(h, alice, preview_id, "commit-1")).status_code == 200
    async with h.runtime.sessions.begin() as session:  # everything finished long ago
        await session.execute(text("UPDATE run SET finished_at = now() - interval '400 days'"))
    done = await retention.purge(h.runtime.sessions, retention.pass_of(h.runtime))
    assert sum(done.removed.values()) > 0
    async with h.runtime.sessions() as session:
        decided = audit_entry.c.action.in_(["approve", "commit"])
        count = select(func.count()).select_from(audit_entry).where(decided)
        left = (await session.execute(count)).scalar()
    assert left == 2 and _verify(database_url, "--tenant", "acme")[0] == 0
