"""The webhook rules (app/domain/webhooks/destinations.py, webhook_signing.py): allowlist patterns,
the addresses a delivery may connect to, what an answer means, the retry schedule, and
signatures as the standardwebhooks library computes and verifies them."""

from __future__ import annotations

import ipaddress
import time
from datetime import UTC, datetime

import pytest
from standardwebhooks.webhooks import Webhook

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import ConfigError, parse_config
from app.domain.webhooks.destinations import (
    BadDestination,
    Verdict,
    address_refusal,
    allowed,
    destination,
    pattern,
    retry_delay,
    verdict,
)
from app.domain.webhooks.signing import new_secret, signature, signature_header

DEFAULT = [pattern("https://*"), pattern("http://127.0.0.1:*")]


@pytest.mark.parametrize(
    ("patterns", "url", "admitted"),
    [
        (["https://*"], "https://hooks.example.com/x?y=1", True),
        (["https://*"], "https://HOOKS.example.com./x", True),
        (["https://*"], "https://hooks.example.com:8443/x", False),  # default port only
        (["https://*:*"], "https://hooks.example.com:8443/x", True),
        (["https://*"], "http://hooks.example.com/x", False),
        (["https://*.example.com"], "https://a.example.com/", True),
        (["https://*.example.com"], "https://a.b.example.com/", False),  # one label
        (["https://*.example.com"], "https://example.com/", False),
        (["http://127.0.0.1:*"], "http://127.0.0.1:9000/h", True),
        (["http://127.0.0.1:9000"], "http://127.0.0.1:9001/h", False),
        (["http://[::1]:*"], "http://[::1]:9000/h", True),
        ([], "https://hooks.example.com/", False),
    ],
)
def test_allowlist_patterns(patterns: list[str], url: str, admitted: bool) -> None:
    assert allowed([pattern(p) for p in patterns], destination(url)) is admitted


@pytest.mark.parametrize(
    "url",
    [
        "ftp://x/",
        "https://",
        "https://u:p@x/",
        "https://x/#f",
        "https://x:99999/",
        "https://a b/",
        "https://example.com/\x7f",  # a character the sender cannot send
        "https://exämple.com/",  # an internationalized name, not in its xn-- form
        "https://[::1]x/",  # an IPv6 address with something after its bracket
        "https://a_b%41.example/",
    ],
)
def test_urls_that_are_not_destinations(url: str) -> None:
    with pytest.raises(BadDestination):
        destination(url)


@pytest.mark.parametrize(
    "text", ["https//x", "ftp://*", "https://*/path", "https://*:x", "https://"]
)
def test_patterns_that_are_refused(text: str) -> None:
    with pytest.raises(BadDestination):
        pattern(text)


