"""A primary and its standby in one TOOLGATE_DATABASE_URL (docs/runbook.md, "Database
failover"): libpq's form, as operators write it, is taken as the SQLAlchemy asyncpg
dialect's, whose engine tries each host for one that accepts writes; the listener's own
connection gets every host too; the servers are named without user or password; and no
server that accepts writes (yet) is an outage, not a bug."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from asyncpg.exceptions import TargetServerAttributeNotMatched
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import create_async_engine

from app.config.settings import Settings
from app.db import urls
from app.db.errors import is_unavailable
from app.engine.events.listener import asyncpg_dsn

LIBPQ = "postgresql://app:p%40ss@db-a:5432,db-b:6432/tg?target_session_attrs=read-write"
DIALECT = (
    "postgresql+asyncpg://app:p%40ss@/tg?host=db-a:5432&host=db-b:6432"
    "&target_session_attrs=read-write"
)


def used(given: str) -> str:
    return Settings(database_url=given).database_url.get_secret_value()  # type: ignore[union-attr]


def connect_args(url: str) -> dict[str, object]:
    """What the engine hands asyncpg.connect for `url` (nothing is connected)."""
    engine = create_async_engine(url)
    _, kwargs = engine.dialect.create_connect_args(engine.url)
    return kwargs


@pytest.mark.parametrize("given", [LIBPQ, DIALECT])
def test_both_forms_reach_every_host_in_order(given: str) -> None:
    kwargs = connect_args(used(given))
    assert kwargs["host"] == ["db-a", "db-b"] and kwargs["port"] == [5432, 6432]
    assert kwargs["target_session_attrs"] == "read-write"
    assert kwargs["user"] == "app" and kwargs["password"] == "p@ss"
    assert kwargs["database"] == "tg"


def test_a_host_without_a_port_gets_postgres_own() -> None:
    kwargs = connect_args(used("postgres://app@db-a,db-b:6000/tg?sslmode=require"))
    assert kwargs["host"] == ["db-a", "db-b"] and kwargs["port"] == [5432, 6000]
    assert kwargs["ssl"] == "require"  # libpq's sslmode, as everywhere else


@pytest.mark.parametrize(
    "given", [DIALECT, "postgresql+asyncpg://app:p%40ss@/tg?host=db-a,db-b&port=5432,6432"]
)
def test_the_dialects_forms_are_used_as_written(given: str) -> None:
    assert used(given) == given
    assert connect_args(given)["host"] == ["db-a", "db-b"]


@pytest.mark.parametrize(
    ("url", "place"),
    [
        (DIALECT, "db-a:5432,db-b:6432/tg"),
        (
            "postgresql+asyncpg://app:s3cret@/tg?host=db-a,db-b&port=5432,6432",
            "db-a:5432,db-b:6432/tg",
        ),
        ("postgresql+asyncpg://app:s3cret@/tg?host=db-a&port=6432", "db-a:6432/tg"),
    ],
)
def test_several_servers_are_named_by_their_places_alone(url: str, place: str) -> None:
    assert urls.where(url) == place


def test_the_listener_gets_every_host_as_one_list() -> None:
    """asyncpg's DSN parser keeps only the last of repeated parameters: the listener
    would wait on the standby alone."""
    dsn = asyncpg_dsn(used(LIBPQ))
    query = parse_qs(urlsplit(dsn).query)
    assert query["host"] == ["db-a:5432,db-b:6432"]
    assert query["target_session_attrs"] == ["read-write"]
    assert dsn.startswith("postgresql://app:p%40ss@/tg?")


class _DriverError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__("driver error")
        self.sqlstate = sqlstate


def _no_primary_as_sqlalchemy_says_it() -> sa_exc.DBAPIError:
    """How the engine raises asyncpg's refusal: the dialect's InternalClientError, caused
    by it, in an InternalError."""
    adapted = Exception("None of the hosts match the target attribute requirement")
    adapted.__cause__ = TargetServerAttributeNotMatched("None of the hosts match")
    return sa_exc.InternalError(None, None, adapted)


@pytest.mark.parametrize(
    ("exc", "unavailable"),
    [
        # A write met a standby (through a pooler, or before the promotion).
        (sa_exc.DBAPIError("INSERT", None, _DriverError("25006")), True),
        # Every host answers, none accepts writes (yet).
        (TargetServerAttributeNotMatched("None of the hosts match"), True),
        (_no_primary_as_sqlalchemy_says_it(), True),
        (sa_exc.InternalError(None, None, Exception("something else")), False),
        (sa_exc.DBAPIError("INSERT", None, _DriverError("25P02")), False),  # a failed txn
    ],
)
def test_a_failover_is_an_outage_not_a_bug(exc: Exception, unavailable: bool) -> None:
    assert is_unavailable(exc) is unavailable


def test_an_at_and_a_comma_past_the_path_are_no_host_list() -> None:
    """Only what comes before the path can be a host list: an `@` and a comma in the query
    (an application name, say) leave the URL to the engine's parser as written."""
    given = "postgresql+asyncpg://db-a:5432/tg?application_name=x@y,z"
    assert used(given) == given
