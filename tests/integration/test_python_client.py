"""clients/python (toolgate_client) against the service over HTTP: create and wait, a run
that parks and is approved and committed, a retried create that answers the same run, run
and tenant streams cut in the middle and resumed without a gap, a webhook verified and
forged ones refused, a `503` whose `Retry-After` is waited, problems as typed errors.

The synchronous `Toolgate` is made from the async client; it runs here in a thread, since
the servers run on this test's event loop."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from standardwebhooks.webhooks import Webhook
from toolgate_client import (
    AsyncToolgate,
    RetryPolicy,
    Toolgate,
    WebhookVerificationError,
    verify_webhook,
)
from toolgate_client.errors import InvalidState, NotFound, ValidationError
from toolgate_client.models import RunStatus, TerminationReason

from tests.support.approvals import move, row
from tests.support.client_service import ClientService, client_service
from tests.support.factories import final, tool_calls
from tests.support.waiting import until
from tests.support.webhook_receiver import receiving

SEARCH = tool_calls(("c1", "search_technologies", {"query": "database"}))
ANSWER = final("PostgreSQL [source:s1]")


@pytest.fixture
async def service(harness_factory) -> AsyncIterator[ClientService]:  # type: ignore[no-untyped-def]
    async with client_service(harness_factory) as service:
        yield service


def _sync_quick_start(url: str, key: str) -> tuple[str, str, list[str], list[str]]:
    with Toolgate(url, key) as tg:
        first = tg.runs.create("tech-radar", "Hello?", script=[final("Hi.")])
        run = tg.runs.create_and_wait("tech-radar", "Which databases?", script=[SEARCH, ANSWER])
        types = [event.type_.value for event in tg.runs.events(run)]
        assert [r.id for r in tg.runs.list(limit=1)] == [run.id, first.id]  # page by page
        with pytest.raises(InvalidState):
            tg.runs.advance(run)
        with pytest.raises(ValidationError) as refused:
            tg.runs.create("nope", "x", script=[])
        paths = [e.path for e in refused.value.errors]
        return run.status.value, run.output.text, types, paths


async def test_the_sync_client_creates_and_waits_and_raises_problems_as_typed_errors(
    service: ClientService,
) -> None:
    status, text, types, paths = await asyncio.to_thread(
        _sync_quick_start, service.url, service.caller
    )
    assert (status, text) == ("finished", "PostgreSQL [source:s1]")
    assert types[0] == "run.created" and types[-1] == "run.finished"
    assert paths == ["agent"]


async def test_a_run_parks_then_is_approved_and_committed_through_the_client(
    service: ClientService,
) -> None:
    script = [tool_calls(move(service.kafka_id)), final("Moved [source:s1]")]
    async with (
        AsyncToolgate(service.url, service.caller) as caller,
        AsyncToolgate(service.url, service.approver) as approver,
    ):
        run = await caller.runs.create_and_wait("tech-radar", "Adopt Kafka", script=script)
        assert run.status == RunStatus.AWAITING_APPROVAL
        [preview] = await approver.approvals.pending(run)
        assert preview.id in [p.id async for p in approver.approvals.list()]
        approved = await approver.approvals.approve(preview)
        assert approved.decided_by == "alice"
        committed = await caller.approvals.commit(preview, wait_s=10)
        assert committed.call.status.value == "succeeded"
        done = await caller.runs.wait(run, timeout_s=30)
        with pytest.raises(NotFound):
            await caller.runs.get("run_" + "0" * 32)
    assert done.termination_reason == TerminationReason.FINAL
    assert (await row(service.harness, "Kafka"))["ring"] == "adopt"


class DroppedAfterSending(httpx.AsyncBaseTransport):
    """Sends the first request, then drops its answer (a connection lost on the way back),
    as if the network failed after the service did the work."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.answers: list[httpx.Response] = []
        self.keys: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        await response.aread()
        self.answers.append(response)
        self.keys.append(request.headers["idempotency-key"])
        if len(self.answers) == 1:
            raise httpx.ReadError("connection lost", request=request)
        return response