def _ips(*texts: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    return [ipaddress.ip_address(t) for t in texts]


@pytest.mark.parametrize(
    ("url", "addresses", "refused"),
    [
        ("https://hooks.example.com/", ["93.184.216.34"], False),
        ("https://hooks.example.com/", ["127.0.0.1"], True),  # rebound to loopback
        ("https://hooks.example.com/", ["93.184.216.34", "10.0.0.5"], True),  # any of them
        ("https://hooks.example.com/", ["169.254.169.254"], True),  # link-local (metadata)
        ("https://hooks.example.com/", ["192.168.1.1"], True),
        ("https://hooks.example.com/", ["::ffff:127.0.0.1"], True),
        ("https://hooks.example.com/", ["0.0.0.0"], True),
        ("https://hooks.example.com/", ["100.100.100.200"], True),  # shared (CGNAT) range
        ("https://hooks.example.com/", ["100.64.0.1"], True),
        ("https://hooks.example.com/", ["fd00::1"], True),  # unique local
        ("https://hooks.example.com/", ["2606:4700::1"], False),
        ("https://hooks.example.com/", [], True),
        ("http://127.0.0.1:9000/", ["127.0.0.1"], False),  # allowed by its literal
        ("http://localhost:9000/", ["127.0.0.1"], False),  # the literal allows the address
        ("http://127.0.0.2:9000/", ["127.0.0.2"], True),
    ],
)
def test_internal_addresses_need_a_pattern_naming_them(
    url: str, addresses: list[str], refused: bool
) -> None:
    refusal = address_refusal(DEFAULT, destination(url), _ips(*addresses))
    assert (refusal is not None) is refused


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        # IPv4-mapped and NAT64's well-known prefix: judged by the IPv4 address they carry.
        ("::ffff:10.0.0.7", True),
        ("::ffff:93.184.216.34", False),
        ("64:ff9b::a00:7", True),  # 10.0.0.7
        ("64:ff9b::7f00:1", True),  # 127.0.0.1
        ("64:ff9b::a9fe:a9fe", True),  # 169.254.169.254 (instance metadata)
        ("64:ff9b::6440:1", True),  # 100.64.0.1 (shared)
        ("64:ff9b::5db8:d822", False),  # 93.184.216.34, through the network's NAT64
        # Ranges refused whatever they carry (unless named literally).
        ("64:ff9b:1::5db8:d822", True),  # local-use NAT64
        ("64:ff9b:1:a00:7::", True),
        ("2002:a00:7::1", True),  # 6to4 of 10.0.0.7
        ("2002:5db8:d822::1", True),  # 6to4 of a public address
        ("2001:0:5db8:d822::f5ff:fff8", True),  # Teredo
        ("2001:0:a00:7::", True),
        ("::a00:7", True),  # IPv4-compatible
        ("::5db8:d822", True),
        ("::ffff:0:5db8:d822", True),  # IPv4-translated
        ("2606:4700::1111", False),
    ],
)
def test_addresses_that_carry_an_ipv4_address(address: str, refused: bool) -> None:
    """Checked wherever a destination is: at registration (a literal) and at each
    delivery (every address the name resolves to)."""
    dest = destination("https://hooks.example.com/")
    assert (address_refusal(DEFAULT, dest, _ips(address)) is not None) is refused
    named = [*DEFAULT, pattern(f"https://[{address}]")]
    literal = destination(f"https://[{address}]/")
    assert address_refusal(named, literal, _ips(address)) is None  # the operator's choice


def test_what_an_answer_means_and_when_the_next_attempt_is() -> None:
    assert [verdict(c) for c in (200, 204, 299)] == [Verdict.SUCCEEDED] * 3
    assert verdict(410) is Verdict.GONE
    assert [verdict(c) for c in (None, 301, 400, 404, 500)] == [Verdict.RETRY] * 5
    schedule = [5, 300, 1800]
    assert [retry_delay(n, schedule) for n in (1, 2, 3, 4)] == [5, 300, 1800, None]


def test_signatures_are_the_standard_webhooks_ones() -> None:
    secret, msg_id, body = new_secret(), "msg_abc", b'{"type":"run.finished"}'
    now = int(time.time())
    headers = {"webhook-id": msg_id, "webhook-timestamp": str(now)}
    library = Webhook(secret).sign(msg_id, datetime.fromtimestamp(now, tz=UTC), body.decode())
    assert signature(secret, msg_id, now, body) == library
    old = new_secret()
    both = signature_header([secret, old], msg_id, now, body)
    for key in (secret, old):
        assert Webhook(key).verify(body, {**headers, "webhook-signature": both})


def test_the_config_names_a_bad_pattern_by_its_path() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({"webhooks": {"allow": ["https://*", "ftp://x"]}}, builtin_tools=SPECS)
    assert refused.value.path == "webhooks.allow.1"
    defaults = parse_config({}, builtin_tools=SPECS).webhooks
    assert defaults.allow == ["https://*"]
    assert defaults.retry_schedule_s == [5, 300, 1800, 7200, 18000, 36000, 36000]
