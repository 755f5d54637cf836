"""Following an event stream (Server-Sent Events) through dropped connections.

The service gives every event an `id:` (a run's `seq`, or the tenant-wide cursor) and
resumes a stream from `Last-Event-ID` without gaps or repeats. So a follower keeps the id
of the last event it handed out and, when the connection drops or the stream ends early,
opens it again from there. An event cut off in the middle is never handed out: an SSE
event counts only once its blank line arrives (httpx-sse parses the stream so)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
from httpx_sse import ServerSentEvent

from toolgate_client.errors import ToolgateError
from toolgate_client.retry import RetryPolicy

T = TypeVar("T")
#: Reads wait for the next event: the server pings every 15 s, so a minute of silence
#: means a dead connection, and the follower opens a new one.
STREAM_TIMEOUT = httpx.Timeout(10.0, read=60.0)
#: A connection that stayed open this long was healthy, events or not (a load balancer's
#: age limit, a server restart): its end is not a failure, and the next one starts afresh.
HEALTHY_S = 5.0


@dataclass
class Position(Generic[T]):
    """Where a stream stands: what to ask for next, and when it is over."""

    parse: Callable[[dict[str, Any]], T]
    params: dict[str, str]
    #: A run's stream is over after this event type; the tenant's never is.
    last_type: str | None = None
    last_id: str | None = None
    finished: bool = False
    retry_s: float | None = None
    failures: int = field(default=0)
    opened_at: float | None = None
    #: Whether the current connection brought an event: then its end is no failure.
    fruitful: bool = False

    def request(self) -> dict[str, Any]:
        headers = {"Accept": "text/event-stream"}
        params = dict(self.params)
        if self.last_id is not None:
            headers["Last-Event-ID"] = self.last_id
            params.pop("after", None)  # the last event seen says more than where we began
        return {"headers": headers, "params": params, "timeout": STREAM_TIMEOUT}

    def opened(self, status: int) -> bool:
        """Whether the answer is a stream to read: `204` is a finished run's stream asked
        for after its last event, so nothing more will come."""
        if status == 204:
            self.finished = True
            return False
        self.opened_at = time.monotonic() if status == 200 else None
        self.fruitful = False
        return status == 200

    def take(self, sse: ServerSentEvent) -> T | None:
        if sse.retry is not None:
            self.retry_s = sse.retry / 1000
        if not sse.data:
            return None
        item = self.parse(json.loads(sse.data))
        if sse.id:
            self.last_id = sse.id
        self.fruitful = True
        if self.last_type is not None and sse.event == self.last_type:
            self.finished = True
        return item

    def pause(self, policy: RetryPolicy) -> float:
        """The wait before opening the stream again: at once after a healthy connection
        (one that brought an event or stayed open `HEALTHY_S`), else the policy's, counting
        failures in a row; raises once they are used up."""
        lived = time.monotonic() - self.opened_at if self.opened_at is not None else 0.0
        healthy = self.fruitful or lived >= HEALTHY_S
        self.opened_at, self.fruitful = None, False
        if healthy:
            self.failures = 0
            return random.uniform(0, 0.1)
        self.failures += 1
        delay = policy.delay(self.failures, self.retry_s)
        if delay is None:
            raise StreamBroken(self.last_id)
        return delay


class StreamBroken(ToolgateError):
    """The stream could not be opened again within the retry policy's attempts."""

    def __init__(self, last_id: str | None) -> None:
        self.last_id = last_id
        super().__init__(f"the event stream kept failing; the last event seen was {last_id}")
