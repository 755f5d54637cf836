"""Idempotency-Key rules without I/O: key syntax, fingerprints, and the verdicts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.domain.access.idempotency import (
    KeySyntaxError,
    StoredKey,
    Verdict,
    fingerprint,
    judge,
    parse_key,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
PRINT = fingerprint("POST", "/v1/runs", {"a": 1, "b": [1, 2]})


def stored(
    *, done: bool = False, lock_s: float = 60, expires_s: float = 86400, fingerprint_: str = PRINT
) -> StoredKey:
    return StoredKey(
        fingerprint_, done, NOW + timedelta(seconds=lock_s), NOW + timedelta(seconds=expires_s)
    )


def test_quoted_and_bare_keys_are_one_key() -> None:
    assert parse_key('"abc"') == parse_key("abc") == "abc"
    assert parse_key("  abc ") == "abc"


@pytest.mark.parametrize("raw", ["", '""', "x" * 256, "a b", "tab\tkey", "é", '"a"b"'])
def test_malformed_keys(raw: str) -> None:
    with pytest.raises(KeySyntaxError):
        parse_key(raw)


def test_fingerprints_ignore_key_order_and_whitespace_but_not_method_or_path() -> None:
    assert fingerprint("post", "/v1/runs", {"b": [1, 2], "a": 1}) == PRINT
    assert fingerprint("POST", "/v1/other", {"a": 1, "b": [1, 2]}) != PRINT
    assert fingerprint("PUT", "/v1/runs", {"a": 1, "b": [1, 2]}) != PRINT


def test_verdicts() -> None:
    assert judge(stored(done=True), fingerprint=PRINT, now=NOW) is Verdict.REPLAY
    assert judge(stored(fingerprint_="other"), fingerprint=PRINT, now=NOW) is Verdict.REUSED
    assert judge(stored(), fingerprint=PRINT, now=NOW) is Verdict.IN_FLIGHT
    assert judge(stored(lock_s=-1), fingerprint=PRINT, now=NOW) is Verdict.PROCEED
    assert judge(stored(done=True, expires_s=-1), fingerprint=PRINT, now=NOW) is Verdict.EXPIRED


def test_a_live_claim_is_never_expired_away() -> None:
    # Even past retention, a claim whose holder still holds its lock stays in flight.
    live = stored(lock_s=60, expires_s=-1)
    assert judge(live, fingerprint=PRINT, now=NOW) is Verdict.IN_FLIGHT
