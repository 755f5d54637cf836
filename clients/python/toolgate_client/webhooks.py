"""Verifying a webhook delivery before acting on it (Standard Webhooks, on the
`standardwebhooks` package): the signature over its id, timestamp and body, with the
endpoint's secret, and a timestamp within five minutes of now (a replayed old delivery is
refused). Verify the raw body as it arrived, before parsing it."""

from __future__ import annotations

import binascii
from collections.abc import Mapping, Sequence

from standardwebhooks.webhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as _LibraryError

from toolgate_client.errors import WebhookVerificationError
from toolgate_client.generated.models import TenantEventOut


def verify(
    payload: bytes | str, headers: Mapping[str, str], secret: str | Sequence[str]
) -> TenantEventOut:
    """The delivered event, once its signature verifies with `secret` (or one of several
    secrets, while you move to a rotated one); raises `WebhookVerificationError` otherwise."""
    secrets = [secret] if isinstance(secret, str) else list(secret)
    for each in secrets:
        try:
            event = Webhook(each).verify(payload, dict(headers))  # it reads names in any case
        except (_LibraryError, binascii.Error, ValueError):
            continue
        try:
            return TenantEventOut.from_dict(event)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise WebhookVerificationError("the verified body is not a Toolgate event") from None
    raise WebhookVerificationError("the webhook's signature or timestamp does not verify")
