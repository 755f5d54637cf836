"""A name server on loopback (UDP, in the test's event loop): answers A and AAAA queries
from a table, says NXDOMAIN for names it does not know, and never answers a black-holed
name, as an authoritative server that drops queries looks to a resolver. No test depends
on a real name server."""

from __future__ import annotations

import asyncio
import ipaddress
import struct
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import cast

_A, _AAAA, _IN = 1, 28, 1
_NXDOMAIN = 3


@dataclass
class FakeDns(asyncio.DatagramProtocol):
    #: name (lower case, no trailing dot) → its addresses (IPv4 and IPv6 literals).
    records: dict[str, list[str]] = field(default_factory=dict)
    #: Names whose queries are dropped: the resolver waits for an answer that never comes.
    black_holes: set[str] = field(default_factory=set)
    #: Queries received per name.
    asked: Counter[str] = field(default_factory=Counter)
    port: int = 0
    _transport: asyncio.DatagramTransport | None = None
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)

    @property
    def server(self) -> str:
        """The `ip:port` a resolver is pointed at."""
        return f"127.0.0.1:{self.port}"

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        parsed = _question(data)
        if parsed is None or self._transport is None:
            return
        name, qtype, question = parsed
        self.asked[name] += 1
        self._arrived.set()
        if name in self.black_holes:
            return
        known = self.records.get(name)
        wanted = 4 if qtype == _A else 6 if qtype == _AAAA else 0
        answers = [
            ipaddress.ip_address(a).packed
            for a in known or []
            if ipaddress.ip_address(a).version == wanted
        ]
        flags = 0x8580 | (0 if known is not None else _NXDOMAIN)  # QR AA RD RA, rcode
        query_id = struct.unpack("!H", data[:2])[0]
        header = struct.pack("!HHHHHH", query_id, flags, 1, len(answers), 0, 0)
        records = b"".join(
            struct.pack("!HHHIH", 0xC00C, qtype, _IN, 0, len(rdata)) + rdata for rdata in answers
        )
        self._transport.sendto(header + question + records, addr)

    async def wait_asked(self, name: str, count: int, timeout_s: float = 5) -> None:
        """Until `name` was asked `count` times (each lookup asks A and AAAA)."""
        async with asyncio.timeout(timeout_s):
            while self.asked[name] < count:
                self._arrived.clear()
                await self._arrived.wait()


def _question(data: bytes) -> tuple[str, int, bytes] | None:
    """The query's name, type and question section as sent (echoed in the answer)."""
    if len(data) < 12 or struct.unpack("!H", data[4:6])[0] != 1:
        return None
    at, labels = 12, []
    while at < len(data) and data[at]:
        size = data[at]
        labels.append(data[at + 1 : at + 1 + size].decode("ascii", "replace"))
        at += 1 + size
    end = at + 5
    if end > len(data):
        return None
    qtype = struct.unpack("!H", data[at + 1 : at + 3])[0]
    return ".".join(labels).lower(), qtype, data[12:end]


@asynccontextmanager
async def serving_dns() -> AsyncIterator[FakeDns]:
    """A fake name server on 127.0.0.1, on a free port; the test fills its tables."""
    loop = asyncio.get_running_loop()
    transport, dns = await loop.create_datagram_endpoint(FakeDns, local_addr=("127.0.0.1", 0))
    dns.port = transport.get_extra_info("sockname")[1]
    try:
        yield dns
    finally:
        transport.close()
