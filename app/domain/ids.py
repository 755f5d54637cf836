"""Opaque ids: a readable prefix and 128 random bits."""

from __future__ import annotations

import hashlib
import secrets


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(16)}"


def operation_id(run_id: str, step: int, call_id: str) -> str:
    """Stable per (run, step, call id): the same on every attempt of one call."""
    digest = hashlib.sha256(f"{run_id}\x00{step}\x00{call_id}".encode()).hexdigest()
    return f"op_{digest[:32]}"
