"""Every gate holds at every moment: the kill switch, the config's `enabled` and the
tool's permissions stop a call right before it leaves and at the claim of a commit, not
only at its proposal; a side effect that took effect is never reported as failed; an
unknown outcome is looked up before anything is sent again; one operation id travels with
one body; writes keep to their bulkhead; previews say what became of their call; and a
commit request is answered within its wait."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import update

from app.db.tables import run as run_table
from tests.support.approvals import (
    approve,
    commit,
    events_of,
    keys,
    parked_run,
    ticket_tool,
)
from tests.support.backend import Answer, FakeBackend, ok, serving
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config
from tests.support.statements import commit_answer_lost

OUTPUT = {
    "type": "object",
    "required": ["ticket_id"],
    "properties": {"ticket_id": {"type": "string"}},
}


def tools_of(backend: FakeBackend, **overrides: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`ticket` (needs approval), `note` (a side effect without approval) and `lookup` (a
    read), each changed by `overrides[name]`."""
    base = ticket_tool(backend)
    plain = {k: v for k, v in base.items() if k not in ("preview_url", "risk")}
    tools = {
        "ticket": base,
        "note": {**plain, "url": backend.tool_url("note"), "description": "Adds a note."},
        "lookup": {
            **plain,
            "url": backend.tool_url("lookup"),
            "description": "Looks up.",
            "side_effects": False,
            "idempotent": False,
        },
    }
    return {name: {**spec, **overrides.get(name, {})} for name, spec in tools.items()}


async def desk(harness_factory, backend: FakeBackend, **overrides: Any) -> Harness:  # type: ignore[no-untyped-def]
    options = overrides.pop("options", {})
    tools = tools_of(backend, **overrides)
    agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], *tools]}
    return await harness_factory(config=make_config({"tech-radar": agent}, tools=tools), **options)


async def approved(
    h: Harness, caller: dict[str, str], approver: dict[str, str], q: str = "x"
) -> tuple[dict[str, Any], str]:
    """A run parked on a `ticket` call, its preview approved: the run and the preview id."""
    run = await parked_run(h, caller, tool_calls(("t1", "ticket", {"q": q})), final("ok"))
    preview_id = run["pending_approvals"][0]["preview_id"]
    await approve(h, approver, preview_id)
    return run, preview_id


async def calls_of(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, dict[str, Any]]:
    answer = await h.client.get(f"/v1/runs/{run_id}/calls", headers=headers)
    return {c["call_id"]: c for c in answer.json()["items"]}


async def preview_of(h: Harness, headers: dict[str, str], preview_id: str) -> dict[str, Any]:
    return (await h.client.get(f"/v1/previews/{preview_id}", headers=headers)).json()


async def switch_off(h: Harness, tool: str) -> None:
    admin = await h.key(subject="root", roles="admin")
    answer = await h.client.post(f"/v1/tools/{tool}/disable", headers=admin)
    assert answer.status_code == 200, answer.text


