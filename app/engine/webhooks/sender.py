"""The webhook sender of a process: claims due deliveries from the outbox (any process's
events; `SKIP LOCKED`, so one sender per delivery), signs and sends each, and records its
outcome under the claim's token.

The claim commits before a request leaves, with a lease past the attempt's timeout: a
sender killed mid-delivery leaves the delivery to lapse and another process sends it
again, with the same `webhook-id` (at least once; receivers deduplicate by the id). It is
woken by every commit of events, here or announced by another process, and polls anyway
every `webhook_poll_s` for retries falling due and notifications lost."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

import pydantic_core

from app.adapters.webhooks.dns import Resolver, ResolverUnavailable
from app.adapters.webhooks.http import Answer, WebhookClient
from app.db.errors import is_unavailable
from app.db.webhooks import claims
from app.db.webhooks.claims import Claimed, Outcome
from app.db.webhooks.endpoints import Attempt, DeliveryStatus
from app.domain.lifecycle.records import FeedEvent
from app.domain.webhooks.destinations import (
    BadDestination,
    Verdict,
    address_refusal,
    allowed,
    destination,
    retry_delay,
    verdict,
)
from app.domain.webhooks.signing import signature_header
from app.engine.events.event_feeds import tenant_item
from app.engine.events.tenant_tail import listed
from app.engine.process.outage import outage
from app.engine.process.runtime import Runtime
from app.engine.webhooks.endpoints import allowlist

log = logging.getLogger(__name__)
#: Time a sender keeps a delivery beyond the attempt's timeout, to record its outcome.
LEASE_MARGIN_S = 5.0
#: The least time between two claims, however many commits wake the sender.
MIN_CLAIM_GAP_S = 0.05
#: The same after a claim that found nothing: most event commits write no delivery (their
#: tenant has no endpoint), and claiming at each of them cost both workers CPU and a
#: statement for nothing. A delivery written meanwhile still goes well within 2 s.
EMPTY_CLAIM_GAP_S = 0.5
GONE = "the endpoint answered 410 Gone"


def body_of(event: FeedEvent) -> bytes:
    """The event as the tenant's events API shows it (`id` is its place in that feed)."""
    return pydantic_core.to_json(tenant_item(listed(event)))


