"""Approvals end to end (SPEC §3.3) with the built-in write tool: nothing runs before an
approval, a commit runs exactly the approved call once, and every decision is bound to
the preview's content, its approver, its expiry and the resource version it read."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import httpx
from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.tools.builtin.tech_radar import radar_tools
from app.db.clock import DbTime
from app.db.tables import run as run_table
from tests.support.approvals import (
    WRITER,
    approvals_harness,
    approve,
    approved_kafka_move,
    commit,
    desk_env,
    events_of,
    keys,
    ledger_size,
    move,
    moved_meanwhile,
    parked_run,
    process_keys,
    row,
    ticket_harness,
)
from tests.support.backend import Answer, fail, ok, serving
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fakes import FakeClock
from tests.support.harness import make_config
from tests.support.leases import LEASE_S, crash
from tests.support.processes import free_port, server, wait_healthy
from tests.support.statements import answer_lost


async def test_nothing_runs_before_approval_and_a_commit_runs_the_approved_call_once(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("Moved [source:s1]"))

    # Parked: a pending preview, the call awaiting approval, nothing changed anywhere.
    [pending] = run["pending_approvals"]
    assert pending["tool"] == "move_technology_ring" and pending["call_id"] == "m1"
    assert (await row(h, "Kafka")) == kafka and await ledger_size(h) == 0
    [call] = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
    assert call["status"] == "awaiting_approval" and call["preview_id"] == pending["preview_id"]

    queue = (await h.client.get("/v1/approvals", headers=approver)).json()["items"]
    assert [p["id"] for p in queue] == [pending["preview_id"]]
    preview = (await h.client.get(f"/v1/previews/{pending['preview_id']}", headers=approver)).json()
    assert preview["summary"] == "Move Kafka from trial to adopt"
    assert preview["resource_version"] == str(kafka["version"])
    assert preview["arguments"]["ring"] == "adopt" and preview["requested_by"] == "svc-shop"
    assert preview["status"] == "pending" and preview["content_hash"].startswith("sha256:")
    url = f"/v1/previews/{preview['id']}"

    early = await h.client.post(f"{url}/commit", headers={**approver, "Idempotency-Key": "c-0"})
    assert early.status_code == 409 and early.json()["code"] == "preview-not-approved"
    stale = await h.client.post(
        f"{url}/approve", headers=approver, json={"content_hash": "sha256:0"}
    )
    assert stale.status_code == 409 and stale.json()["code"] == "preview-mismatch"
    approved = await h.client.post(
        f"{url}/approve", headers=approver, json={"content_hash": preview["content_hash"]}
    )
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "approved" and approved.json()["decided_by"] == "alice"
    again = await h.client.post(
        f"{url}/approve", headers=approver, json={"content_hash": preview["content_hash"]}
    )
    assert again.status_code == 409 and again.json()["code"] == "invalid-state"
    assert (await row(h, "Kafka")) == kafka  # approved, still not executed

    commit = {**approver, "Idempotency-Key": "commit-1"}
    done = await h.client.post(f"{url}/commit", headers=commit, json={"wait_s": 5})
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["preview"]["status"] == "committed" and body["preview"]["committed_by"] == "alice"
    assert body["call"]["status"] == "succeeded" and body["call"]["source_id"] == "s1"
    assert body["call"]["output"]["ring"] == "adopt"
    assert body["run"]["status"] == "finished" and body["run"]["termination_reason"] == "final"
    moved = await row(h, "Kafka")
    assert moved["ring"] == "adopt" and moved["version"] == kafka["version"] + 1
    assert await ledger_size(h) == 1

    replay = await h.client.post(f"{url}/commit", headers=commit, json={"wait_s": 5})
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    other = await h.client.post(f"{url}/commit", headers={**approver, "Idempotency-Key": "c-2"})
    assert other.status_code == 409 and other.json()["code"] == "invalid-state"
    assert (await row(h, "Kafka")) == moved and await ledger_size(h) == 1

    kinds = [(e["type"], e["data"].get("by")) for e in await events_of(h, caller, run["id"])]
    for expected in [
        ("call.proposed", None),
        ("preview.created", None),
        ("call.awaiting_approval", None),
        ("preview.approved", "alice"),
        ("call.approved", "alice"),
        ("preview.commit_requested", "alice"),
        ("preview.committed", None),
        ("run.finished", None),
    ]:
        assert expected in kinds, (expected, kinds)


async def test_the_runs_creator_may_not_approve_its_own_call_unless_the_config_allows(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    for allowed, status in ((False, 403), (True, 200)):
        h = await approvals_harness(harness_factory, allow_self_approval=allowed)
        both = await h.key(subject="svc-both", roles="caller,approver")
        kafka = await row(h, "Kafka")
        run = await parked_run(h, both, tool_calls(move(kafka["id"])), final("done"))
        preview_id = run["pending_approvals"][0]["preview_id"]
        preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=both)).json()
        answer = await h.client.post(
            f"/v1/previews/{preview_id}/approve",
            headers=both,
            json={"content_hash": preview["content_hash"]},
        )
        assert answer.status_code == status, answer.text
        if status == 403:
            assert answer.json()["code"] == "forbidden"


async def test_a_rejection_is_fed_back_to_the_model_and_the_run_goes_on(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(
        h, caller, tool_calls(move(kafka["id"])), final("Understood, Kafka stays in trial.")
    )
    preview_id = run["pending_approvals"][0]["preview_id"]
    missing = await h.client.post(f"/v1/previews/{preview_id}/reject", headers=approver, json={})
    assert missing.status_code == 422
    rejected = await h.client.post(
        f"/v1/previews/{preview_id}/reject", headers=approver, json={"reason": "not yet proven"}
    )
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert rejected.json()["reason"] == "not yet proven"
    finished = await h.driver.wait("acme", run["id"], 10)
    assert finished.termination_reason == "final"
    [call] = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
    assert call["status"] == "rejected"
    assert call["error"] == {
        "code": "rejected_by_approver",
        "message": "not yet proven",
        "retryable": False,
    }
    assert (await row(h, "Kafka")) == kafka and await ledger_size(h) == 0


async def test_roles_and_tenants_bound_who_sees_and_decides(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("done"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=caller)).json()
    url = f"/v1/previews/{preview_id}"
    body = {"content_hash": preview["content_hash"]}

    by_caller = await h.client.post(f"{url}/approve", headers=caller, json=body)
    assert by_caller.status_code == 403 and by_caller.json()["code"] == "forbidden"
    assert (await h.client.get("/v1/approvals", headers=caller)).status_code == 403

    stranger = await h.key(tenant="globex", subject="bob", roles="caller,approver")
    assert (await h.client.get(url, headers=stranger)).status_code == 404
    assert (await h.client.post(f"{url}/approve", headers=stranger, json=body)).status_code == 404
    reject = await h.client.post(f"{url}/reject", headers=stranger, json={"reason": "x"})
    assert reject.status_code == 404
    commit = await h.client.post(f"{url}/commit", headers={**stranger, "Idempotency-Key": "s"})
    assert commit.status_code == 404
    assert (await h.client.get("/v1/approvals", headers=stranger)).json()["items"] == []
    still = (await h.client.get(url, headers=approver)).json()
    assert still["status"] == "pending" and still["decided_by"] is None


async def test_a_resource_changed_since_the_preview_supersedes_it_with_a_new_one(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    _, approver, kafka, first = await approved_kafka_move(h)
    await moved_meanwhile(h, kafka["id"], "assess")

    conflict = await commit(h, approver, first, "commit-1")
    assert conflict.status_code == 409 and conflict.json()["code"] == "version-conflict"
    second = conflict.json()["new_preview_id"]
    old = (await h.client.get(f"/v1/previews/{first}", headers=approver)).json()
    assert old["status"] == "superseded" and old["superseded_by"] == second
    new = (await h.client.get(f"/v1/previews/{second}", headers=approver)).json()
    assert new["status"] == "pending" and new["supersedes"] == first
    assert new["resource_version"] == str(kafka["version"] + 1)
    assert new["summary"] == "Move Kafka from assess to adopt"
    assert (await row(h, "Kafka"))["ring"] == "assess" and await ledger_size(h) == 0

    await approve(h, approver, second)
    done = await commit(h, approver, second, "commit-2")
    assert done.status_code == 200, done.text
    assert done.json()["run"]["termination_reason"] == "final"
    moved = await row(h, "Kafka")
    assert (moved["ring"], moved["version"]) == ("adopt", kafka["version"] + 2)
    assert await ledger_size(h) == 1


async def test_an_expired_preview_cannot_be_decided_and_its_call_is_fed_back(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    config = make_config({"tech-radar": WRITER}, approvals={"preview_ttl_s": 60})
    h = await harness_factory(config=config, clock_=clock, run_driver=False)
    await seed_radar(h)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(
        h, caller, tool_calls(move(kafka["id"])), final("The approval expired; nothing moved.")
    )
    preview_id = run["pending_approvals"][0]["preview_id"]
    preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    clock.advance(61)

    late = await h.client.post(
        f"/v1/previews/{preview_id}/approve",
        headers=approver,
        json={"content_hash": preview["content_hash"]},
    )
    assert late.status_code == 410 and late.json()["code"] == "preview-expired"
    listed = (await h.client.get("/v1/approvals?status=expired", headers=approver)).json()
    assert [p["id"] for p in listed["items"]] == [preview_id]

    assert await h.driver.poll_once() == 0  # makes the parked run runnable
    assert await h.driver.poll_once() == 1  # and this one takes it up
    finished = await h.driver.wait("acme", run["id"], 10)
    assert finished.termination_reason == "final"
    [call] = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
    assert call["status"] == "rejected" and call["error"]["code"] == "approval_expired"
    stored = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    assert stored["status"] == "expired"
    assert (await row(h, "Kafka")) == kafka


async def test_a_parked_run_whose_deadline_passes_ends_deadline_and_its_preview_expires(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock()
    config = make_config({"tech-radar": WRITER})
    h = await harness_factory(config=config, clock_=clock, run_driver=False)
    await seed_radar(h)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    body = run_body(tool_calls(move(kafka["id"])), final("done"), limits={"deadline_s": 30})
    run = (await h.client.post("/v1/runs", headers=caller, json=body)).json()
    preview_id = run["pending_approvals"][0]["preview_id"]
    preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    assert preview["expires_at"] == run["deadline_at"]  # never later than the deadline
    clock.advance(31)

    assert await h.driver.poll_once() == 0  # makes the parked run runnable
    assert await h.driver.poll_once() == 1  # and this one takes it up
    finished = await h.driver.wait("acme", run["id"], 10)
    assert finished.termination_reason == "deadline"
    stored = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    assert stored["status"] == "expired"


async def test_cancelling_a_parked_run_ends_it_and_expires_its_preview(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("done"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    cancelled = await h.client.post(f"/v1/runs/{run['id']}/cancel", headers=caller)
    assert cancelled.status_code == 200
    assert cancelled.json()["termination_reason"] == "cancelled"
    assert cancelled.json()["pending_approvals"] == []
    stored = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    assert stored["status"] == "expired"
    [call] = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
    assert call["status"] == "cancelled"


async def test_two_approvals_in_one_turn_are_previewed_one_after_the_other(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka, graphql = await row(h, "Kafka"), await row(h, "GraphQL")
    run = await parked_run(
        h,
        caller,
        tool_calls(move(kafka["id"], call_id="m1"), move(graphql["id"], "trial", call_id="m2")),
        final("Both moved [source:s1] [source:s2]"),
    )
    [first] = run["pending_approvals"]
    assert first["call_id"] == "m1"  # the second waits behind it, not previewed yet
    calls = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
    assert [(c["call_id"], c["status"]) for c in calls] == [
        ("m1", "awaiting_approval"),
        ("m2", "pending"),
    ]
    await approve(h, approver, first["preview_id"])
    done = await commit(h, approver, first["preview_id"], "c-1")
    assert done.status_code == 200, done.text
    parked = done.json()["run"]
    assert parked["status"] == "awaiting_approval"
    [second] = parked["pending_approvals"]
    assert second["call_id"] == "m2"
    await approve(h, approver, second["preview_id"])
    final_answer = await commit(h, approver, second["preview_id"], "c-2")
    assert final_answer.json()["run"]["termination_reason"] == "final"
    assert (await row(h, "Kafka"))["ring"] == "adopt"
    assert (await row(h, "GraphQL"))["ring"] == "trial"
    calls = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
    assert [(c["call_id"], c["source_id"]) for c in calls] == [("m1", "s1"), ("m2", "s2")]


async def test_an_http_tool_gets_the_preview_and_the_approver_at_commit_and_runs_once(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await ticket_harness(harness_factory, backend)
        caller, approver = await keys(h)
        run = await parked_run(
            h, caller, tool_calls(("t1", "ticket", {"q": "refund"})), final("Opened [source:s1]")
        )
        assert backend.sent("ticket") == [] and backend.effects == {}  # nothing executed
        [asked] = backend.previewed
        assert asked.body["arguments"] == {"q": "refund"} and asked.body["preview"] is None
        assert asked.body["principal"] == {"tenant": "acme", "subject": "svc-shop"}
        preview_id = run["pending_approvals"][0]["preview_id"]
        preview = await approve(h, approver, preview_id)
        assert preview["summary"] == 'ticket with {"q": "refund"}'
        done = await commit(h, caller, preview_id, "commit-1")  # a caller may commit
        assert done.status_code == 200, done.text
        assert done.json()["run"]["termination_reason"] == "final"
        [sent] = backend.sent("ticket")
        assert sent.body["arguments"] == {"q": "refund"}
        assert sent.body["preview"] == {"id": preview_id, "resource_version": "1"}
        assert sent.body["approved_by"] == {"tenant": "acme", "subject": "alice"}
        assert sent.body["principal"] == {"tenant": "acme", "subject": "svc-shop"}
        assert sent.headers["idempotency-key"] == sent.body["operation_id"]
        assert len(backend.effects) == 1


async def test_an_http_backends_version_conflict_supersedes_the_preview(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await ticket_harness(harness_factory, backend)
        caller, approver = await keys(h)
        run = await parked_run(h, caller, tool_calls(("t1", "ticket", {"q": "x"})), final("ok"))
        first = run["pending_approvals"][0]["preview_id"]
        await approve(h, approver, first)
        backend.answer("ticket", fail(409, "version_conflict", "the order changed"))
        backend.preview_script["ticket"] = [
            Answer(200, {"summary": "ticket x, order v2", "resource_version": "2"})
        ]
        conflict = await commit(h, approver, first, "commit-1")
        assert conflict.status_code == 409 and conflict.json()["code"] == "version-conflict"
        second = conflict.json()["new_preview_id"]
        new = (await h.client.get(f"/v1/previews/{second}", headers=approver)).json()
        assert (new["resource_version"], new["status"]) == ("2", "pending")
        assert backend.effects == {}
        await approve(h, approver, second)
        done = await commit(h, approver, second, "commit-2")
        assert done.status_code == 200 and done.json()["call"]["status"] == "succeeded"
        assert [r.body["preview"]["resource_version"] for r in backend.sent("ticket")] == [
            "1",
            "2",
        ]
        assert len(backend.effects) == 1


async def test_concurrent_commits_of_one_preview_in_two_processes_execute_once(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        a = await ticket_harness(harness_factory, backend)
        b = await ticket_harness(harness_factory, backend)  # a second replica, same database
        caller, approver = await keys(a)
        run = await parked_run(a, caller, tool_calls(("t1", "ticket", {"q": "x"})), final("ok"))
        preview_id = run["pending_approvals"][0]["preview_id"]
        await approve(a, approver, preview_id)
        backend.answer("ticket", ok({"ticket": 1}, source_version="1"))
        backend.script["ticket"][0].delay_s = 0.3  # both commits are in flight together

        answers = await asyncio.gather(
            commit(a, approver, preview_id, "commit-a"),
            commit(b, approver, preview_id, "commit-b"),
        )
        assert sorted(r.status_code for r in answers) == [200, 409]
        [refused] = [r for r in answers if r.status_code == 409]
        assert refused.json()["code"] == "invalid-state"
        assert len(backend.sent("ticket")) == 1 and len(backend.effects) == 1


async def test_a_process_gone_after_the_approval_or_during_the_commit_loses_nothing(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        a = await ticket_harness(harness_factory, backend, run_driver=False)
        caller, approver = await keys(a)
        run = await parked_run(a, caller, tool_calls(("t1", "ticket", {"q": "x"})), final("ok"))
        preview_id = run["pending_approvals"][0]["preview_id"]
        await approve(a, approver, preview_id)
        # The approving process is gone: another commits, with the approval as recorded.
        b = await ticket_harness(harness_factory, backend, run_driver=False)
        backend.answer("ticket", Answer(200, {"output": {"ticket": 1}}, delay_s=30))
        committing = asyncio.create_task(commit(b, approver, preview_id, "commit-1"))
        await backend.wait_sent("ticket")
        await crash(b, run["id"])  # b dies with the call in flight

        # A third process takes the run up once b's lease lapses: the call is sent again
        # under the same operation id (the tool is idempotent) and nothing runs twice.
        c = await ticket_harness(
            harness_factory, backend, run_driver=False, db_time=DbTime(LEASE_S + 1)
        )
        backend.script["ticket"] = []
        assert await c.driver.poll_once() == 1
        finished = await c.driver.wait("acme", run["id"], 10)
        assert finished.termination_reason == "final"
        sent = backend.sent("ticket")
        assert len(sent) == 2 and len({s.headers["idempotency-key"] for s in sent}) == 1
        assert len(backend.effects) == 1
        committing.cancel()
        await asyncio.gather(committing, return_exceptions=True)
        stored = (await c.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
        assert stored["status"] == "committed" and stored["committed_by"] == "alice"


async def test_a_backends_preview_is_checked_and_its_expiry_honoured(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await ticket_harness(harness_factory, backend)
        caller, approver = await keys(h)
        backend.preview_script["ticket"] = [
            Answer(200, {"summary": 42}),  # not the documented shape
            Answer(200, {"summary": "refund", "resource_version": "3", "expires_in_s": 30}),
        ]
        script = [
            tool_calls(("t1", "ticket", {"q": "a"})),
            tool_calls(("t2", "ticket", {"q": "b"})),
            final("done"),
        ]
        run = await parked_run(h, caller, *script)
        calls = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()
        first = calls["items"][0]
        assert first["status"] == "failed" and first["error"]["code"] == "invalid_preview"
        [pending] = run["pending_approvals"]
        preview = await h.client.get(f"/v1/previews/{pending['preview_id']}", headers=approver)
        made = datetime.fromisoformat(preview.json()["created_at"])
        expires = datetime.fromisoformat(preview.json()["expires_at"])
        assert abs((expires - made).total_seconds() - 30) < 0.01  # the tool's own limit
        assert backend.sent("ticket") == []


async def test_commits_of_one_preview_through_two_server_processes_execute_once(
    db: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    caller, approver = await process_keys(db)
    async with serving() as backend:
        backend.answer("ticket", Answer(200, {"output": {"ticket": 1}}, delay_s=0.5))
        env = desk_env(backend, database_url, tmp_path)
        ports = [free_port(), free_port()]
        with (
            server(["serve", "--port", str(ports[0])], env),
            server(["serve", "--port", str(ports[1])], env),
        ):
            bases = [f"http://127.0.0.1:{p}" for p in ports]
            for base in bases:
                await wait_healthy(base)
            async with httpx.AsyncClient(timeout=30) as http:
                body = {
                    "agent": "desk",
                    "input": "refund",
                    "wait_s": 5,
                    "script": [tool_calls(("t1", "ticket", {"q": "x"})), final("ok")],
                }
                created = await http.post(
                    f"{bases[0]}/v1/runs", headers={**caller, "Idempotency-Key": "r1"}, json=body
                )
                preview_id = created.json()["pending_approvals"][0]["preview_id"]
                url = f"/v1/previews/{preview_id}"
                preview = (await http.get(f"{bases[0]}{url}", headers=approver)).json()
                approved = await http.post(
                    f"{bases[1]}{url}/approve",
                    headers=approver,
                    json={"content_hash": preview["content_hash"]},
                )
                assert approved.status_code == 200, approved.text
                answers = await asyncio.gather(
                    *(
                        http.post(
                            f"{base}{url}/commit",
                            headers={**approver, "Idempotency-Key": f"commit-{i}"},
                            json={"wait_s": 5},
                        )
                        for i, base in enumerate(bases)
                    )
                )
        assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
        [done] = [a.json() for a in answers if a.status_code == 200]
        assert done["call"]["status"] == "succeeded"
        assert len(backend.sent("ticket")) == 1 and len(backend.effects) == 1


async def test_the_queue_is_newest_first_and_pages_with_a_cursor(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    made = []
    for name, ring in (("Kafka", "assess"), ("GraphQL", "hold"), ("CORBA", "assess")):
        tech = await row(h, name)
        run = await parked_run(h, caller, tool_calls(move(tech["id"], ring)), final("ok"))
        made.append(run["pending_approvals"][0]["preview_id"])
    first = (await h.client.get("/v1/approvals?limit=2", headers=approver)).json()
    assert [p["id"] for p in first["items"]] == made[::-1][:2]
    rest = await h.client.get(
        "/v1/approvals", params={"limit": 2, "cursor": first["next_cursor"]}, headers=approver
    )
    assert [p["id"] for p in rest.json()["items"]] == made[:1]
    assert rest.json()["next_cursor"] is None
    bad = await h.client.get("/v1/approvals?cursor=nonsense", headers=approver)
    assert bad.status_code == 422 and bad.json()["errors"][0]["path"] == "cursor"
    assert (await h.client.get("/v1/approvals?status=approved", headers=approver)).json()[
        "items"
    ] == []


async def test_a_conflict_with_no_new_preview_possible_still_answers_version_conflict(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("It was moved already."))
    preview_id = run["pending_approvals"][0]["preview_id"]
    await approve(h, approver, preview_id)
    await moved_meanwhile(h, kafka["id"], "adopt")  # to where the call would move it
    conflict = await commit(h, approver, preview_id, "commit-1")
    assert conflict.status_code == 409 and conflict.json()["code"] == "version-conflict"
    assert conflict.json()["new_preview_id"] is None
    stored = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    assert stored["status"] == "superseded"
    finished = await h.driver.wait("acme", run["id"], 10)
    assert finished.termination_reason == "final"
    [call] = (await h.client.get(f"/v1/runs/{run['id']}/calls", headers=caller)).json()["items"]
    assert call["status"] == "failed" and call["error"]["code"] == "no_change"
    assert await ledger_size(h) == 0


async def test_a_cancel_that_lands_while_the_run_parks_still_ends_it(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, _ = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("done"))
    # As if the cancel was recorded between the preview and the park, its notice lost.
    async with h.runtime.sessions.begin() as session:
        await session.execute(
            update(run_table)
            .where(run_table.c.id == run["id"])
            .values(cancel_requested_at=func.now())
        )
    await h.driver.poll_once()  # makes it runnable
    await h.driver.poll_once()  # takes it up
    finished = await h.driver.wait("acme", run["id"], 10)
    assert finished.termination_reason == "cancelled"


async def test_an_approved_call_whose_tool_left_the_config_expires_its_preview(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """Approved, never committed, then its tool is gone from the process that takes the
    run up: the call fails `tool_unavailable` and the preview expires; it is not marked
    committed, since no commit ever ran it."""
    clock = FakeClock()
    config = make_config({"tech-radar": WRITER}, approvals={"preview_ttl_s": 30})
    h = await harness_factory(config=config, run_driver=False)  # only `other` takes runs up
    await seed_radar(h)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("done"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    await approve(h, approver, preview_id)

    def without_move(sessions, clock_):  # type: ignore[no-untyped-def]
        tools = radar_tools(sessions, clock_)
        return {n: t for n, t in tools.items() if n != "move_technology_ring"}

    clock.advance(60)  # past the preview's expiry (not the run's deadline), over there
    other = await harness_factory(
        config=config,
        tools=without_move,
        clock_=clock,
        run_driver=False,
    )
    assert await other.driver.poll_once() == 0  # makes the parked run runnable
    assert await other.driver.poll_once() == 1  # and this one takes it up
    finished = await other.driver.wait("acme", run["id"], 10)
    assert finished.error["code"] == "tool_unavailable"
    stored = (await h.client.get(f"/v1/previews/{preview_id}", headers=approver)).json()
    assert stored["status"] == "expired" and stored["committed_at"] is None
    assert await ledger_size(h) == 0


async def test_another_tenants_preview_is_no_such_preview_on_every_route(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("Moved [source:s1]"))
    [pending] = run["pending_approvals"]
    preview = (await h.client.get(f"/v1/previews/{pending['preview_id']}", headers=approver)).json()
    other = await h.key(tenant="globex", subject="bob", roles="caller,approver")

    async def answers(preview_id: str) -> list[httpx.Response]:
        url = f"/v1/previews/{preview_id}"
        return [
            await h.client.get(url, headers=other),
            await h.client.post(
                f"{url}/approve", headers=other, json={"content_hash": preview["content_hash"]}
            ),
            await h.client.post(f"{url}/reject", headers=other, json={"reason": "no"}),
            await h.client.post(
                f"{url}/commit", headers={**other, "Idempotency-Key": f"c-{preview_id}"}
            ),
        ]

    foreign = await answers(preview["id"])
    unknown = await answers("prv_doesnotexist")
    for theirs, missing in zip(foreign, unknown, strict=True):
        assert theirs.status_code == missing.status_code == 404, theirs.text
        assert theirs.json()["code"] == "not-found"
        assert theirs.json()["detail"] == missing.json()["detail"] == "no such preview"
    still = (await h.client.get(f"/v1/previews/{preview['id']}", headers=approver)).json()
    assert still["status"] == "pending" and await ledger_size(h) == 0


async def test_a_commit_whose_run_history_does_not_load_hands_the_run_back_at_once(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    # The commit's transaction leases the run to this process; reading its history then
    # fails once. The lease is handed back at once (a poll takes the run up, here or
    # elsewhere), rather than lapsing in 30 s, and the commit is answered, not failed.
    h = await approvals_harness(harness_factory)
    _, approver, _, preview_id = await approved_kafka_move(h)
    with answer_lost(h.app.state.engine, "FROM turn") as hit:
        done = await commit(h, approver, preview_id, "commit-1")
    assert len(hit) == 1  # the history's read failed once
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["preview"]["status"] == "committed"
    assert body["run"]["status"] == "finished" and body["run"]["termination_reason"] == "final"
    assert (await row(h, "Kafka"))["ring"] == "adopt" and await ledger_size(h) == 1