async def finished(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    run = await h.driver.wait("acme", run_id, 10)
    assert run.status == "finished", run
    return (await h.client.get(f"/v1/runs/{run_id}", headers=headers)).json()


async def switched_mid_run(
    a: Harness,
    b: Harness,
    backend: FakeBackend,
    *script: dict[str, Any],
    sent: str,
    off: str,
    then: asyncio.Event | None = None,
) -> tuple[str, dict[str, Any]]:
    """Starts a run on `a`; once `sent` is in flight, `off` is switched off on the other
    replica `b` (and `then` set, for an answer held until now): the run's id and the run
    as it finished."""
    headers = await a.key()
    body = {**run_body(*script), "wait_s": 0}
    run_id = (await a.client.post("/v1/runs", headers=headers, json=body)).json()["id"]
    await backend.wait_sent(sent)
    await switch_off(b, off)
    if then is not None:
        then.set()
    return run_id, await finished(a, headers, run_id)


# -- 1. switches and permissions hold until the request leaves ---------------------------


async def test_a_tool_switched_off_after_the_approval_is_not_committed(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        caller, approver = await keys(h)
        run, preview_id = await approved(h, caller, approver)
        await switch_off(h, "ticket")  # the incident: an admin stops the tool

        refused = await commit(h, approver, preview_id, "commit-1")
        assert refused.status_code == 409, refused.text
        problem = refused.json()
        assert problem["code"] == "invalid-state"
        assert problem["call_error"]["code"] == "tool_disabled"
        assert backend.sent("ticket") == []
        # The refusal changed state: a retry under its key hears it again, not `expired`.
        again = await commit(h, approver, preview_id, "commit-1")
        assert (again.status_code, again.json()) == (409, problem)
        assert again.headers["idempotent-replayed"] == "true"
        assert again.headers["content-type"].startswith("application/problem+json")
        assert (await preview_of(h, approver, preview_id))["status"] == "expired"
        # The run goes on: its model hears why, and answers.
        done = await finished(h, caller, run["id"])
        assert done["termination_reason"] == "final"
        call = (await calls_of(h, caller, run["id"]))["t1"]
        assert call["status"] == "failed" and call["error"]["code"] == "tool_disabled"
        types = [e["type"] for e in await events_of(h, caller, run["id"])]
        assert "preview.expired" in types and "preview.committed" not in types


async def test_a_switch_thrown_on_another_process_stops_the_commit(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        a = await desk(harness_factory, backend)
        b = await desk(harness_factory, backend)  # another replica on the same database
        caller, approver = await keys(a)
        run, preview_id = await approved(a, caller, approver)
        assert await a.runtime.disabled_tools.of("acme") == frozenset()  # a's copy: on
        await switch_off(b, "ticket")
        refused = await commit(a, approver, preview_id, "commit-1")
        assert (
            refused.status_code == 409 and refused.json()["call_error"]["code"] == "tool_disabled"
        )
        assert backend.sent("ticket") == []


async def test_a_tool_turned_off_in_the_config_or_out_of_scope_is_not_committed(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        a = await desk(harness_factory, backend)
        _, approver = await keys(a)
        caller = await a.key(subject="svc-shop", roles="caller", scopes=["radar:read"])
        runs = [
            await parked_run(a, caller, tool_calls(("t1", "ticket", {"q": q})), final("ok"))
            for q in ("x", "y")
        ]
        for run in runs:
            await approve(a, approver, run["pending_approvals"][0]["preview_id"])
        # The operator restarts with the tool off; another with a permission nobody has.
        off = await desk(harness_factory, backend, ticket={"enabled": False})
        scoped = await desk(harness_factory, backend, ticket={"permissions": ["tickets:write"]})
        for h, run, code in (
            (off, runs[0], "tool_disabled"),
            (scoped, runs[1], "permission_denied"),
        ):
            preview_id = run["pending_approvals"][0]["preview_id"]
            refused = await commit(h, approver, preview_id, f"commit-{code}")
            assert refused.status_code == 409, refused.text
            assert refused.json()["call_error"]["code"] == code
            assert (await preview_of(h, approver, preview_id))["status"] == "expired"
        assert backend.sent("ticket") == []


async def test_a_later_call_of_the_turn_is_stopped_by_a_switch_thrown_meanwhile(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        a = await desk(harness_factory, backend)
        b = await desk(harness_factory, backend)
        headers = await a.key()
        read = asyncio.Event()  # answered once the switch is thrown
        backend.answer("lookup", Answer(200, {"output": {"found": 1}}, hold=read))
        calls = tool_calls(("r1", "lookup", {"q": "x"}), ("w1", "note", {"q": "x"}))
        # The read is in flight, the note waits behind it: the switch is thrown on b.
        run_id, done = await switched_mid_run(
            a, b, backend, calls, final("ok"), sent="lookup", off="note", then=read
        )
        assert done["termination_reason"] == "final"
        calls = await calls_of(a, headers, run_id)
        assert calls["r1"]["status"] == "succeeded"
        assert calls["w1"]["status"] == "failed" and calls["w1"]["error"]["code"] == "tool_disabled"
        assert backend.sent("note") == []


# -- 2. a side effect that took effect is never reported as failed ------------------------


async def test_a_side_effect_whose_answer_breaks_its_schema_succeeds_with_its_output_withheld(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(
            harness_factory,
            backend,
            note={"output_schema": OUTPUT},
            lookup={"output_schema": OUTPUT, "max_output_bytes": 64},
        )
        headers = await h.key()
        backend.answer("note", ok({"unexpected": True}))  # made, but not as declared
        backend.answer("note", ok({"ticket_id": "x" * 100_000}))  # made, far too large
        backend.answer("lookup", ok({"unexpected": True}))
        script = [
            tool_calls(("w1", "note", {"q": "a"})),
            tool_calls(("w2", "note", {"q": "b"})),
            tool_calls(("r1", "lookup", {"q": "c"})),
            final("ok"),
        ]
        created = await h.client.post("/v1/runs", headers=headers, json=run_body(*script))
        run = created.json()
        assert run["termination_reason"] == "final", run
        calls = await calls_of(h, headers, run["id"])
        for call_id in ("w1", "w2"):
            call = calls[call_id]
            assert (call["status"], call["output"], call["output_withheld"]) == (
                "succeeded",
                None,
                True,
            )
        # A read changed nothing: a bad answer of its is an error the model may act on.
        assert (
            calls["r1"]["status"] == "failed" and calls["r1"]["error"]["code"] == "invalid_output"
        )
        assert calls["r1"]["output_withheld"] is False
        succeeded = [
            e["data"]
            for e in await events_of(h, headers, run["id"])
            if e["type"] == "call.succeeded"
        ]
        assert [(d["call_id"], d.get("code")) for d in succeeded] == [
            ("w1", "invalid_output"),
            ("w2", "output_too_large"),
        ]
        assert all(d["output_withheld"] for d in succeeded)
        assert len(backend.sent("note")) == 2  # each sent once, never again


# -- 3. unknown outcomes are looked up first, idempotent tools too -------------------------


async def test_an_idempotent_side_effect_cut_by_its_timeout_is_looked_up_not_resent(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        lookup = {"status_url": f"{backend.url}/operations", "timeout_s": 0.5}
        h = await desk(harness_factory, backend, note=lookup)
        headers = await h.key()
        backend.answer("note", Answer(200, {"output": {"id": "N-1"}}, delay_s=3))
        script = [tool_calls(("w1", "note", {"q": "a"})), final("ok [source:s1]")]
        created = await h.client.post("/v1/runs", headers=headers, json=run_body(*script))
        run = created.json()
        assert run["termination_reason"] == "final", run
        assert len(backend.sent("note")) == 1 and backend.looked_up != []
        call = (await calls_of(h, headers, run["id"]))["w1"]
        assert call["status"] == "succeeded" and call["output"] == {"id": "N-1"}


# -- 4. one operation id, one body ---------------------------------------------------------


async def test_a_call_recommitted_after_a_version_conflict_gets_a_new_operation_id(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        caller, approver = await keys(h)
        run = await parked_run(h, caller, tool_calls(("t1", "ticket", {"q": "x"})), final("ok"))
        first = run["pending_approvals"][0]["preview_id"]
        await approve(h, approver, first)
        backend.answer("ticket", Answer(409, {"code": "version_conflict", "message": "moved"}))
        backend.preview_script["ticket"] = [
            Answer(200, {"summary": "ticket x, v2", "resource_version": "2"})
        ]
        conflict = await commit(h, approver, first, "commit-1")
        assert conflict.status_code == 409 and conflict.json()["code"] == "version-conflict"
        second = conflict.json()["new_preview_id"]
        await approve(h, approver, second)
        done = await commit(h, approver, second, "commit-2")
        assert done.status_code == 200 and done.json()["call"]["status"] == "succeeded"
        sent = backend.sent("ticket")
        bodies: dict[str, list[Any]] = {}
        for request in sent:
            key = request.headers["idempotency-key"]
            assert key == request.body["operation_id"]
            bodies.setdefault(key, []).append(request.body["preview"])
        assert len(sent) == 2 and len(bodies) == 2  # two bodies, two operation ids
        assert done.json()["call"]["operation_id"] == sent[1].headers["idempotency-key"]


# -- 7. write bulkheads ------------------------------------------------------------------


async def test_side_effects_of_many_runs_keep_to_their_concurrency_group(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        group = {"concurrency_group": "notes", "max_concurrency": 2}
        h = await desk(harness_factory, backend, note=group)
        headers = await h.key()
        backend.echo_delays["note"] = {"n": 0.1}
        body = run_body(tool_calls(("w1", "note", {"q": "n"})), final("ok"))
        body["wait_s"] = 0
        created = await asyncio.gather(
            *(h.client.post("/v1/runs", headers=headers, json=body) for _ in range(64))
        )
        for answer in created:
            assert answer.status_code == 201
            run = await h.driver.wait("acme", answer.json()["id"], 60)
            assert run.termination_reason == "final"
        assert len(backend.sent("note")) == 64
        assert backend.peak["note"] == 2


# -- 9. preview states tell the truth ----------------------------------------------------


async def test_a_committed_call_cancelled_before_it_ran_leaves_its_preview_expired(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        caller, approver = await keys(h)
        run, preview_id = await approved(h, caller, approver)
        # A cancel lands between the claim of the commit and the call's execution.
        async with h.runtime.sessions.begin() as session:
            await session.execute(
                update(run_table)
                .where(run_table.c.id == run["id"])
                .values(cancel_requested_at=h.runtime.clock.now())
            )
        await commit(h, approver, preview_id, "commit-1")
        done = await finished(h, caller, run["id"])
        assert done["termination_reason"] == "cancelled"
        assert backend.sent("ticket") == []
        assert (await calls_of(h, caller, run["id"]))["t1"]["status"] == "cancelled"
        assert (await preview_of(h, approver, preview_id))["status"] == "expired"


async def test_a_committed_call_refused_by_the_budget_leaves_its_preview_expired(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend, ticket={"cost_usd": 5})  # more than the run has
        caller, approver = await keys(h)
        run, preview_id = await approved(h, caller, approver)
        done = await commit(h, approver, preview_id, "commit-1")
        assert done.status_code == 200, done.text
        assert done.json()["run"]["termination_reason"] == "budget"
        assert done.json()["call"]["status"] == "cancelled"
        assert backend.sent("ticket") == []
        assert (await preview_of(h, approver, preview_id))["status"] == "expired"


async def test_a_preview_being_committed_is_not_shown_expired_by_the_clock(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        caller, approver = await keys(h)
        backend.preview_script["ticket"] = [
            Answer(200, {"summary": "ticket x", "resource_version": "1", "expires_in_s": 10})
        ]
        run, preview_id = await approved(h, caller, approver)
        sent = asyncio.Event()  # answered once the test has looked
        backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, hold=sent))
        committing = asyncio.create_task(commit(h, approver, preview_id, "commit-1"))
        await backend.wait_sent("ticket")
        h.runtime.clock.advance(30)  # the preview's expiry passes while it is committed
        seen = await preview_of(h, approver, preview_id)
        assert seen["status"] == "approved", seen
        expired = await h.client.get("/v1/approvals?status=expired", headers=approver)
        assert expired.json()["items"] == []
        sent.set()
        done = await committing
        assert done.status_code == 200 and done.json()["call"]["status"] == "succeeded"
        assert (await preview_of(h, approver, preview_id))["status"] == "committed"


# -- 11. a commit request waits at most its wait_s plus the tool's timeout ---------------------


async def test_a_commit_request_is_answered_within_its_wait_and_the_tools_timeout(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        # Each attempt times out (1 s), and the idempotent call is tried three times.
        h = await desk(harness_factory, backend, ticket={"timeout_s": 1, "max_attempts": 3})
        caller, approver = await keys(h)
        run, preview_id = await approved(h, caller, approver)
        for _ in range(3):
            backend.answer("ticket", Answer(200, {"output": {"id": "T-1"}}, delay_s=5))
        started = time.monotonic()
        answer = await h.client.post(
            f"/v1/previews/{preview_id}/commit",
            headers={**approver, "Idempotency-Key": "commit-1"},
            json={"wait_s": 0},
        )
        took = time.monotonic() - started
        assert answer.status_code == 200, answer.text
        assert took < 2.5, took  # three attempts with backoff would take more than 3 s
        assert answer.json()["call"]["status"] == "executing"


async def test_an_output_postgres_cannot_store_is_refused_not_a_failed_write(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        headers = await h.key()
        unpaired = b'{"output": {"name": "\\ud800"}}'  # valid JSON, not storable text
        backend.answer("lookup", Answer(200, raw=unpaired))
        backend.answer("note", Answer(200, raw=unpaired))
        backend.answer("lookup", Answer(400, raw=b'{"code": "down", "message": "x\\ud800"}'))
        script = [
            tool_calls(("r1", "lookup", {"q": "a"})),
            tool_calls(("w1", "note", {"q": "b"})),
            tool_calls(("r2", "lookup", {"q": "c"})),
            final("ok"),
        ]
        created = await h.client.post("/v1/runs", headers=headers, json=run_body(*script))
        run = created.json()
        assert run["termination_reason"] == "final", run
        calls = await calls_of(h, headers, run["id"])
        assert (calls["r1"]["status"], calls["r1"]["error"]["code"]) == ("failed", "invalid_output")
        assert (calls["w1"]["status"], calls["w1"]["output_withheld"]) == ("succeeded", True)
        assert calls["r2"]["error"]["message"] == "x"


async def test_an_idempotent_side_effect_whose_lookup_cannot_tell_is_not_resent(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        lookup = {"status_url": f"{backend.url}/operations", "timeout_s": 0.5}
        h = await desk(harness_factory, backend, note=lookup)
        headers = await h.key()
        backend.in_progress_for = 1000  # the backend never says more than "in progress"
        backend.answer("note", Answer(200, {"output": {"id": "N-1"}}, delay_s=5))
        script = [tool_calls(("w1", "note", {"q": "a"})), final("ok")]
        created = await h.client.post("/v1/runs", headers=headers, json=run_body(*script))
        run = created.json()
        assert run["termination_reason"] == "tool_failed", run
        assert run["error"]["code"] == "outcome_unknown"
        assert len(backend.sent("note")) == 1 and len(backend.looked_up) >= 2


async def test_a_side_effect_unanswered_once_is_not_reported_stopped_by_a_switch(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        a = await desk(harness_factory, backend, note={"timeout_s": 0.5})  # idempotent, no lookup
        b = await desk(harness_factory, backend)
        headers = await a.key()
        backend.answer("note", Answer(200, {"output": {"id": "N-1"}}, delay_s=1.5))
        # Switched off before the retry: the first attempt may have happened.
        run_id, done = await switched_mid_run(
            a,
            b,
            backend,
            tool_calls(("w1", "note", {"q": "a"})),
            final("ok"),
            sent="note",
            off="note",
        )
        assert done["termination_reason"] == "tool_failed"
        call = (await calls_of(a, headers, run_id))["w1"]
        assert call["status"] == "failed" and call["error"]["code"] == "outcome_unknown"
        assert len(backend.sent("note")) == 1


async def test_a_later_approval_call_of_the_turn_is_not_previewed_once_switched_off(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        a = await desk(harness_factory, backend)
        b = await desk(harness_factory, backend)
        headers = await a.key()
        read = asyncio.Event()  # answered once the switch is thrown
        backend.answer("lookup", Answer(200, {"output": {"found": 1}}, hold=read))
        calls = tool_calls(("r1", "lookup", {"q": "x"}), ("t1", "ticket", {"q": "x"}))
        run_id, done = await switched_mid_run(
            a, b, backend, calls, final("ok"), sent="lookup", off="ticket", then=read
        )
        assert done["termination_reason"] == "final"
        call = (await calls_of(a, headers, run_id))["t1"]
        assert call["status"] == "failed" and call["error"]["code"] == "tool_disabled"
        assert backend.previewed == [] and backend.sent("ticket") == []


async def test_a_looked_up_success_too_large_to_keep_is_withheld_not_unknown(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        fields = {
            "status_url": f"{backend.url}/operations",
            "timeout_s": 0.5,
            "idempotent": False,
            "max_output_bytes": 64,
        }
        h = await desk(harness_factory, backend, note=fields)
        headers = await h.key()
        large = {"ticket_id": "x" * 20_000}
        backend.answer("note", Answer(200, {"output": large}, delay_s=3))
        script = [tool_calls(("w1", "note", {"q": "a"})), final("ok")]
        run = (await h.client.post("/v1/runs", headers=headers, json=run_body(*script))).json()
        assert run["termination_reason"] == "final", run
        call = (await calls_of(h, headers, run["id"]))["w1"]
        assert (call["status"], call["output_withheld"]) == ("succeeded", True)
        assert len(backend.sent("note")) == 1 and backend.looked_up != []


async def test_rejecting_an_approved_preview_answers_its_state(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        caller, approver = await keys(h)
        _, preview_id = await approved(h, caller, approver)
        answer = await h.client.post(
            f"/v1/previews/{preview_id}/reject", headers=approver, json={"reason": "no"}
        )
        assert answer.status_code == 409, answer.text
        assert answer.json()["code"] == "invalid-state"
        assert (await preview_of(h, approver, preview_id))["status"] == "approved"


async def test_a_backends_own_outcome_unknown_code_is_an_ordinary_error(harness_factory) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        headers = await h.key()
        body = {"code": "outcome_unknown", "message": "no such order", "fatal": False}
        backend.answer("note", Answer(400, body, effect=False))
        script = [tool_calls(("w1", "note", {"q": "a"}), ("w2", "note", {"q": "b"})), final("ok")]
        run = (await h.client.post("/v1/runs", headers=headers, json=run_body(*script))).json()
        assert run["termination_reason"] == "final", run
        calls = await calls_of(h, headers, run["id"])
        assert calls["w1"]["status"] == "failed"
        assert calls["w1"]["error"]["message"] == "no such order"
        assert calls["w2"]["status"] == "succeeded"  # the run went on with the next call


async def test_a_commit_whose_claim_answer_was_lost_is_executed_once_soon_after(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """The commit's claim took effect (the run leased here) but its answer was lost: the
    approver gets 503, the lease is handed back once the database answers, a driver
    executes the approved call, and the same commit again answers its outcome: sent once,
    well before the lease (30 s here) would have lapsed."""
    async with serving() as backend:
        h = await desk(harness_factory, backend)
        caller, approver = await keys(h)
        run, preview_id = await approved(h, caller, approver)
        started = time.monotonic()
        with commit_answer_lost(h.app.state.engine, "commit_key=") as hit:
            lost = await commit(h, approver, preview_id, "commit-1")
        assert len(hit) == 1
        assert lost.status_code == 503, lost.text
        done = await commit(h, approver, preview_id, "commit-1")
        assert done.status_code == 200, done.text
        assert done.json()["call"]["status"] == "succeeded"
        assert len(backend.sent("ticket")) == 1
        assert time.monotonic() - started < 15
