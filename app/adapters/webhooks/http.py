"""Webhook requests on the wire: the destination's name resolved once (`webhook_dns`), the
request sent to the address that was checked (so a second DNS answer cannot rebind it),
with the name as Host and, over TLS, as the server name the certificate is checked
against. Redirects are not followed, proxies from the environment are not used, answers
are not read."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from app.domain.webhooks.destinations import DEFAULT_PORTS, Destination, IpAddress


@dataclass(frozen=True)
class Answer:
    """What one attempt got: a status code, or an error in safe words."""

    status_code: int | None
    latency_ms: int
    error: str | None = None


class WebhookClient:
    def __init__(self, max_connections: int) -> None:
        # No keep-alive: a pooled connection is matched by address, not by name, and a
        # second host on the same address would reuse a TLS session checked for the first.
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=0),
        )

    async def post(
        self,
        url: str,
        dest: Destination,
        address: IpAddress,
        headers: Mapping[str, str],
        body: bytes,
        timeout_s: float,
    ) -> Answer:
        pinned = httpx.URL(url).copy_with(host=str(address))
        host = dest.host if ":" not in dest.host else f"[{dest.host}]"
        if dest.port != DEFAULT_PORTS[dest.scheme]:
            host = f"{host}:{dest.port}"
        request = self._client.build_request(
            "POST",
            pinned,
            content=body,
            headers={**headers, "Host": host, "Content-Type": "application/json"},
            timeout=httpx.Timeout(timeout_s),
            extensions={"sni_hostname": dest.host} if dest.scheme == "https" else {},
        )
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout_s):
                response = await self._client.send(request, stream=True)
                await response.aclose()
        except (TimeoutError, httpx.TimeoutException):
            return Answer(None, _ms(started), f"no answer within {timeout_s:g} s")
        except httpx.HTTPError as exc:
            return Answer(None, _ms(started), f"the request failed ({type(exc).__name__})")
        error = None
        if 300 <= response.status_code < 400:
            error = "a redirect, which is not followed"
        return Answer(response.status_code, _ms(started), error)

    async def aclose(self) -> None:
        await self._client.aclose()


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
