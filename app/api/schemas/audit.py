"""The audit chain as the API shows it (SPEC §3.10)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.domain.audit.chain import Action


class AuditEntryOut(BaseModel):
    seq: int = Field(description="Its place in the tenant's chain, from 1.")
    at: datetime
    actor: str = Field(description="Who: a key's or a person's subject, or the operator.")
    action: str = Field(description=f"What: {', '.join(Action)}.")
    target: str = Field(description="To what: a preview's, key's or webhook's id, a tool.")
    data: dict[str, Any]
    prev_hash: str = Field(description="The previous entry's hash (the first: all zeros).")
    hash: str = Field(description="SHA-256 over `prev_hash` and the entry's canonical JSON.")


class AuditPage(BaseModel):
    items: list[AuditEntryOut]
    next_cursor: str | None
