"""The client's own retries: which requests, which answers, how long to wait (the
transports in `_async/transport.py` and `_sync/transport.py` apply it).

Only a request that may be sent twice is retried: a safe or idempotent method, or any
request that carries an `Idempotency-Key` (the client gives one to every POST it makes, and
the same request object, so the same key, is sent again). The answers retried are the ones
that say "later": `409 idempotency-key-in-flight`, `429`, `502`, `503`, `504`, and a
connection that failed or dropped. The server's `Retry-After` is waited (plus up to a fifth
more, so that many clients do not come back at once); without it the wait doubles from
`backoff_s`, jittered. A `Retry-After` longer than `max_delay_s` is not waited: the error
goes to the caller with `retry_after_s` on it."""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx

from toolgate_client.errors import retry_after_s

#: Methods that mean the same when sent twice (RFC 9110 §9.2.2).
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
#: Answers that say "try again later", whatever the problem.
LATER_STATUSES = frozenset({429, 502, 503, 504})
IN_FLIGHT = "idempotency-key-in-flight"


@dataclass(frozen=True)
class RetryPolicy:
    #: Attempts in all, the first included; 1 turns retries off.
    max_attempts: int = 5
    #: The longest wait between two attempts.
    max_delay_s: float = 30.0
    #: The first wait when the server names none; it doubles each attempt.
    backoff_s: float = 0.5
    #: How long `409 idempotency-key-in-flight` is waited out without counting attempts:
    #: the first request may hold its key for its whole `wait_s` (at most 30 s).
    in_flight_s: float = 45.0

    def delay(self, attempt: int, server_says: float | None) -> float | None:
        """How long to wait after the `attempt`-th failed attempt, or None to give up."""
        if attempt >= self.max_attempts:
            return None
        if server_says is not None:
            if server_says > self.max_delay_s:
                return None
            return min(self.max_delay_s, server_says * (1 + random.uniform(0, 0.2)))
        return min(self.max_delay_s, self.backoff_s * 2 ** (attempt - 1)) * random.uniform(0.5, 1)

    def after_answer(
        self, response: httpx.Response, spent: int, elapsed_s: float
    ) -> tuple[float | None, int]:
        """The wait before sending again after an answer that says "later" (None: give it
        to the caller), and the attempts spent with this one. A key still in flight within
        `in_flight_s` spends none (the first request is at work, nothing failed) and waits
        at least `backoff_s`, so that a `Retry-After: 0` makes no tight loop."""
        waiting = self.max_attempts > 1 and elapsed_s < self.in_flight_s and in_flight(response)
        spent += 0 if waiting else 1
        delay = self.delay(spent, retry_after_s(response.headers))
        if delay is not None and waiting:
            delay = max(delay, self.backoff_s)
        return delay, spent


def replayable(request: httpx.Request) -> bool:
    return request.method in IDEMPOTENT_METHODS or "idempotency-key" in request.headers


def in_flight(response: httpx.Response) -> bool:
    """A `409` that says the key's first request is still being answered (body read)."""
    if response.status_code != 409:
        return False
    try:
        return response.json().get("code") == IN_FLIGHT
    except (ValueError, AttributeError):
        return False


def later(response: httpx.Response) -> bool:
    return response.status_code in LATER_STATUSES or in_flight(response)


def streaming(request: httpx.Request) -> bool:
    """An event stream's answer is read by its follower, as it comes, never here."""
    return "text/event-stream" in request.headers.get("accept", "")
