"""TOOLGATE_DATABASE_URL as given and as used: a plain `postgresql://` URL (what managed
Postgres offerings hand out) is taken through asyncpg, libpq's `sslmode` with it, and the
words that name the server never carry the user or password."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.config.settings import Settings
from app.db import urls
from app.engine.events.listener import asyncpg_dsn


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("postgresql://app:pw@db:5432/tg", "postgresql+asyncpg://app:pw@db:5432/tg"),
        ("postgres://app@db/tg", "postgresql+asyncpg://app@db/tg"),
        (
            "postgresql://app:p%40ss@db/tg?sslmode=require",
            "postgresql+asyncpg://app:p%40ss@db/tg?ssl=require",
        ),
        ("postgresql+asyncpg://app:p%40ss@db/tg", "postgresql+asyncpg://app:p%40ss@db/tg"),
    ],
)
def test_a_postgres_url_is_used_through_asyncpg(given: str, used: str) -> None:
    assert Settings(database_url=given).database_url.get_secret_value() == used  # type: ignore[union-attr]


def test_the_listeners_connection_speaks_libpqs_sslmode_again() -> None:
    used = urls.normalized("postgresql://app:pw@db/tg?sslmode=verify-full")
    assert asyncpg_dsn(used) == "postgresql://app:pw@db/tg?sslmode=verify-full"


@pytest.mark.parametrize(
    "given",
    [
        "",
        "db:5432",
        "postgresql://app:s3cret@db:port/tg",
        "mysql://app:s3cret@db/tg",
        # libpq's host lists it cannot use (tests/unit/test_multihost_urls.py)
        "postgresql://app:s3cret@db-a:port,db-b/tg",
        "postgresql://app:s3cret@[::1]:5432,db-b/tg",
        "postgresql://app:s3cret@db-a,,db-b/tg",
        "postgresql://app:s3cret@db-a,db-b/tg?host=db-c",
        "mysql://app:s3cret@db-a,db-b/tg",
    ],
)
def test_anything_else_is_refused_without_repeating_it(given: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(database_url=given)
    [error] = refused.value.errors()
    assert error["loc"] == ("database_url",) and "postgresql://" in error["msg"]
    assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "place"),
    [
        ("postgresql+asyncpg://app:s3cret@db.internal:6432/tg", "db.internal:6432/tg"),
        ("postgresql+asyncpg://app@db/tg", "db:5432/tg"),
        (
            "postgresql+asyncpg://postgres@/tg?host=/srv/pg",
            "the Unix socket in /srv/pg, database tg",
        ),
    ],
)
def test_a_server_is_named_by_its_place_alone(url: str, place: str) -> None:
    assert urls.where(url) == place
