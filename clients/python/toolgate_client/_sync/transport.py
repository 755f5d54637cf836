# Made from toolgate_client/_async/transport.py by clients/python/make_sync.py
# (make openapi); edit that file, not this one.
"""The retry policy (`toolgate_client.retry`) as an httpx transport around the real one:
a request that may be sent twice is sent again, the same request (so the same
Idempotency-Key), after the wait the policy gives."""

from __future__ import annotations

import time

import httpx

from toolgate_client.retry import RetryPolicy, later, replayable, streaming


class RetryTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, policy: RetryPolicy) -> None:
        self.inner = inner
        self.policy = policy

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if not replayable(request):
            return self.inner.handle_request(request)
        began = time.monotonic()
        spent = 0  # the attempts that count toward the policy's
        while True:
            try:
                response = self.inner.handle_request(request)
                if not streaming(request) or response.status_code >= 400:
                    # Read here, so that an answer cut off in the middle is retried too
                    # (a stream's refusal is a short problem, read for its code).
                    response.read()
            except httpx.TransportError:
                spent += 1
                if (delay := self.policy.delay(spent, None)) is None:
                    raise
                time.sleep(delay)
                continue
            if not later(response):
                return response
            delay, spent = self.policy.after_answer(response, spent, time.monotonic() - began)
            if delay is None:
                return response
            response.close()
            time.sleep(delay)

    def close(self) -> None:
        self.inner.close()
