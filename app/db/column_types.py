"""Column types whose stored form differs from what the service holds."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.postgresql import BYTEA
from sqlalchemy.types import TypeDecorator

from app.domain.tools.specs import SHA256_TAG as _TAG


class Sha256(TypeDecorator[str]):
    """A `sha256:<64 hex digits>` tag, stored as its 32 bytes."""

    impl = BYTEA
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Any) -> bytes | None:
        return None if value is None else stored(value)

    def process_result_value(self, value: bytes | None, dialect: Any) -> str | None:
        return None if value is None else _TAG + bytes(value).hex()


def _digits(tag: str) -> str:
    if not tag.startswith(_TAG) or len(tag) != len(_TAG) + 64:
        raise ValueError("not a sha256: tag")
    return tag[len(_TAG) :]


def stored(tag: str) -> bytes:
    return bytes.fromhex(_digits(tag))


def as_json(tag: str) -> str:
    """The tag as a JSON string that Postgres reads into `bytea` (its hex input form)."""
    return "\\x" + _digits(tag)
