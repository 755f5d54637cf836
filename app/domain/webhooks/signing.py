"""Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
keyed with the bytes a `whsec_` secret encodes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"
KEY_BYTES = 32


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signature_header(secrets_: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """`webhook-signature`: one signature per valid secret (the new one first), space
    separated, so a receiver holding either secret verifies during a rotation."""
    return " ".join(signature(s, msg_id, timestamp, body) for s in secrets_)
