# Made from toolgate_client/_async/transport.py by clients/python/make_sync.py
# (make openapi); edit that file, not this one.
"""The retry policy (`toolgate_client.retry`) as an httpx transport around the real one:
a request that may be sent twice is sent again, the same request (so the same
Idempotency-Key), after the wait the policy gives."""

from __future__ import annotations

import time

import httpx

from toolgate_client.errors import retry_after_s
from toolgate_client.retry import RetryPolicy, in_flight, later, replayable, streaming


class RetryTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, policy: RetryPolicy) -> None:
        self.inner = inner
        self.policy = policy

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not replayable(request):
            return self.inner.handle_request(request)
        began = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.inner.handle_request(request)
                if not streaming(request) or response.status_code >= 400:
                    # Read here, so that an answer cut off in the middle is retried too
                    # (a stream's refusal is a short problem, read for its code).
                    response.read()
            except httpx.TransportError:
                if (delay := self.policy.delay(attempt, None)) is None:
                    raise
                time.sleep(delay)
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
            response.close()
            time.sleep(delay)

    def close(self) -> None:
        self.inner.close()
