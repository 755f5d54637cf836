from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.commit_in import CommitIn
from ...models.commit_out import CommitOut
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    preview_id: str,
    *,
    body: CommitIn | Unset = UNSET,
    idempotency_key: str,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/previews/{preview_id}/commit".format(
            preview_id=quote(str(preview_id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CommitOut | Problem | None:
    if response.status_code == 200:
        response_200 = CommitOut.from_dict(response.json())

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

    if response.status_code == 410:
        response_410 = Problem.from_dict(response.json())

        return response_410

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

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
) -> Response[CommitOut | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    preview_id: str,
    *,
    client: AuthenticatedClient,
    body: CommitIn | Unset = UNSET,
    idempotency_key: str,
) -> Response[CommitOut | Problem]:
    """Commit Preview

     Executes the approved call — exactly the approved arguments, once, whoever else
    tries — then advances the run for up to `wait_s`. Only an approved, unexpired preview
    can be committed (`409 preview-not-approved`, `410 preview-expired`); a resource that
    changed since the preview answers `409 version-conflict` with `new_preview_id`, a new
    preview to review. `Idempotency-Key` is required.

    Args:
        preview_id (str):
        idempotency_key (str): Required. 1–255 visible ASCII characters (the quoted form `"abc"`
            is the same key). A retry with the same key and body replays the first answer
            (`Idempotent-Replayed: true`).
        body (CommitIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CommitOut | Problem]
    """

    kwargs = _get_kwargs(
        preview_id=preview_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    preview_id: str,
    *,
    client: AuthenticatedClient,
    body: CommitIn | Unset = UNSET,
    idempotency_key: str,
) -> CommitOut | Problem | None:
    """Commit Preview

     Executes the approved call — exactly the approved arguments, once, whoever else
    tries — then advances the run for up to `wait_s`. Only an approved, unexpired preview
    can be committed (`409 preview-not-approved`, `410 preview-expired`); a resource that
    changed since the preview answers `409 version-conflict` with `new_preview_id`, a new
    preview to review. `Idempotency-Key` is required.

    Args:
        preview_id (str):
        idempotency_key (str): Required. 1–255 visible ASCII characters (the quoted form `"abc"`
            is the same key). A retry with the same key and body replays the first answer
            (`Idempotent-Replayed: true`).
        body (CommitIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CommitOut | Problem
    """

    return sync_detailed(
        preview_id=preview_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    preview_id: str,
    *,
    client: AuthenticatedClient,
    body: CommitIn | Unset = UNSET,
    idempotency_key: str,
) -> Response[CommitOut | Problem]:
    """Commit Preview

     Executes the approved call — exactly the approved arguments, once, whoever else
    tries — then advances the run for up to `wait_s`. Only an approved, unexpired preview
    can be committed (`409 preview-not-approved`, `410 preview-expired`); a resource that
    changed since the preview answers `409 version-conflict` with `new_preview_id`, a new
    preview to review. `Idempotency-Key` is required.

    Args:
        preview_id (str):
        idempotency_key (str): Required. 1–255 visible ASCII characters (the quoted form `"abc"`
            is the same key). A retry with the same key and body replays the first answer
            (`Idempotent-Replayed: true`).
        body (CommitIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CommitOut | Problem]
    """

    kwargs = _get_kwargs(
        preview_id=preview_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    preview_id: str,
    *,
    client: AuthenticatedClient,
    body: CommitIn | Unset = UNSET,
    idempotency_key: str,
) -> CommitOut | Problem | None:
    """Commit Preview

     Executes the approved call — exactly the approved arguments, once, whoever else
    tries — then advances the run for up to `wait_s`. Only an approved, unexpired preview
    can be committed (`409 preview-not-approved`, `410 preview-expired`); a resource that
    changed since the preview answers `409 version-conflict` with `new_preview_id`, a new
    preview to review. `Idempotency-Key` is required.

    Args:
        preview_id (str):
        idempotency_key (str): Required. 1–255 visible ASCII characters (the quoted form `"abc"`
            is the same key). A retry with the same key and body replays the first answer
            (`Idempotent-Replayed: true`).
        body (CommitIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CommitOut | Problem
    """

    return (
        await asyncio_detailed(
            preview_id=preview_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
