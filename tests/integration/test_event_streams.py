"""Live events: a run's timeline and a tenant's events as Server-Sent Events, history then
what any process commits; resuming with Last-Event-ID loses and repeats nothing; the
tenant's feed is gap-free under concurrent writers; streams are limited per process and
end cleanly on shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.adapters.clock import SystemClock
from app.config.settings import Settings
from app.db.session import make_sessionmaker
from app.db.tables import api_key, event
from app.engine.access.keys import create_key
from app.engine.events.tenant_tail import TenantTail
from tests.support.approvals import (
    approvals_harness,
    approve,
    commit,
    desk_env,
    keys,
    move,
    parked_run,
    process_keys,
    row,
)
from tests.support.backend import Answer, serving, serving_app
from tests.support.factories import final, run_body, tool_calls
from tests.support.harness import Harness
from tests.support.processes import free_port, server, wait_healthy
from tests.support.statements import counting, failing
from tests.support.stored_events import stored_events
from tests.support.streams import STREAM, Frame, feed_shows, reopens, stream, take
from tests.support.waiting import until


async def timeline(h: Harness, headers: dict[str, str], run_id: str) -> list[dict[str, Any]]:
    answer = await h.client.get(f"/v1/runs/{run_id}/events?limit=200", headers=headers)
    return answer.json()["items"]


async def approve_and_commit(h: Harness, approver: dict[str, str], preview_id: str) -> None:
    await approve(h, approver, preview_id)
    committed = await commit(h, approver, preview_id, "commit-1")
    assert committed.status_code == 200, committed.text


async def test_a_run_stream_replays_history_follows_new_events_and_ends_after_finished(
    harness_factory,  # type: ignore[no-untyped-def]
) -> None:
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    run = await parked_run(h, caller, tool_calls(move(kafka["id"])), final("Moved."))
    async with (
        serving_app(h.app) as base,
        stream(base, f"/v1/runs/{run['id']}/events", caller) as (response, source),
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        history = await take(source, "call.awaiting_approval")
        await approve_and_commit(h, approver, run["pending_approvals"][0]["preview_id"])
        live = await take(source, "run.finished")
        # After run.finished the server ends the stream: nothing more comes.
        rest = [f async for f in source]
    assert rest == []
    sent = history + live
    stored = await timeline(h, caller, run["id"])
    assert (
        [int(f["id"]) for f in sent]
        == [e["seq"] for e in stored]
        == list(range(1, len(stored) + 1))
    )
    assert [f["event"] for f in sent] == [e["type"] for e in stored]
    assert [f["data"] for f in sent] == stored
    assert "call.approved" in [f["event"] for f in live]


async def test_a_finished_runs_stream_replays_it_and_ends_and_after_resumes_past_a_seq(
    harness,  # type: ignore[no-untyped-def]
) -> None:
    headers = await harness.key()
    created = await harness.client.post("/v1/runs", headers=headers, json=run_body(final("Hi.")))
    run_id = created.json()["id"]
    stored = await timeline(harness, headers, run_id)
    async with serving_app(harness.app) as base:
        async with stream(base, f"/v1/runs/{run_id}/events", headers) as (_, source):
            assert [int(f["id"]) async for f in source if "id" in f] == [e["seq"] for e in stored]
        async with stream(base, f"/v1/runs/{run_id}/events?after=2", headers) as (_, source):
            assert [int(f["id"]) async for f in source if "id" in f] == [
                e["seq"] for e in stored[2:]
            ]


async def test_streams_refuse_what_json_refuses(harness) -> None:  # type: ignore[no-untyped-def]
    mine, theirs = await harness.key(), await harness.key(tenant="globex")
    run_id = (
        await harness.client.post("/v1/runs", headers=mine, json=run_body(final("Hi.")))
    ).json()["id"]
    for headers, path, status in [
        (theirs, f"/v1/runs/{run_id}/events", 404),
        ({}, f"/v1/runs/{run_id}/events", 401),
        ({**mine, "Last-Event-ID": "x1"}, f"/v1/runs/{run_id}/events", 422),
        ({**mine, "Last-Event-ID": "nope"}, "/v1/events", 422),
        (mine, "/v1/events?types=run.finished,run.exploded", 422),
    ]:
        answer = await harness.client.get(path, headers={**headers, **STREAM})
        assert answer.status_code == status, (path, answer.text)
        assert answer.headers["content-type"] == "application/problem+json"


async def test_resuming_with_last_event_id_loses_and_repeats_nothing_across_processes(
    db: AsyncEngine, database_url: str, tmp_path: Path
) -> None:
    """The stream is read from one server process; the run is approved, committed and
    finished through another. A reconnect with Last-Event-ID picks up exactly where the
    first connection stopped, and live events written by the other process arrive woken
    by its notification, well before the poll would have read them."""
    caller, approver = await process_keys(db)
    async with serving() as backend:
        backend.answer("ticket", Answer(200, {"output": {"ticket": 7}}))
        env = desk_env(backend, database_url, tmp_path)
        ports = [free_port(), free_port()]
        with (
            server(["serve", "--port", str(ports[0])], env),
            server(["serve", "--port", str(ports[1])], env),
        ):
            reader, writer = (f"http://127.0.0.1:{p}" for p in ports)
            await wait_healthy(reader)
            await wait_healthy(writer)
            async with httpx.AsyncClient(base_url=writer, timeout=30) as http:
                body = {
                    "agent": "desk",
                    "input": "refund",
                    "wait_s": 5,
                    "script": [tool_calls(("t1", "ticket", {"q": "x"})), final("Done.")],
                }
                created = await http.post(
                    "/v1/runs", headers={**caller, "Idempotency-Key": "r1"}, json=body
                )
                run = created.json()
                assert run["status"] == "awaiting_approval", run
                preview_id = run["pending_approvals"][0]["preview_id"]
                path_ = f"/v1/runs/{run['id']}/events"

                async with stream(reader, path_, caller) as (_, source):
                    first = await take(source, "call.awaiting_approval")
                    preview_url = f"/v1/previews/{preview_id}"
                    preview = (await http.get(preview_url, headers=approver)).json()
                    approved = await http.post(
                        f"/v1/previews/{preview_id}/approve",
                        headers=approver,
                        json={"content_hash": preview["content_hash"]},
                    )
                    assert approved.status_code == 200
                    started = asyncio.get_running_loop().time()
                    first += await take(source, "call.approved")
                    woken_in = asyncio.get_running_loop().time() - started
                # Disconnected; the other process commits and the run finishes meanwhile.
                committed = await http.post(
                    f"/v1/previews/{preview_id}/commit",
                    headers={**approver, "Idempotency-Key": "commit-1"},
                    json={"wait_s": 5},
                )
                assert committed.json()["run"]["status"] == "finished", committed.text
                last = first[-1]["id"]
                async with stream(reader, path_, {**caller, "Last-Event-ID": last}) as (_, source):
                    second = [f async for f in source if "id" in f]
                stored = (await http.get(f"{path_}?limit=200", headers=caller)).json()["items"]
    seqs = [int(f["id"]) for f in first + second]
    assert seqs == [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
    assert second[-1]["event"] == "run.finished"
    assert woken_in < Settings().stream_poll_s - 1, woken_in


async def test_the_tenant_stream_starts_now_filters_by_type_and_run_and_resumes(
    harness,  # type: ignore[no-untyped-def]
) -> None:
    headers = await harness.key()
    before = (
        await harness.client.post("/v1/runs", headers=headers, json=run_body(final("Old.")))
    ).json()["id"]
    path = "/v1/events?types=run.created,run.finished"
    async with serving_app(harness.app) as base:
        async with stream(base, path, headers) as (response, source):
            assert response.status_code == 200
            runs = []
            for text in ("One.", "Two."):
                created = await harness.client.post(
                    "/v1/runs", headers=headers, json=run_body(final(text))
                )
                runs.append(created.json()["id"])
            got = await take(source, "run.finished")
            got += await take(source, "run.finished")
        assert [(f["data"]["run_id"], f["event"]) for f in got] == [
            (runs[0], "run.created"),
            (runs[0], "run.finished"),
            (runs[1], "run.created"),
            (runs[1], "run.finished"),
        ]
        assert before not in {f["data"]["run_id"] for f in got}
        item = got[0]["data"]
        assert set(item) == {"id", "run_id", "seq", "type", "at", "data"}
        assert item["id"] == got[0]["id"] and item["seq"] == 1

        # Resuming after the first run's last event gives the second run's, nothing else.
        resumed_from = {**headers, "Last-Event-ID": got[1]["id"]}
        async with stream(base, path, resumed_from) as (_, source):
            again = await take(source, "run.finished")
        assert again == got[2:]

        # One run only.
        only = f"/v1/events?run_id={runs[1]}&after={got[0]['id']}"
        async with stream(base, only, headers) as (_, source):
            mine = await take(source, "run.finished")
        assert {f["data"]["run_id"] for f in mine} == {runs[1]}
        assert [f["data"]["seq"] for f in mine] == [
            e["seq"] for e in await timeline(harness, headers, runs[1])
        ]


async def test_the_tenant_feed_is_gap_free_under_concurrent_writers(
    harness_factory,  # type: ignore[no-untyped-def]
) -> None:
    """Runs written at once by many transactions: the stream delivers each event once, in
    the order a JSON reader paging with the ids sees, and all of them."""
    h = await harness_factory()
    headers = await h.key()
    other = await h.key(tenant="globex")
    async with (
        serving_app(h.app) as base,
        stream(base, "/v1/events", headers) as (_, source),
    ):

        async def create(i: int) -> str:
            body = run_body(tool_calls(("c1", "list_technologies", {})), final(f"Run {i}."))
            answer = await h.client.post("/v1/runs", headers=headers, json=body)
            await h.client.post("/v1/runs", headers=other, json=run_body(final("Theirs.")))
            return answer.json()["id"]

        created = await asyncio.gather(*(create(i) for i in range(12)))
        seen: list[Frame] = []
        while sum(f["event"] == "run.finished" for f in seen) < len(created):
            seen += await take(source, "run.finished")
    async with h.runtime.sessions() as session:
        stored = [(e.run_id, e.seq) for e in await stored_events(session)]
    streamed = [(f["data"]["run_id"], f["data"]["seq"]) for f in seen]
    assert len(streamed) == len(set(streamed))  # nothing twice
    assert set(streamed) == {(r, s) for r, s in stored if r in created}
    # Paging the JSON feed with the ids gives the very same order.
    paged: list[dict[str, Any]] = []
    cursor = seen[0]["id"]
    paged.append(seen[0]["data"])
    while True:
        page = (await h.client.get(f"/v1/events?after={cursor}&limit=7", headers=headers)).json()
        paged += page["items"]
        if page["next_cursor"] is None:
            break
        cursor = page["next_cursor"]
    assert [f["data"] for f in seen] == paged[: len(seen)]


async def test_the_tenant_list_pages_every_event_with_ids_and_refuses_bad_cursors(
    harness,  # type: ignore[no-untyped-def]
) -> None:
    headers = await harness.key()
    for text in ("A.", "B."):
        await harness.client.post("/v1/runs", headers=headers, json=run_body(final(text)))
    await feed_shows(harness.client, headers, 2)
    everything = (await harness.client.get("/v1/events?limit=200", headers=headers)).json()
    assert everything["next_cursor"] is None
    items = everything["items"]
    assert [i["type"] for i in items].count("run.finished") == 2
    first = (await harness.client.get("/v1/events?limit=3", headers=headers)).json()
    assert first["items"] == items[:3]
    rest = (
        await harness.client.get(f"/v1/events?cursor={first['next_cursor']}", headers=headers)
    ).json()
    assert rest["items"] == items[3:]
    finished = (await harness.client.get("/v1/events?types=run.finished", headers=headers)).json()
    assert [i["type"] for i in finished["items"]] == ["run.finished", "run.finished"]
    bad = await harness.client.get("/v1/events?after=bm90IGEgY3Vyc29y", headers=headers)
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["path"] == "after"
    caller_only_elsewhere = await harness.key(tenant="globex")
    theirs = (await harness.client.get("/v1/events", headers=caller_only_elsewhere)).json()
    assert theirs["items"] == []


async def test_events_from_before_the_feed_had_an_order_come_first_by_run_and_seq(
    harness,  # type: ignore[no-untyped-def]
) -> None:
    """Events written before migration 0008 have xid 0: the feed gives them first, by run
    and seq (from their own index), then the rest, and its pages cross from one to the
    other without losing or repeating an event."""
    headers = await harness.key()
    ids = []
    for text in ("A.", "B.", "C."):
        made = await harness.client.post("/v1/runs", headers=headers, json=run_body(final(text)))
        ids.append(made.json()["id"])
    older, newer = sorted(ids[1:]), ids[0]
    async with harness.runtime.sessions.begin() as session:
        await session.execute(update(event).where(event.c.run_id.in_(older)).values(xid=0))
    await feed_shows(harness.client, headers, 3)
    everything = (await harness.client.get("/v1/events?limit=200", headers=headers)).json()
    got = [(i["run_id"], i["seq"]) for i in everything["items"]]
    per_run = len(got) // 3
    expected = [(r, seq) for r in [*older, newer] for seq in range(1, per_run + 1)]
    assert got == expected
    paged: list[tuple[str, int]] = []
    cursor = ""
    for _ in range(3 * per_run):
        page = (await harness.client.get(f"/v1/events?limit=2{cursor}", headers=headers)).json()
        paged += [(i["run_id"], i["seq"]) for i in page["items"]]
        if page["next_cursor"] is None:
            break
        cursor = f"&cursor={page['next_cursor']}"
    assert paged == expected
    only = (await harness.client.get(f"/v1/events?run_id={older[1]}", headers=headers)).json()
    assert [(i["run_id"], i["seq"]) for i in only["items"]] == expected[per_run : 2 * per_run]


async def test_streams_ping_when_quiet_and_are_limited_per_process(
    harness_factory,  # type: ignore[no-untyped-def]
) -> None:
    h = await harness_factory(settings_override={"max_streams": 1, "stream_ping_s": 0.3})
    headers = await h.key()
    async with serving_app(h.app) as base:
        async with stream(base, "/v1/events", headers) as (_, source):
            ping = await asyncio.wait_for(anext(source), 10)
            assert ping == {"comment": "ping"}
            refused = await h.client.get("/v1/events", headers={**headers, **STREAM})
            assert refused.status_code == 429
            assert refused.json()["type"].endswith("/rate-limited")
            assert refused.headers["retry-after"] == "5"
            # JSON pages are not streams: never limited.
            assert (await h.client.get("/v1/events", headers=headers)).status_code == 200

        # The slot is given back once the client has gone.
        assert await reopens(base, headers)


async def test_streams_end_cleanly_when_the_server_shuts_down(
    db: AsyncEngine, database_url: str
) -> None:
    sessions = make_sessionmaker(db)
    _, key = await create_key(
        sessions, SystemClock(), tenant_id="acme", subject="svc", roles=["caller"], scopes=None
    )
    headers = {"Authorization": f"Bearer {key}"}
    port = free_port()
    env = {"TOOLGATE_DATABASE_URL": database_url}
    with server(["serve", "--port", str(port)], env) as process:
        base = f"http://127.0.0.1:{port}"
        await wait_healthy(base)
        async with stream(base, "/v1/events", headers) as (response, source):
            assert response.status_code == 200
            loop = asyncio.get_running_loop()
            started = loop.time()
            os.killpg(process.pid, signal.SIGTERM)
            # The response ends properly (no transport error) and soon.
            rest = await asyncio.wait_for(anext(source, None), 10)
            assert rest is None
            assert loop.time() - started < 10
        assert await asyncio.to_thread(process.wait, 15) == 0


async def test_a_tenants_streams_in_one_process_share_their_reads(
    harness_factory,  # type: ignore[no-untyped-def]
) -> None:
    """Ten streams of one tenant, woken by the same commits, are served by the tenant's one
    shared reader, each sent every event once and in order. A stream resuming from before
    the shared window reads for itself, then joins it. (How few reads: the next test.)"""
    h = await harness_factory()
    headers = await h.key()
    early = (
        await h.client.post("/v1/runs", headers=headers, json=run_body(final("Early.")))
    ).json()["id"]
    await feed_shows(h.client, headers, 1)
    first_id = (await h.client.get("/v1/events?limit=1", headers=headers)).json()["items"][0]["id"]
    async with contextlib.AsyncExitStack() as stack:
        base = await stack.enter_async_context(serving_app(h.app))
        sources = [
            (await stack.enter_async_context(stream(base, "/v1/events", headers)))[1]
            for _ in range(10)
        ]
        behind = (
            await stack.enter_async_context(
                stream(base, "/v1/events", {**headers, "Last-Event-ID": first_id})
            )
        )[1]
        created = await h.client.post(
            "/v1/runs",
            headers=headers,
            json=run_body(tool_calls(("c1", "list_technologies", {})), final("Now.")),
        )
        run_id = created.json()["id"]
        got = [await take(source, "run.finished") for source in sources]
        caught_up = await take(behind, "run.finished")
        caught_up += await take(behind, "run.finished")
    stored = await timeline(h, headers, run_id)
    for frames_ in got:
        assert [(f["data"]["run_id"], f["data"]["seq"]) for f in frames_] == [
            (run_id, e["seq"]) for e in stored
        ]
    assert [f["data"]["run_id"] for f in caught_up][-len(stored) :] == [run_id] * len(stored)
    assert caught_up[0]["data"]["run_id"] == early and caught_up[0]["data"]["seq"] == 2


async def test_streams_woken_together_are_served_by_one_read(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """The tail reads once for all the streams woken at one moment, and not at all for a
    stream woken before its last read began. Counted here, not end to end: how often a
    server's streams are woken depends on how the commits spread and on how long the feed's
    horizon waits for other transactions (on a shared test server, other tests')."""
    h = await harness_factory()
    headers = await h.key()
    tail = TenantTail(h.runtime, "acme")
    loop = asyncio.get_running_loop()
    await tail.refresh(loop.time())  # the window starts

    async def round_of(streams: int) -> int:
        woken = loop.time()
        with counting(h.app.state.engine) as seen:
            await asyncio.gather(*(tail.refresh(woken) for _ in range(streams)))
            await tail.refresh(woken - 1)  # a stream woken before that read began
        return len([s for s in seen.all if "AS horizon" in s])  # the feed's reads only

    assert await round_of(10) == 1
    await h.client.post("/v1/runs", headers=headers, json=run_body(final("Shown.")))
    assert await round_of(10) == 1
    assert await round_of(1) == 1

    async def shown() -> bool:  # once the feed's horizon has passed it (other tests' work)
        await tail.refresh(loop.time())
        kept = tail.after(tail.start) if tail.start is not None else None
        return kept is not None and [r.event.type for r in kept[0]][:1] == ["run.created"]

    await until(shown)


async def test_a_finished_runs_stream_resumed_after_its_last_event_answers_no_content(
    harness,  # type: ignore[no-untyped-def]
) -> None:
    """SSE clients reconnect when a stream ends; past run.finished the answer is 204, which
    tells them to stop, instead of a stream that would wait forever."""
    headers = await harness.key()
    run_id = (
        await harness.client.post("/v1/runs", headers=headers, json=run_body(final("Hi.")))
    ).json()["id"]
    last = (await timeline(harness, headers, run_id))[-1]["seq"]
    for extra in ({"Last-Event-ID": str(last)}, {"Last-Event-ID": ""}):
        path = f"/v1/runs/{run_id}/events" + ("" if extra["Last-Event-ID"] else f"?after={last}")
        answer = await harness.client.get(path, headers={**headers, **STREAM, **extra})
        assert answer.status_code == 204 and answer.content == b""
    # The JSON page's cursor resumes a stream too.
    page = (await harness.client.get(f"/v1/runs/{run_id}/events?limit=2", headers=headers)).json()
    async with (
        serving_app(harness.app) as base,
        stream(base, f"/v1/runs/{run_id}/events?cursor={page['next_cursor']}", headers) as (
            _,
            source,
        ),
    ):
        assert [int(f["id"]) async for f in source if "id" in f] == list(range(3, last + 1))
    assert harness.app.state.streams.open == 0


async def test_a_stream_ends_when_its_key_is_revoked_or_its_reads_fail(
    harness_factory,  # type: ignore[no-untyped-def]
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = await harness_factory(settings_override={"stream_key_check_s": 0.2, "stream_poll_s": 0.2})
    headers = await h.key()
    async with serving_app(h.app) as base:
        async with stream(base, "/v1/events", headers) as (response, source):
            assert response.status_code == 200
            async with h.runtime.sessions.begin() as session:
                await session.execute(
                    update(api_key).where(api_key.c.subject == "svc").values(revoked_at=func.now())
                )
            # The stream ends, cleanly (no transport error), at its next check.
            assert await asyncio.wait_for(anext(source, None), 10) is None

        other = await h.key(subject="other")

        def gone() -> BaseException:
            return ConnectionRefusedError("the database went away")

        async with stream(base, "/v1/events", other) as (response, source):
            assert response.status_code == 200
            # From now on the feed's reads (the page query) fail, as if the database went.
            with (
                failing(h.app.state.engine, "pg_snapshot_xmin", gone),
                caplog.at_level(logging.WARNING),
            ):
                assert await asyncio.wait_for(anext(source, None), 10) is None
    assert h.app.state.streams.open == 0
    said = [r.getMessage() for r in caplog.records]
    assert any("unavailable" in m for m in said), said
    assert not any(r.exc_info for r in caplog.records)
