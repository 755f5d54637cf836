from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.webhook_secret_out import WebhookSecretOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: str,
    *,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{webhook_id}/rotate".format(
            webhook_id=quote(str(webhook_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WebhookSecretOut | None:
    if response.status_code == 200:
        response_200 = WebhookSecretOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | WebhookSecretOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> Response[Problem | WebhookSecretOut]:
    """Rotate Webhook Secret

     A new secret. The previous one keeps signing for 24 h (`webhook-signature` then
    carries both), so receivers can switch without a gap; another rotation within them is
    `409`. With an `Idempotency-Key`, a retry is answered the same secret, read again
    from the endpoint, as long as no later rotation replaced it (then `409`; `404` once
    the endpoint is deleted): send one, so that an answer lost on the way never loses
    the secret.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset): 1–255 visible ASCII characters (the quoted form `"abc"` is
            the same key). A retry with the same key and body replays the first answer (`Idempotent-
            Replayed: true`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookSecretOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> Problem | WebhookSecretOut | None:
    """Rotate Webhook Secret

     A new secret. The previous one keeps signing for 24 h (`webhook-signature` then
    carries both), so receivers can switch without a gap; another rotation within them is
    `409`. With an `Idempotency-Key`, a retry is answered the same secret, read again
    from the endpoint, as long as no later rotation replaced it (then `409`; `404` once
    the endpoint is deleted): send one, so that an answer lost on the way never loses
    the secret.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset): 1–255 visible ASCII characters (the quoted form `"abc"` is
            the same key). A retry with the same key and body replays the first answer (`Idempotent-
            Replayed: true`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookSecretOut
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> Response[Problem | WebhookSecretOut]:
    """Rotate Webhook Secret

     A new secret. The previous one keeps signing for 24 h (`webhook-signature` then
    carries both), so receivers can switch without a gap; another rotation within them is
    `409`. With an `Idempotency-Key`, a retry is answered the same secret, read again
    from the endpoint, as long as no later rotation replaced it (then `409`; `404` once
    the endpoint is deleted): send one, so that an answer lost on the way never loses
    the secret.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset): 1–255 visible ASCII characters (the quoted form `"abc"` is
            the same key). A retry with the same key and body replays the first answer (`Idempotent-
            Replayed: true`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookSecretOut]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: str | Unset = UNSET,
) -> Problem | WebhookSecretOut | None:
    """Rotate Webhook Secret

     A new secret. The previous one keeps signing for 24 h (`webhook-signature` then
    carries both), so receivers can switch without a gap; another rotation within them is
    `409`. With an `Idempotency-Key`, a retry is answered the same secret, read again
    from the endpoint, as long as no later rotation replaced it (then `409`; `404` once
    the endpoint is deleted): send one, so that an answer lost on the way never loses
    the secret.

    Args:
        webhook_id (str):
        idempotency_key (str | Unset): 1–255 visible ASCII characters (the quoted form `"abc"` is
            the same key). A retry with the same key and body replays the first answer (`Idempotent-
            Replayed: true`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookSecretOut
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            idempotency_key=idempotency_key,
        )
    ).parsed
