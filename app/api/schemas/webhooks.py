"""Wire schemas of webhook endpoints and their deliveries (SPEC §3.8)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from app.api.hygiene import RequestBody
from app.domain.lifecycle.events import EventType
from app.domain.webhooks.destinations import MAX_URL

URL_PATTERN = (
    r'^https?://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,4})?(?:[/?][!-"$-~]*)?$'
)


class CreateWebhookIn(RequestBody):
    url: str = Field(
        min_length=1,
        max_length=MAX_URL,
        description="An http(s) URL the operator's allowlist admits (else 422).",
        examples=["https://hooks.example.com/toolgate"],
        # Declared for clients (`domain.webhooks.destinations.destination` checks it, and more: a
        # port in range, no credentials, no fragment): a host, an optional port, a path.
        json_schema_extra={"pattern": URL_PATTERN},
    )
    events: list[EventType] = Field(
        min_length=1,
        max_length=100,
        description="The event types to deliver, e.g. `call.awaiting_approval`, `run.finished`.",
    )


class WebhookOut(BaseModel):
    """An endpoint as listed: never its secret."""

    id: str
    url: str
    events: list[EventType]
    created_at: datetime
    created_by: str
    disabled_at: datetime | None = Field(
        description="When deliveries stopped (the endpoint answered `410 Gone`)."
    )
    disabled_reason: str | None
    previous_secret_expires_at: datetime | None = Field(
        description="After a rotation: until when the previous secret still signs."
    )


class WebhookSecretOut(WebhookOut):
    """The answer that shows the signing secret, the only one."""

    secret: str | None = Field(
        description="`whsec_` + base64 of the HMAC key, shown only in this answer. A "
        "rotation replayed for a repeated Idempotency-Key answers the same secret, read "
        "again from the endpoint while no later rotation replaced it (then `409`); a "
        "registration replayed answers `null` (rotate to get a new one)."
    )


class WebhookPage(BaseModel):
    items: list[WebhookOut]
    next_cursor: str | None


class DeliveryAttemptOut(BaseModel):
    at: datetime
    status_code: int | None = Field(description="The receiver's answer; `null`: none came.")
    latency_ms: int | None
    error: str | None = Field(description="Why the attempt failed, when it did.")
    counted: bool = Field(
        description="`false`: the service could not make the attempt (its own resolver did "
        "not answer), and it does not count against the delivery's retries."
    )


class DeliveryOut(BaseModel):
    id: str = Field(description="The `webhook-id` header: the same on every attempt.")
    run_id: str
    seq: int
    type: EventType
    status: Literal["pending", "succeeded", "failed", "abandoned"]
    attempts: list[DeliveryAttemptOut]
    next_attempt_at: datetime | None = Field(description="While pending: the next attempt.")
    created_at: datetime
    finished_at: datetime | None


class DeliveryPage(BaseModel):
    items: list[DeliveryOut]
    next_cursor: str | None
