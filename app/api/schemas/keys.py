"""Wire schemas of API key management (requests refuse unknown fields)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.api.hygiene import RequestBody
from app.domain.tools.specs import Role

# Printable and not blank: shown in lists and the console as typed.
_KEY_NAME = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"


class CreateKeyIn(RequestBody):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"name": "shop backend", "roles": ["caller"], "scopes": ["radar:read"]}]
        },
    )

    name: str = Field(min_length=1, max_length=100, pattern=_KEY_NAME)
    roles: list[Role] = Field(min_length=1, max_length=3)
    scopes: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        max_length=100,
        description="Each a scope some tool declares (its `permissions`) and the calling "
        "key holds; `[]`: none. Required, so that a key's reach is always chosen (a key "
        "of every scope, also of tools added later, is made with the CLI only).",
    )
    subject: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=_KEY_NAME,
        description="Whom the key stands for in runs, approvals and tool calls (two keys "
        "of one subject are one principal: neither approves the other's runs). "
        "Default: the name.",
    )


class KeyOut(BaseModel):
    id: str
    name: str
    prefix: str | None = Field(
        description="The key's first characters; `null` for keys made before prefixes were kept."
    )
    subject: str
    roles: list[str]
    scopes: list[str] | None = Field(description="`null`: every scope.")
    created_at: datetime
    created_by: str | None = Field(description="The admin who made it; `null`: the CLI.")
    last_used_at: datetime | None = Field(description="At most a minute behind.")
    revoked_at: datetime | None


class KeyPage(BaseModel):
    items: list[KeyOut]
    next_cursor: str | None


class KeyCreatedOut(BaseModel):
    id: str
    key: str | None = Field(
        description="The key, shown in this answer only. `null` in a replay under the same "
        "Idempotency-Key: the key is never stored, so a client that lost the first answer "
        "revokes this key and makes another."
    )
    prefix: str
    name: str
    subject: str
    roles: list[str]
    scopes: list[str] | None = Field(description="`null`: every scope.")
    created_at: datetime