async def test_a_retried_create_answers_the_same_run(service: ClientService) -> None:
    marker = {"marker": secrets.token_hex(4)}
    dropping = DroppedAfterSending()
    async with (
        AsyncToolgate(service.url, service.caller, transport=dropping) as flaky,
        AsyncToolgate(service.url, service.caller) as tg,
    ):
        run = await flaky.runs.create("tech-radar", "q", script=[ANSWER], metadata=marker)
        again = await tg.runs.create(
            "tech-radar", "q", script=[ANSWER], metadata=marker, idempotency_key="mine-1"
        )
        same = await tg.runs.create(
            "tech-radar", "q", script=[ANSWER], metadata=marker, idempotency_key="mine-1"
        )
        mine = [r.id async for r in tg.runs.list(limit=200) if r.metadata.to_dict() == marker]
    assert [a.status_code for a in dropping.answers] == [201, 201]
    assert dropping.keys[0] == dropping.keys[1]
    assert dropping.answers[1].headers["idempotent-replayed"] == "true"
    assert same.id == again.id != run.id
    assert sorted(mine) == sorted({run.id, again.id})


async def test_a_run_stream_cut_in_the_middle_resumes_without_a_gap(
    service: ClientService,
) -> None:
    async with AsyncToolgate(service.url, service.caller) as tg:
        run = await tg.runs.create_and_wait("tech-radar", "q", script=[SEARCH, ANSWER])
        every = [e.seq async for e in tg.runs.events(run)]
    async with AsyncToolgate(service.cutting_url, service.caller) as cut:
        streamed = [e async for e in cut.runs.events(run, stream=True)]
    assert [e.seq for e in streamed] == every == list(range(1, len(every) + 1))
    assert streamed[-1].type_.value == "run.finished"
    assert service.proxy.cuts == 1
    first, second = service.proxy.heads[-2:]
    resumed_at = int(second.split("last-event-id: ")[1].split("\r\n")[0])
    assert "last-event-id" not in first and 1 <= resumed_at < len(every)

    def sync_stream() -> list[int]:
        with Toolgate(service.cutting_url, service.caller) as tg:
            return [e.seq for e in tg.runs.events(run.id, stream=True)]

    assert await asyncio.to_thread(sync_stream) == every
    assert service.proxy.cuts == 2
    async with AsyncToolgate(service.url, service.caller) as tg:  # after its end: nothing more
        assert [e async for e in tg.runs.events(run, stream=True, after=len(every))] == []


class AnswerNeverArrives(httpx.AsyncBaseTransport):
    """Sends the first request and drops the connection before its answer, once the
    service has made its run (and holds its key, in flight); the next requests go
    through."""

    def __init__(self, service: ClientService, marker: dict[str, str]) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.lost: list[asyncio.Task[httpx.Response]] = []
        self.statuses: list[int] = []
        self.service, self.marker = service, marker

    async def _made(self) -> None:
        headers = {"Authorization": f"Bearer {self.service.caller}"}
        async with httpx.AsyncClient(base_url=self.service.url, headers=headers) as client:
            async with asyncio.timeout(20):
                while True:
                    runs = (await client.get("/v1/runs?limit=20")).json()["items"]
                    if any(r["metadata"] == self.marker for r in runs):
                        return
                    await asyncio.sleep(0.05)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self.lost:
            self.lost.append(asyncio.create_task(self.inner.handle_async_request(request)))
            await self._made()
            raise httpx.ReadError("connection lost", request=request)
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response


async def test_a_create_whose_first_answer_is_lost_waits_out_the_key_in_flight(
    service: ClientService,
) -> None:
    """Two attempts would not be enough: the first request holds its key for 2.5 s, and
    waiting that out does not count as attempts."""
    marker = {"marker": secrets.token_hex(4)}
    lost = AnswerNeverArrives(service, marker)
    slow = final("done", delay_ms=2500)
    async with AsyncToolgate(
        service.url, service.caller, transport=lost, retry=RetryPolicy(max_attempts=2)
    ) as tg:
        run = await tg.runs.create("tech-radar", "q", script=[slow], metadata=marker)
        first = await lost.lost[0]
    assert run.status == RunStatus.FINISHED and first.status_code == 201
    assert lost.statuses[0] == 409 and lost.statuses[-1] == 201
    assert len(lost.statuses) >= 3  # in flight at least twice, then the replay


