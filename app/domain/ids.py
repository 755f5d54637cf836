"""Opaque ids: a readable prefix and 128 random bits."""

from __future__ import annotations

import hashlib
import secrets


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(16)}"


def operation_id(run_id: str, step: int, call_id: str, preview_id: str | None = None) -> str:
    """Stable per (run, step, call id) and, for a call that needs approval, per preview:
    the same on every attempt of one execution, and a new one for a call re-committed
    under a new preview (its body differs), so one id never travels with two bodies."""
    about = f"{run_id}\x00{step}\x00{call_id}"
    if preview_id is not None:
        about += f"\x00{preview_id}"
    digest = hashlib.sha256(about.encode()).hexdigest()
    return f"op_{digest[:32]}"
