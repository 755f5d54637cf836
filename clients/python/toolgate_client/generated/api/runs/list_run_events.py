from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.event_page import EventPage
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run_id: str,
    *,
    after: int | Unset = 0,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    params: dict[str, Any] = {}

    params["after"] = after

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
        "url": "/v1/runs/{run_id}/events".format(
            run_id=quote(str(run_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | EventPage | Problem | None:
    if response.status_code == 200:
        response_200 = EventPage.from_dict(response.json())

        return response_200

    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

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
) -> Response[Any | EventPage | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = 0,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Response[Any | EventPage | Problem]:
    """List Run Events

    Args:
        run_id (str):
        after (int | Unset): Only events with a greater seq. Default: 0.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | EventPage | Problem]
    """

    kwargs = _get_kwargs(
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
    run_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = 0,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Any | EventPage | Problem | None:
    """List Run Events

    Args:
        run_id (str):
        after (int | Unset): Only events with a greater seq. Default: 0.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | EventPage | Problem
    """

    return sync_detailed(
        run_id=run_id,
        client=client,
        after=after,
        limit=limit,
        cursor=cursor,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    run_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = 0,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Response[Any | EventPage | Problem]:
    """List Run Events

    Args:
        run_id (str):
        after (int | Unset): Only events with a greater seq. Default: 0.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | EventPage | Problem]
    """

    kwargs = _get_kwargs(
        run_id=run_id,
        after=after,
        limit=limit,
        cursor=cursor,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run_id: str,
    *,
    client: AuthenticatedClient,
    after: int | Unset = 0,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
    last_event_id: str | Unset = UNSET,
) -> Any | EventPage | Problem | None:
    """List Run Events

    Args:
        run_id (str):
        after (int | Unset): Only events with a greater seq. Default: 0.
        limit (int | Unset): Items per page (default 50). Default: 50.
        cursor (None | str | Unset):
        last_event_id (str | Unset): With `Accept: text/event-stream`: resume after this event's
            id (what a reconnecting EventSource sends).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | EventPage | Problem
    """

    return (
        await asyncio_detailed(
            run_id=run_id,
            client=client,
            after=after,
            limit=limit,
            cursor=cursor,
            last_event_id=last_event_id,
        )
    ).parsed