async def test_the_tenant_stream_cut_in_the_middle_resumes_without_a_gap(
    service: ClientService,
) -> None:
    before: list[str] = []
    async with AsyncToolgate(service.url, service.caller) as tg:
        earlier = await tg.runs.create_and_wait("tech-radar", "q", script=[ANSWER])

        async def listed() -> bool:  # the tenant's feed shows what every commit before allows
            before[:] = [e.id async for e in tg.events.list(run_id=earlier.id)]
            return bool(before)

        await until(listed, what="the earlier run's events in the tenant's feed")
        run = await tg.runs.create_and_wait("tech-radar", "q", script=[SEARCH, ANSWER])
    seqs = []
    async with AsyncToolgate(service.cutting_url, service.caller) as cut:
        stream = cut.events.stream(run_id=run.id, after=before[-1])
        async with asyncio.timeout(30), aclosing(stream):  # closes the stream on break
            async for event in stream:
                seqs.append(event.seq)
                if event.type_.value == "run.finished":
                    break
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= 5
    assert service.proxy.cuts == 1


async def test_a_delivered_webhook_verifies_and_forged_ones_are_refused(
    service: ClientService,
) -> None:
    async with (
        receiving() as receiver,
        AsyncToolgate(service.url, service.admin) as tg,
    ):
        hook = await tg.webhooks.create(receiver.hook(), ["run.finished"])
        run = await tg.runs.create_and_wait("tech-radar", "q", script=[ANSWER])
        [got] = await receiver.wait_for(1)
    event = tg.webhooks.verify(got.body, got.headers, hook.secret)
    assert (event.type_.value, event.run_id) == ("run.finished", run.id)
    assert verify_webhook(got.body.decode(), got.headers, ["whsec_" + "A" * 44, hook.secret])

    tampered = json.dumps({**json.loads(got.body), "run_id": "run_other"}).encode()
    stale = datetime.now(UTC) - timedelta(minutes=10)
    old = {
        **got.headers,
        "webhook-timestamp": str(int(stale.timestamp())),
        "webhook-signature": Webhook(hook.secret).sign(got.id, stale, got.body.decode()),
    }
    for body, headers, secret in [
        (tampered, got.headers, hook.secret),
        (got.body, got.headers, "whsec_" + "A" * 44),
        (got.body, old, hook.secret),
        (got.body, {**got.headers, "webhook-signature": "v1,Zm9yZ2Vk"}, hook.secret),
    ]:
        with pytest.raises(WebhookVerificationError):
            verify_webhook(body, headers, secret)


class Recorded(httpx.AsyncBaseTransport):
    """Each answer's status and event-loop time; `on_503` runs when a 503 arrives."""

    def __init__(self, on_503: object) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.seen: list[tuple[int, float]] = []
        self.on_503 = on_503

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.seen.append((response.status_code, asyncio.get_running_loop().time()))
        if response.status_code == 503:
            assert response.headers["retry-after"] == "1"
            self.on_503()  # type: ignore[operator]
        return response


async def test_a_503_with_retry_after_is_waited_then_retried(service: ClientService) -> None:
    hold = tool_calls(("h1", "hold", {}))
    async with httpx.AsyncClient(base_url=service.narrow_url, timeout=60) as raw:
        holder = asyncio.create_task(
            raw.post(
                "/v1/runs",
                headers={"Authorization": f"Bearer {service.caller}", "Idempotency-Key": "hold"},
                json={"agent": "tech-radar", "input": "q", "script": [hold, ANSWER]},
            )
        )
        await raw.get(f"{service.gate.url}/held")  # the narrow server's only slot is taken
        recorded = Recorded(on_503=lambda: None)
        async with AsyncToolgate(service.narrow_url, service.caller, transport=recorded) as tg:
            unkeyed = await tg.http.post("/v1/runs/run_x/cancel")  # may not be sent twice
            assert unkeyed.status_code == 503 and len(recorded.seen) == 1
            recorded.on_503 = service.gate.release
            run = await tg.runs.create("tech-radar", "q", script=[ANSWER])
        assert (await holder).status_code == 201
    statuses = [status for status, _ in recorded.seen[1:]]
    assert statuses == [503, 201] and run.status == RunStatus.FINISHED
    waited = recorded.seen[2][1] - recorded.seen[1][1]
    assert 0.99 <= waited < 5
