"""Idempotency-Key rules (SPEC §3.6): the key's syntax, the request fingerprint, and what
an existing record means for a new request with the same key."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from app.domain.errors import ToolgateError
from app.domain.tools.specs import canonical_json

MAX_KEY_LENGTH = 255


class KeySyntaxError(ToolgateError, ValueError):
    pass


def parse_key(raw: str) -> str:
    """The key as stored: the IETF draft's quoted form `"abc"` and the bare `abc` are one
    key. 1–255 visible ASCII characters, else KeySyntaxError."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not 1 <= len(value) <= MAX_KEY_LENGTH:
        raise KeySyntaxError("an Idempotency-Key has 1 to 255 characters")
    if any(not 0x21 <= ord(ch) <= 0x7E for ch in value) or '"' in value:
        raise KeySyntaxError("an Idempotency-Key has only visible ASCII characters")
    return value


def fingerprint(method: str, path: str, body: Any) -> str:
    """What makes two requests "the same": method, path and the body as canonical JSON."""
    text = f"{method.upper()} {path}\n{canonical_json(body)}"
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class Verdict(StrEnum):
    PROCEED = "proceed"  # this request holds the claim: run the use case
    REPLAY = "replay"  # answer the stored response again
    REUSED = "reused"  # same key, another request: 422
    IN_FLIGHT = "in_flight"  # the first request is still running: 409
    EXPIRED = "expired"  # past retention: the key is free again


@dataclass(frozen=True)
class StoredKey:
    fingerprint: str
    done: bool
    locked_until: datetime
    expires_at: datetime


def judge(stored: StoredKey, *, fingerprint: str, now: datetime) -> Verdict:
    """What a request meets when its key already has a record. An in-flight claim whose
    holder stopped renewing it (crash) may be taken over once its lock has passed."""
    if stored.expires_at <= now and (stored.done or stored.locked_until <= now):
        return Verdict.EXPIRED
    if stored.fingerprint != fingerprint:
        return Verdict.REUSED
    if stored.done:
        return Verdict.REPLAY
    if stored.locked_until > now:
        return Verdict.IN_FLIGHT
    return Verdict.PROCEED
