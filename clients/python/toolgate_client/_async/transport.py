"""The retry policy (`toolgate_client.retry`) as an httpx transport around the real one:
a request that may be sent twice is sent again, the same request (so the same
Idempotency-Key), after the wait the policy gives."""

from __future__ import annotations

import asyncio
import time

import httpx

from toolgate_client.retry import RetryPolicy, later, replayable, streaming


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, policy: RetryPolicy) -> None:
        self.inner = inner
        self.policy = policy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not replayable(request):
            return await self.inner.handle_async_request(request)
        began = time.monotonic()
        spent = 0  # the attempts that count toward the policy's
        while True:
            try:
                response = await self.inner.handle_async_request(request)
                if not streaming(request) or response.status_code >= 400:
                    # Read here, so that an answer cut off in the middle is retried too
                    # (a stream's refusal is a short problem, read for its code).
                    await response.aread()
            except httpx.TransportError:
                spent += 1
                if (delay := self.policy.delay(spent, None)) is None:
                    raise
                await asyncio.sleep(delay)
                continue
            if not later(response):
                return response
            delay, spent = self.policy.after_answer(response, spent, time.monotonic() - began)
            if delay is None:
                return response
            await response.aclose()
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        await self.inner.aclose()
