"""Webhook rules (SPEC §3.8): the operator's allowlist of destinations, which resolved
addresses a delivery may connect to, and what an attempt's answer means for the delivery.

A pattern is `scheme://host[:port]`: `*` as the whole host is any host, a `*` label is any
one label (`*.example.com`), `*` as the port is any port, and a pattern without a port
allows the scheme's default port only (as a CSP source does)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from app.domain.errors import ToolgateError

DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_URL = 2000
ANY = "*"
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def ip_literal(host: str) -> IpAddress | None:
    """The host as an IP address, when it is one."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


class BadDestination(ToolgateError, ValueError):
    """A URL or pattern that is not `http(s)://host[:port][/path]`; the message is safe."""


@dataclass(frozen=True)
class Destination:
    """Where a URL points: scheme, host (lower case, no trailing dot, no brackets), port."""

    scheme: str
    host: str
    port: int

    @property
    def literal(self) -> IpAddress | None:
        return ip_literal(self.host)


#: A URL's host and port as the sender can use them: a name or IPv4 address, or an IPv6
#: address in brackets, then an optional port.
_HOST_PORT = re.compile(r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]*)?")


def destination(url: str) -> Destination:
    """The destination of a webhook URL; refuses credentials, fragments and odd schemes."""
    if len(url) > MAX_URL or any(c.isspace() or ord(c) < 32 for c in url):
        raise BadDestination(f"must be an http(s) URL of at most {MAX_URL} characters")
    # What the sender can send, or it would be taken now and fail at every attempt: ASCII
    # only (an internationalized name in its xn-- form), an IPv6 host as [address].
    if any(ord(c) >= 0x7F for c in url):
        raise BadDestination("must be ASCII: write an internationalized name in its xn-- form")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise BadDestination("not a valid URL") from None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise BadDestination("must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise BadDestination("must not carry credentials")
    if parts.fragment:
        raise BadDestination("must not have a fragment")
    if not _HOST_PORT.fullmatch(parts.netloc):
        raise BadDestination("must have a host name, an IPv4 address or an [IPv6] address")
    host = parts.hostname.rstrip(".")
    return Destination(parts.scheme, host, port or DEFAULT_PORTS[parts.scheme])


@dataclass(frozen=True)
class Pattern:
    scheme: str
    host: str  # "*", or labels some of which may be "*"
    port: int | None  # None: any port

    def matches(self, dest: Destination) -> bool:
        return (
            self.scheme == dest.scheme
            and (self.port is None or self.port == dest.port)
            and _host_matches(self.host, dest.host)
        )

    @property
    def literal(self) -> IpAddress | None:
        return ip_literal(self.host)


def _host_matches(pattern: str, host: str) -> bool:
    if pattern == ANY:
        return True
    wanted, labels = pattern.split("."), host.split(".")
    return len(wanted) == len(labels) and all(
        w in (ANY, h) for w, h in zip(wanted, labels, strict=True)
    )


def pattern(text: str) -> Pattern:
    """A `scheme://host[:port]` pattern; `BadDestination` says what is wrong with it."""
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in DEFAULT_PORTS or not rest or "/" in rest or "@" in rest:
        raise BadDestination("must be scheme://host[:port] with scheme http or https")
    host, port_text = _split_port(rest)
    if not host or any(not label for label in host.split(".")):
        raise BadDestination("has an empty host or label")
    if port_text is None:
        port: int | None = DEFAULT_PORTS[scheme]
    elif port_text == ANY:
        port = None
    elif port_text.isdigit() and 0 < int(port_text) < 65536:
        port = int(port_text)
    else:
        raise BadDestination("has a port that is neither a number nor *")
    return Pattern(scheme, host.lower().strip("[]"), port)


def _split_port(rest: str) -> tuple[str, str | None]:
    if rest.startswith("["):  # an IPv6 literal: [::1]:8080
        host, _, after = rest.partition("]")
        return host + "]", after[1:] if after.startswith(":") else None
    host, sep, port = rest.rpartition(":")
    return (host, port) if sep else (rest, None)


def allowed(patterns: Sequence[Pattern], dest: Destination) -> bool:
    """Whether the allowlist admits the destination (checked at registration)."""
    return any(p.matches(dest) for p in patterns)


#: The well-known NAT64 prefix (RFC 6052): `64:ff9b::a.b.c.d` is the IPv4 host a.b.c.d,
#: reached through the network's NAT64 gateway. Judged by that IPv4 address.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: IPv6 ranges that carry an IPv4 address (or two) which cannot all be judged, or that
#: nobody should need for a webhook: not global for a delivery, whatever they carry, so
#: they pass only when a pattern names the address literally.
TUNNELLED = (
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible (deprecated by RFC 4291)
    ipaddress.IPv6Network("::ffff:0:0:0/96"),  # IPv4-translated (SIIT, RFC 2765)
    # Local-use NAT64 (RFC 8215): where the IPv4 address sits is the network's choice.
    ipaddress.IPv6Network("64:ff9b:1::/48"),
    ipaddress.IPv6Network("2002::/16"),  # 6to4 (RFC 3056, deprecated by RFC 7526)
    ipaddress.IPv6Network("2001::/32"),  # Teredo (RFC 4380): a server's and a client's IPv4
)


def internal(address: IpAddress) -> bool:
    """Addresses a name must not lead to unless allowed by their literal: loopback,
    link-local, private, shared (carrier-grade NAT), unspecified, multicast, reserved:
    every address that is not global. An IPv6 address that carries an IPv4 one is judged
    by it (IPv4-mapped, NAT64's well-known prefix), or is internal whatever it carries
    (`TUNNELLED`: 6to4, Teredo, local-use NAT64, IPv4-compatible and -translated)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return internal(address.ipv4_mapped)
        if address in NAT64:
            return internal(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if any(address in network for network in TUNNELLED):
            return True
    # Not only the private ranges: anything not globally routable (the carrier-grade NAT
    # range 100.64.0.0/10, where some clouds put their metadata service, included).
    return (
        not address.is_global
        or address.is_loopback
        or address.is_link_local
        or address.is_private
        or address.is_unspecified
        or address.is_multicast
        or address.is_reserved
    )


def address_refusal(
    patterns: Sequence[Pattern], dest: Destination, addresses: Sequence[IpAddress]
) -> str | None:
    """Why the resolved `addresses` may not be connected to (None: they may). An internal
    address passes only when a pattern names it literally and admits this destination's
    scheme and port, so a public name rebound to an internal address is refused."""
    if not addresses:
        return "the host did not resolve"
    for address in addresses:
        if internal(address) and not any(
            p.literal == address and p.matches(Destination(dest.scheme, p.host, dest.port))
            for p in patterns
        ):
            return f"the host resolves to an address that is not allowed ({address})"
    return None


class Verdict(StrEnum):
    SUCCEEDED = "succeeded"
    RETRY = "retry"
    GONE = "gone"  # 410: the endpoint is disabled


def verdict(status_code: int | None) -> Verdict:
    """What an attempt's answer means (None: no answer: refused, timed out, broken)."""
    if status_code is not None and 200 <= status_code < 300:
        return Verdict.SUCCEEDED
    if status_code == 410:
        return Verdict.GONE
    # Anything else, redirects included (they are not followed), is a failed attempt.
    return Verdict.RETRY


def retry_delay(attempts: int, schedule: Sequence[float]) -> float | None:
    """Seconds until the next attempt after `attempts` failed ones (None: give up). The
    first attempt is immediate; the schedule lists the waits before each retry."""
    if attempts < 1 or attempts > len(schedule):
        return None
    return schedule[attempts - 1]
