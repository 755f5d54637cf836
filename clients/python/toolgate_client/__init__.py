"""Toolgate's Python client.

    from toolgate_client import Toolgate

    with Toolgate("http://localhost:8000", api_key) as tg:
        run = tg.runs.create_and_wait("tech-radar", "Which databases are in adopt?")

`AsyncToolgate` is the same for asyncio. Models are in `toolgate_client.models`, errors in
`toolgate_client.errors`; `toolgate_client.generated` holds every operation of the API."""

from toolgate_client._async.client import AsyncToolgate
from toolgate_client._sync.client import Toolgate
from toolgate_client.errors import (
    PROBLEM_CLASSES,
    ProblemError,
    ToolgateError,
    WaitTimeout,
    WebhookVerificationError,
)
from toolgate_client.retry import RetryPolicy
from toolgate_client.streams import StreamBroken
from toolgate_client.webhooks import verify as verify_webhook

__all__ = [
    "PROBLEM_CLASSES",
    "AsyncToolgate",
    "ProblemError",
    "RetryPolicy",
    "StreamBroken",
    "Toolgate",
    "ToolgateError",
    "WaitTimeout",
    "WebhookVerificationError",
    "verify_webhook",
]
