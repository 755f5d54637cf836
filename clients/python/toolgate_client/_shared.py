"""What the sync and async clients share: request bodies, answers checked into models or
errors, keys, and the arithmetic of waiting for a run."""

from __future__ import annotations

import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypedDict, TypeVar

from toolgate_client.errors import problem_from
from toolgate_client.generated.models import CreateRunIn, PreviewOut, RunOut, RunStatus
from toolgate_client.generated.types import UNSET, Response, Unset

T = TypeVar("T")
#: A list's page, fetched by its cursor (the sync and async clients' pagers).
AsyncFetch = Callable[[str | Unset], Awaitable[Response[Any]]]
SyncFetch = Callable[[str | Unset], Response[Any]]
USER_AGENT = "toolgate-client-python/0.1.0"
#: The most a request may ask the service to wait for a run (`wait_s`, 0..30).
MAX_WAIT_S = 30.0
#: The pause before asking again when an advance answered at once with the run unchanged.
IDLE_PAUSE_S = 0.5
#: A run in these states goes on by itself; in the others it is done or waits for people.
MOVING = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})


class RunFields(TypedDict, total=False):
    """The optional fields of a new run (see the API guide, "Create a run")."""

    tools: Sequence[str]
    limits: Mapping[str, Any]
    metadata: Mapping[str, Any]
    script: Sequence[Mapping[str, Any]]
    parent_run_id: str
    consistency: str
    data_policy: Sequence[str]
    continue_from: str


def key_for(given: str | None) -> str:
    """The request's Idempotency-Key: the caller's, else a fresh one. One per logical
    request; each retry of it sends it again."""
    return given or f"tgc-{uuid.uuid4().hex}"


def checked(response: Response[Any]) -> Any:
    """The parsed answer, or the problem it stands for, raised."""
    if response.status_code >= 400:
        raise problem_from(response.status_code, response.content, response.headers)
    return response.parsed


def run_in(agent: str, input: str, wait_s: float | None, fields: Mapping[str, Any]) -> CreateRunIn:
    body: dict[str, Any] = {"agent": agent, "input": input}
    body.update({name: value for name, value in fields.items() if value is not None})
    if wait_s is not None:
        body["wait_s"] = wait_s
    return CreateRunIn.from_dict(body)


def decision(preview: PreviewOut | str, content_hash: str | None) -> tuple[str, str]:
    """The preview's id and the content hash an approver saw: approving a bare id needs the
    hash too, so that what is approved is what was shown."""
    if isinstance(preview, str):
        if content_hash is None:
            raise TypeError("approving a preview by its id needs the content_hash you saw")
        return preview, content_hash
    return preview.id, content_hash or preview.content_hash


def preview_id(preview: PreviewOut | str) -> str:
    return preview if isinstance(preview, str) else preview.id


def run_id(run: RunOut | str) -> str:
    return run if isinstance(run, str) else run.id


def cursor_of(page: Any) -> str | None:
    cursor = page.next_cursor
    return None if isinstance(cursor, Unset) else cursor


def unset(value: T | None) -> T | Unset:
    return UNSET if value is None else value


def deadline_of(timeout_s: float | None) -> float | None:
    return None if timeout_s is None else time.monotonic() + timeout_s


def wait_slice(deadline: float | None) -> float | None:
    """How long the next request may wait for the run: None when the wait is over."""
    if deadline is None:
        return MAX_WAIT_S
    left = deadline - time.monotonic()
    return None if left <= 0 else min(MAX_WAIT_S, left)


def env_proxy(base_url: str) -> str | None:
    """The proxy the environment names for `base_url` (`HTTPS_PROXY`, `HTTP_PROXY`,
    `NO_PROXY`), as httpx itself reads them when it makes its own transport."""
    url = urllib.parse.urlsplit(base_url)
    proxies = urllib.request.getproxies_environment()  # never the system's settings
    if url.hostname and urllib.request.proxy_bypass_environment(url.hostname, proxies):
        return None
    return proxies.get(url.scheme) or proxies.get("all")
