# Made from toolgate_client/_async/client.py by clients/python/make_sync.py
# (make openapi); edit that file, not this one.
"""The client: `AsyncToolgate` here, `Toolgate` in `_sync` (made from this module). Each
call is one of the generated operations, sent through the retrying transport with an
Idempotency-Key of its own when it is a POST, and its problem answers raised as typed
errors."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Unpack
from urllib.parse import quote

import httpx

from toolgate_client import _shared as s
from toolgate_client._sync.follow import follow
from toolgate_client._sync.transport import RetryTransport
from toolgate_client.errors import InvalidState, WaitTimeout
from toolgate_client.generated import AuthenticatedClient
from toolgate_client.generated.api.approvals import (
    approve_preview,
    commit_preview,
    get_preview,
    list_approvals,
    reject_preview,
    revise_preview,
)
from toolgate_client.generated.api.events import list_events
from toolgate_client.generated.api.runs import (
    advance_run,
    cancel_run,
    create_run,
    get_run,
    list_run_calls,
    list_run_events,
    list_runs,
)
from toolgate_client.generated.api.webhooks import (
    create_webhook,
    delete_webhook,
    list_webhook_deliveries,
    list_webhooks,
    rotate_webhook_secret,
)
from toolgate_client.generated.models import (
    AdvanceIn,
    ApproveIn,
    CallOut,
    CommitIn,
    CommitOut,
    CreateWebhookIn,
    DeliveryOut,
    EventOut,
    PreviewOut,
    PreviewStatus,
    RejectIn,
    ReviseIn,
    RunOut,
    RunStatus,
    TenantEventOut,
    WebhookOut,
    WebhookSecretOut,
)
from toolgate_client.generated.types import UNSET, Unset
from toolgate_client.retry import RetryPolicy
from toolgate_client.streams import Position
from toolgate_client.webhooks import verify


def _every(
    fetch: s.SyncFetch,
) -> Iterator[Any]:
    """Every item of a list, page after page."""
    cursor: str | Unset = UNSET
    while True:
        page = s.checked(fetch(cursor))
        for item in page.items:
            yield item
        if (after := s.cursor_of(page)) is None:
            return
        cursor = after


class Toolgate:
    """A client of one Toolgate service, as one API key (or access token).

    `retry` bounds the client's own retries (`RetryPolicy`); `proxy` is an HTTP proxy's URL
    (default: what `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` say); `transport` replaces httpx's
    (a test's); `timeout` is each request's, in seconds (a run's create and advance wait
    up to 30 s on the server)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        proxy: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        if transport is not None and proxy is not None:
            raise TypeError("pass a proxy or a transport, not both (the transport has its own)")
        # httpx reads the proxy variables only when it makes the transport itself.
        proxy = proxy if proxy is not None else s.env_proxy(base_url)
        transport = transport or httpx.HTTPTransport(proxy=proxy)
        self.http = httpx.Client(
            base_url=base_url,
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": s.USER_AGENT},
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=RetryTransport(transport, self.retry),
        )
        #: The generated client, on the same connection and retries: every operation of
        #: the API is in `toolgate_client.generated.api`, for what this class leaves out.
        self.raw = AuthenticatedClient(base_url=base_url, token=api_key)
        self.raw.set_httpx_client(self.http)
        self.runs = Runs(self)
        self.approvals = Approvals(self)
        self.events = Events(self)
        self.webhooks = Webhooks(self)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Toolgate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Runs:
    def __init__(self, tg: Toolgate) -> None:
        self._tg = tg

    def create(
        self,
        agent: str,
        input: str,
        *,
        idempotency_key: str | None = None,
        wait_s: float | None = None,
        **fields: Unpack[s.RunFields],
    ) -> RunOut:
        """Creates a run and answers it as it stands after up to `wait_s` (server default
        10). Retries send the same Idempotency-Key, so they answer the same run; pass your
        own key to make a retry after your process restarts answer it too."""
        body = s.run_in(agent, input, wait_s, fields)
        key = s.key_for(idempotency_key)
        return s.checked(
            create_run.sync_detailed(client=self._tg.raw, body=body, idempotency_key=key)
        )

    def create_and_wait(
        self,
        agent: str,
        input: str,
        *,
        idempotency_key: str | None = None,
        timeout_s: float | None = None,
        **fields: Unpack[s.RunFields],
    ) -> RunOut:
        """Creates a run and waits until it is `finished` or `awaiting_approval` (people
        decide then). Without `timeout_s` the run's own deadline bounds the wait; with it,
        `WaitTimeout` (holding the run) when the run is still moving."""
        deadline = s.deadline_of(timeout_s)
        # The same arguments make the same body, so that your own key, sent again after
        # a restart, is a retry and not a different request.
        wait_s = s.MAX_WAIT_S if timeout_s is None else max(0.0, min(s.MAX_WAIT_S, timeout_s))
        run = self.create(agent, input, idempotency_key=idempotency_key, wait_s=wait_s, **fields)
        return self._settle(run, deadline)

    def wait(self, run: RunOut | str, *, timeout_s: float | None = None) -> RunOut:
        """The run once it is `finished` or `awaiting_approval` (needs the caller role)."""
        return self._settle(self.get(run), s.deadline_of(timeout_s))

    def _settle(self, run: RunOut, deadline: float | None) -> RunOut:
        while run.status in s.MOVING:
            if (wait_s := s.wait_slice(deadline)) is None:
                raise WaitTimeout(run)
            asked = time.monotonic()
            try:
                moved = self.advance(run, wait_s=wait_s)
            except InvalidState:  # it stopped moving between two reads
                moved = self.get(run)
            quick = time.monotonic() - asked < s.IDLE_PAUSE_S
            if quick and moved.version == run.version and moved.status in s.MOVING:
                # Answered at once, unchanged: do not spin (nor pause past the deadline).
                time.sleep(min(s.IDLE_PAUSE_S, s.wait_slice(deadline) or 0.0))
            run = moved
        return run

    def get(self, run: RunOut | str) -> RunOut:
        return s.checked(get_run.sync_detailed(s.run_id(run), client=self._tg.raw))

    def list(
        self, *, status: str | None = None, agent: str | None = None, limit: int = 50
    ) -> Iterator[RunOut]:
        state = RunStatus(status) if status else UNSET
        return _every(
            lambda cursor: list_runs.sync_detailed(
                client=self._tg.raw, status=state, agent=s.unset(agent), limit=limit, cursor=cursor
            )
        )

    def advance(
        self,
        run: RunOut | str,
        *,
        wait_s: float | None = None,
        idempotency_key: str | None = None,
    ) -> RunOut:
        body = AdvanceIn(wait_s=s.unset(wait_s))
        key = s.key_for(idempotency_key)
        return s.checked(
            advance_run.sync_detailed(
                s.run_id(run), client=self._tg.raw, body=body, idempotency_key=key
            )
        )

    def cancel(self, run: RunOut | str, *, idempotency_key: str | None = None) -> RunOut:
        return s.checked(
            cancel_run.sync_detailed(
                s.run_id(run), client=self._tg.raw, idempotency_key=s.key_for(idempotency_key)
            )
        )

    def calls(self, run: RunOut | str) -> Iterator[CallOut]:
        return _every(
            lambda cursor: list_run_calls.sync_detailed(
                s.run_id(run), client=self._tg.raw, limit=200, cursor=cursor
            )
        )

    def events(
        self, run: RunOut | str, *, stream: bool = False, after: int = 0
    ) -> Iterator[EventOut]:
        """The run's timeline after `after`. With `stream=True`, as it happens (Server-Sent
        Events), until `run.finished`; a dropped connection is opened again from the last
        event seen, so no event is missed or repeated."""
        ident = s.run_id(run)
        if stream:
            params = {"after": str(after)} if after else {}
            position = Position(EventOut.from_dict, params, last_type="run.finished")
            return follow(
                self._tg.http, f"/v1/runs/{quote(ident)}/events", position, self._tg.retry
            )
        return _every(
            lambda cursor: list_run_events.sync_detailed(
                ident, client=self._tg.raw, after=after, limit=200, cursor=cursor
            )
        )


class Approvals:
    def __init__(self, tg: Toolgate) -> None:
        self._tg = tg

    def list(self, *, status: str = "pending") -> Iterator[PreviewOut]:
        state = PreviewStatus(status)
        return _every(
            lambda cursor: list_approvals.sync_detailed(
                client=self._tg.raw, status=state, limit=200, cursor=cursor
            )
        )

    def get(self, preview: PreviewOut | str) -> PreviewOut:
        return s.checked(get_preview.sync_detailed(s.preview_id(preview), client=self._tg.raw))

    def pending(self, run: RunOut | str) -> list[PreviewOut]:
        """The previews a run waits on (at most one at a time)."""
        current = self._tg.runs.get(run)
        return [self.get(p.preview_id) for p in current.pending_approvals]

    def approve(
        self,
        preview: PreviewOut | str,
        *,
        content_hash: str | None = None,
        idempotency_key: str | None = None,
    ) -> PreviewOut:
        """Approves what the approver saw: the preview as read, or its id with the
        `content_hash` shown (a changed preview is `PreviewMismatch`)."""
        ident, hash_ = s.decision(preview, content_hash)
        return s.checked(
            approve_preview.sync_detailed(
                ident,
                client=self._tg.raw,
                body=ApproveIn(content_hash=hash_),
                idempotency_key=s.key_for(idempotency_key),
            )
        )

    def reject(
        self, preview: PreviewOut | str, reason: str, *, idempotency_key: str | None = None
    ) -> PreviewOut:
        return s.checked(
            reject_preview.sync_detailed(
                s.preview_id(preview),
                client=self._tg.raw,
                body=RejectIn(reason=reason),
                idempotency_key=s.key_for(idempotency_key),
            )
        )

    def revise(
        self,
        preview: PreviewOut | str,
        arguments: Mapping[str, Any],
        reason: str,
        *,
        idempotency_key: str | None = None,
    ) -> PreviewOut:
        """Replaces the call's arguments; answers the new preview, to approve in its turn."""
        body = ReviseIn.from_dict({"arguments": dict(arguments), "reason": reason})
        revised = s.checked(
            revise_preview.sync_detailed(
                s.preview_id(preview),
                client=self._tg.raw,
                body=body,
                idempotency_key=s.key_for(idempotency_key),
            )
        )
        return revised.preview

    def commit(
        self,
        preview: PreviewOut | str,
        *,
        idempotency_key: str | None = None,
        wait_s: float | None = None,
    ) -> CommitOut:
        """Executes an approved call, then advances the run for up to `wait_s`. If the
        resource changed since the preview, `VersionConflict` names the new preview."""
        return s.checked(
            commit_preview.sync_detailed(
                s.preview_id(preview),
                client=self._tg.raw,
                body=CommitIn(wait_s=s.unset(wait_s)),
                idempotency_key=s.key_for(idempotency_key),
            )
        )


class Events:
    """The tenant's events across runs."""

    def __init__(self, tg: Toolgate) -> None:
        self._tg = tg

    def list(
        self,
        *,
        types: Sequence[str] = (),
        run_id: str | None = None,
        after: str | None = None,
    ) -> Iterator[TenantEventOut]:
        joined = ",".join(types) or UNSET
        return _every(
            lambda cursor: list_events.sync_detailed(
                client=self._tg.raw,
                types=joined,
                run_id=s.unset(run_id),
                after=s.unset(after),
                limit=200,
                cursor=cursor,
            )
        )

    def stream(
        self,
        *,
        types: Sequence[str] = (),
        run_id: str | None = None,
        after: str | None = None,
    ) -> Iterator[TenantEventOut]:
        """Events as they are committed (from `after`, an event's `id`, when given), through
        dropped connections, for as long as you iterate."""
        params = {"types": ",".join(types), "run_id": run_id or "", "after": after or ""}
        position = Position(TenantEventOut.from_dict, {k: v for k, v in params.items() if v})
        return follow(self._tg.http, "/v1/events", position, self._tg.retry)


class Webhooks:
    #: `tg.webhooks.verify(body, headers, secret)`: a delivery checked before use.
    verify = staticmethod(verify)

    def __init__(self, tg: Toolgate) -> None:
        self._tg = tg

    def create(
        self, url: str, events: Sequence[str], *, idempotency_key: str | None = None
    ) -> WebhookSecretOut:
        """Registers an endpoint; the answer holds its signing `secret` (only here)."""
        body = CreateWebhookIn.from_dict({"url": url, "events": list(events)})
        return s.checked(
            create_webhook.sync_detailed(
                client=self._tg.raw, body=body, idempotency_key=s.key_for(idempotency_key)
            )
        )

    def list(self) -> Iterator[WebhookOut]:
        return _every(
            lambda cursor: list_webhooks.sync_detailed(
                client=self._tg.raw, limit=200, cursor=cursor
            )
        )

    def delete(self, webhook_id: str) -> None:
        s.checked(delete_webhook.sync_detailed(webhook_id, client=self._tg.raw))

    def rotate(self, webhook_id: str, *, idempotency_key: str | None = None) -> WebhookSecretOut:
        """A new secret; the old one keeps verifying for 24 hours. With your own key, a
        retry after a restart answers the same secret instead of rotating twice."""
        return s.checked(
            rotate_webhook_secret.sync_detailed(
                webhook_id, client=self._tg.raw, idempotency_key=s.key_for(idempotency_key)
            )
        )

    def deliveries(self, webhook_id: str) -> Iterator[DeliveryOut]:
        return _every(
            lambda cursor: list_webhook_deliveries.sync_detailed(
                webhook_id, client=self._tg.raw, limit=200, cursor=cursor
            )
        )