class WebhookSender:
    def __init__(self, rt: Runtime, client: WebhookClient, resolver: Resolver) -> None:
        self.rt = rt
        self.client = client
        self.resolver = resolver
        self._woken = asyncio.Event()
        #: Deliveries being sent here, with the claim each holds.
        self._in_flight: dict[asyncio.Task[None], Claimed] = {}
        rt.events.watch(self._woken.set)

    async def run_forever(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            # Not asyncio.wait_for: on Python 3.11 it can swallow a cancel that arrives as
            # the event is set, and this loop would outlive the driver's stop.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.rt.settings.webhook_poll_s):
                    await self._woken.wait()
            self._woken.clear()
            started = loop.time()
            gap = EMPTY_CLAIM_GAP_S
            try:
                if await self.send_due():
                    gap = MIN_CLAIM_GAP_S
            except Exception as exc:
                if is_unavailable(exc):
                    outage.seen(exc)
                else:
                    log.warning("claiming webhook deliveries failed; trying again", exc_info=True)
            await asyncio.sleep(max(0.0, gap - (loop.time() - started)))

    async def send_due(self) -> int:
        """Claims what is due (as many as this process may send at once) and starts
        sending each; returns how many it claimed."""
        free = self.rt.settings.webhook_concurrency - len(self._in_flight)
        if free <= 0:
            return 0
        settings = self.rt.settings
        timeout_s = self.rt.config.webhooks.timeout_s
        async with self.rt.reads() as session:
            claimed = await claims.claim_due(
                session,
                limit=free,
                per_endpoint=settings.webhook_endpoint_concurrency,
                per_tenant=settings.webhook_tenant_concurrency,
                lease_s=settings.webhook_resolve_s + timeout_s + LEASE_MARGIN_S,
                token=secrets.token_hex(16),
                db_time=self.rt.db_time,
            )
        for delivery in claimed:
            task = asyncio.create_task(self._deliver(delivery), name=f"webhook:{delivery.id}")
            self._in_flight[task] = delivery
            task.add_done_callback(self._done)
        if claimed and len(claimed) < free:
            # Room is left: what an endpoint at its cap hid from this claim's scan is
            # claimed next, not at the next poll.
            self._woken.set()
        return len(claimed)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._in_flight.pop(task, None)
        if len(self._in_flight) < self.rt.settings.webhook_concurrency:
            self._woken.set()  # room again: what is still due goes now, not at the next poll
        if not task.cancelled() and task.exception() is not None:
            # Its lease lapses and another attempt is made.
            log.error("a webhook delivery failed unexpectedly", exc_info=task.exception())

    async def _deliver(self, claimed: Claimed) -> None:
        outcome = await self._attempt(claimed)
        async with self.rt.sessions.begin() as session:
            await claims.record(session, claimed, outcome, self.rt.db_time)
        if outcome.status == DeliveryStatus.SUCCEEDED:
            self._woken.set()  # the run's next event may be waiting for this one
        elif outcome.retry_in_s is not None:
            # Retried here on time rather than at the next poll (any process may take it).
            asyncio.get_running_loop().call_later(outcome.retry_in_s, self._woken.set)

    async def _attempt(self, claimed: Claimed) -> Outcome:
        at = self.rt.clock.now()
        if claimed.endpoint_disabled or claimed.event is None:
            why = "the endpoint is disabled" if claimed.endpoint_disabled else "the event is gone"
            return Outcome(DeliveryStatus.ABANDONED, Attempt(at.isoformat(), None, None, why))
        try:
            answer = await self._send(claimed, claimed.event)
        except ResolverUnavailable as exc:
            deferred = self._deferred(claimed, at.isoformat(), str(exc))
            if deferred is not None:
                return deferred
            answer = Answer(None, 0, f"destination refused: its name did not resolve ({exc})")
        except Exception:
            # A failed attempt on the schedule, not an exception: the delivery would lapse
            # and come back forever.
            log.exception("sending a webhook failed unexpectedly")
            answer = Answer(None, 0, "the service could not send it (internal error)")
        attempt = Attempt(at.isoformat(), answer.status_code, answer.latency_ms, answer.error)
        match verdict(answer.status_code):
            case Verdict.SUCCEEDED:
                return Outcome(DeliveryStatus.SUCCEEDED, attempt)
            case Verdict.GONE:
                return Outcome(DeliveryStatus.FAILED, attempt, disable_reason=GONE)
        delay = retry_delay(claimed.attempts, self.rt.config.webhooks.retry_schedule_s)
        if delay is None:
            return Outcome(DeliveryStatus.FAILED, attempt)
        return Outcome(DeliveryStatus.PENDING, attempt, retry_in_s=delay)

    def _deferred(self, claimed: Claimed, at: str, why: str) -> Outcome | None:
        """An attempt our resolver could not make is not the destination's failure: it
        is listed, not counted, and made again after the wait the retry schedule gives
        the delivery's n-th such attempt (never at once: our resolver may be out for a
        while). Beyond as many of them as the schedule has waits, it counts (None), so a
        name nobody answers for ends `failed` like any other, in bounded time."""
        schedule = self.rt.config.webhooks.retry_schedule_s
        if claimed.deferred >= len(schedule):
            return None
        attempt = Attempt(at, None, None, f"not sent and not counted: {why}", counted=False)
        return Outcome(
            DeliveryStatus.PENDING, attempt, retry_in_s=schedule[claimed.deferred], counted=False
        )

    async def _send(self, claimed: Claimed, event: FeedEvent) -> Answer:
        # The addresses the name has now are checked, and the request goes to the one
        # checked: a name rebound to an internal address is refused.
        try:
            dest = destination(claimed.url)
        except BadDestination:
            return Answer(None, 0, "destination refused: not a valid URL")
        patterns = allowlist(self.rt.config.webhooks)
        if not allowed(patterns, dest):  # the operator narrowed the allowlist since
            return Answer(None, 0, "destination refused: no longer allowed by the operator")
        addresses = await self.resolver.resolve(dest)  # or ResolverUnavailable
        refusal = address_refusal(patterns, dest, addresses)
        if refusal is not None:
            return Answer(None, 0, f"destination refused: {refusal}")
        body = body_of(event)
        timestamp = int(self.rt.clock.now().timestamp())
        headers = {
            "webhook-id": claimed.id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature_header(claimed.secrets, claimed.id, timestamp, body),
        }
        return await self.client.post(
            claimed.url, dest, addresses[0], headers, body, self.rt.config.webhooks.timeout_s
        )

    async def stop(self) -> None:
        """Stops sending and hands the deliveries in flight back, due at once, so another
        process sends them again now rather than when their leases lapse."""
        held = list(self._in_flight.items())
        for task, _ in held:
            task.cancel()
        for task, _ in held:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):  # else they simply lapse
            async with self.rt.reads() as session:
                await claims.hand_back(session, [c for _, c in held], self.rt.db_time)
        await self.client.aclose()
        await self.resolver.aclose()
