"""Webhook destinations' names, resolved without a thread per lookup: c-ares (`pycares`,
through `aiodns`) keeps every query of the process on one channel, with its sockets
watched by the channel's own event thread and answers handed to the loop. A name whose
servers never answer costs a pending query in c-ares until it gives up, never a thread
another tenant's lookup would wait for; the wait for it is bounded here.

The system's configuration is used (/etc/resolv.conf, /etc/hosts), or the name servers
the operator names (`TOOLGATE_WEBHOOK_DNS_SERVERS`)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence

import aiodns
import pycares

from app.domain.errors import ToolgateError
from app.domain.webhooks.destinations import Destination, IpAddress, ip_literal

#: What says that our own resolver did not answer, rather than that the name has no
#: address: no answer in time, the server unreachable, the channel shut down.
_LOCAL_FAILURES = frozenset(
    {
        pycares.errno.ARES_ETIMEOUT,
        pycares.errno.ARES_ECONNREFUSED,
        pycares.errno.ARES_ECANCELLED,
        pycares.errno.ARES_EDESTRUCTION,
    }
)
#: Tries c-ares makes per server before it gives up on a query (each waits longer); the
#: wait for an answer is bounded by `Resolver.timeout_s` whatever it does.
_TRIES = 2


class ResolverUnavailable(ToolgateError):
    """Our resolver gave no answer (timeout, unreachable): nothing is known of the name,
    and the destination is not to blame. The message is safe to show."""


class Resolver:
    """Resolves webhook names within `timeout_s`; made and used on one event loop."""

    def __init__(self, *, timeout_s: float, servers: Sequence[str] = ()) -> None:
        self.timeout_s = timeout_s
        self._servers = list(servers)
        self._dns: aiodns.DNSResolver | None = None

    def _channel(self) -> aiodns.DNSResolver:
        if self._dns is None:  # on the loop that uses it (made at the first lookup)
            self._dns = aiodns.DNSResolver(
                nameservers=self._servers or None,
                timeout=self.timeout_s,
                tries=_TRIES,
                loop=asyncio.get_running_loop(),
            )
        return self._dns

    async def resolve(self, dest: Destination) -> list[IpAddress]:
        """Every address the host has now (an IP literal is its own; empty: the name has
        none). `ResolverUnavailable` when our resolver did not answer in time."""
        literal = dest.literal
        if literal is not None:
            return [literal]
        try:
            async with asyncio.timeout(self.timeout_s):
                found = await self._channel().getaddrinfo(
                    dest.host, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM
                )
        except TimeoutError:
            raise ResolverUnavailable(
                f"the service's resolver did not answer within {self.timeout_s:g} s"
            ) from None
        except aiodns.error.DNSError as exc:
            if exc.args and exc.args[0] in _LOCAL_FAILURES:
                raise ResolverUnavailable(
                    "the service's resolver did not answer (timed out or unreachable)"
                ) from None
            return []  # no such name, no address, or its servers failed: the name's doing
        except UnicodeError:
            return []
        addresses = [ip_literal(node.addr[0].decode().split("%")[0]) for node in found.nodes]
        return list(dict.fromkeys(a for a in addresses if a is not None))

    async def aclose(self) -> None:
        if self._dns is not None:
            await self._dns.close()
            self._dns = None
