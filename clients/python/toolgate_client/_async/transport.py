"""The retry policy (`toolgate_client.retry`) as an httpx transport around the real one:
a request that may be sent twice is sent again, the same request (so the same
Idempotency-Key), after the wait the policy gives."""

from __future__ import annotations

import asyncio

import httpx

from toolgate_client.errors import retry_after_s
from toolgate_client.retry import RetryPolicy, later, replayable


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, policy: RetryPolicy) -> None:
        self.inner = inner
        self.policy = policy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self.inner.handle_async_request(request)
            except httpx.TransportError:
                delay = self.policy.delay(attempt, None) if replayable(request) else None
                if delay is None:
                    raise
                await asyncio.sleep(delay)
                continue
            if response.status_code == 409:
                await response.aread()  # to tell an Idempotency-Key in flight by its code
            if not (replayable(request) and later(response)):
                return response
            delay = self.policy.delay(attempt, retry_after_s(response.headers))
            if delay is None:
                return response
            await response.aclose()
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        await self.inner.aclose()
