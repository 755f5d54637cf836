"""The retry policy (`toolgate_client.retry`) as an httpx transport around the real one:
a request that may be sent twice is sent again, the same request (so the same
Idempotency-Key), after the wait the policy gives."""

from __future__ import annotations

import asyncio
import time

import httpx

from toolgate_client.errors import retry_after_s
from toolgate_client.retry import RetryPolicy, in_flight, later, replayable, streaming


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, policy: RetryPolicy) -> None:
        self.inner = inner
        self.policy = policy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not replayable(request):
            return await self.inner.handle_async_request(request)
        began = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self.inner.handle_async_request(request)
                if not streaming(request) or response.status_code >= 400:
                    # Read here, so that an answer cut off in the middle is retried too
                    # (a stream's refusal is a short problem, read for its code).
                    await response.aread()
            except httpx.TransportError:
                if (delay := self.policy.delay(attempt, None)) is None:
                    raise
                await asyncio.sleep(delay)
                continue
            if not later(response):
                return response
            waiting = time.monotonic() - began < self.policy.in_flight_s
            waiting = waiting and in_flight(response) and self.policy.max_attempts > 1
            if waiting:
                attempt -= 1  # waiting out the first request is not a failed attempt
            delay = self.policy.delay(attempt, retry_after_s(response.headers))
            if delay is None:
                return response
            if waiting:
                delay = max(delay, self.policy.backoff_s)  # never a tight loop on `0`
            await response.aclose()
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        await self.inner.aclose()
