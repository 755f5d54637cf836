from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.tenant_event_page import TenantEventPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    types: None | str | Unset = UNSET,
    run_id: None | str | Unset = UNSET,
    after: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    params: dict[str, Any] = {}

    json_types: None | str | Unset
    if isinstance(types, Unset):
        json_types = UNSET
    else:
        json_types = types
    params["types"] = json_types

    json_run_id: None | str | Unset
    if isinstance(run_id, Unset):
        json_run_id = UNSET
    else:
        json_run_id = run_id
    params["run_id"] = json_run_id

    json_after: None | str | Unset
    if isinstance(after, Unset):
        json_after = UNSET
    else:
        json_after = after
    params["after"] = json_after

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | TenantEventPage | None:
    if response.status_code == 200:
        response_200 = TenantEventPage.from_dict(response.json())

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

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

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
) -> Response[Problem | TenantEventPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    types: None | str | Unset = UNSET,
    run_id: None | str | Unset = UNSET,
    after: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Response[Problem | TenantEventPage]:
    """List Events

    Args:
        types (None | str | Unset): Event types, comma-separated.
        run_id (None | str | Unset): One run's only.
        after (None | str | Unset): Only events after this event `id`.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TenantEventPage]
    """

    kwargs = _get_kwargs(
        types=types,
        run_id=run_id,
        after=after,
        limit=limit,
        cursor=cursor,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    types: None | str | Unset = UNSET,
    run_id: None | str | Unset = UNSET,
    after: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Problem | TenantEventPage | None:
    """List Events

    Args:
        types (None | str | Unset): Event types, comma-separated.
        run_id (None | str | Unset): One run's only.
        after (None | str | Unset): Only events after this event `id`.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TenantEventPage
    """

    return sync_detailed(
        client=client,
        types=types,
        run_id=run_id,
        after=after,
        limit=limit,
        cursor=cursor,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    types: None | str | Unset = UNSET,
    run_id: None | str | Unset = UNSET,
    after: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Response[Problem | TenantEventPage]:
    """List Events

    Args:
        types (None | str | Unset): Event types, comma-separated.
        run_id (None | str | Unset): One run's only.
        after (None | str | Unset): Only events after this event `id`.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TenantEventPage]
    """

    kwargs = _get_kwargs(
        types=types,
        run_id=run_id,
        after=after,
        limit=limit,
        cursor=cursor,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    types: None | str | Unset = UNSET,
    run_id: None | str | Unset = UNSET,
    after: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Problem | TenantEventPage | None:
    """List Events

    Args:
        types (None | str | Unset): Event types, comma-separated.
        run_id (None | str | Unset): One run's only.
        after (None | str | Unset): Only events after this event `id`.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TenantEventPage
    """

    return (
        await asyncio_detailed(
            client=client,
            types=types,
            run_id=run_id,
            after=after,
            limit=limit,
            cursor=cursor,
            last_event_id=last_event_id,
        )
    ).parsed
