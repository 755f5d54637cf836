"""Settings derived from others: a tenant's share of the event streams, and the connection
backstop handed to uvicorn."""

from __future__ import annotations

import pytest

from app.config.settings import Settings


@pytest.mark.parametrize(("max_streams", "share"), [(100, 50), (5, 3), (1, 1)])
def test_a_tenant_may_hold_half_of_the_streams_by_default(max_streams: int, share: int) -> None:
    assert Settings(max_streams=max_streams).tenant_stream_share == share


def test_the_tenant_share_is_read_from_the_environment_and_never_exceeds_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLGATE_MAX_STREAMS", "10")
    monkeypatch.setenv("TOOLGATE_MAX_STREAMS_PER_TENANT", "3")
    assert Settings().tenant_stream_share == 3
    monkeypatch.setenv("TOOLGATE_MAX_STREAMS_PER_TENANT", "30")
    assert Settings().tenant_stream_share == 10


def test_uvicorns_connection_limit_stays_above_every_bound_clients_meet() -> None:
    """uvicorn answers past its limit with a bare 503: the request bound and the stream
    limit together, each at its most, must never reach it."""
    for settings in (Settings(), Settings(http_concurrency=2, max_streams=1)):
        assert settings.connection_limit > settings.http_concurrency + settings.max_streams


def _cadence(settings: Settings) -> tuple[float, float, float]:
    return (settings.stream_ping_s, settings.stream_poll_s, settings.stream_key_check_s)


def test_the_event_streams_cadence_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = ("TOOLGATE_STREAM_PING_S", "TOOLGATE_STREAM_POLL_S", "TOOLGATE_STREAM_KEY_CHECK_S")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    assert _cadence(Settings()) == (15, 5, 15)
    for name, value in zip(names, ("2", "0.5", "1"), strict=True):
        monkeypatch.setenv(name, value)
    assert _cadence(Settings()) == (2, 0.5, 1)


def test_a_transaction_pooler_keeps_no_statements_and_needs_a_session_url_for_listen() -> None:
    direct = Settings(database_url="postgresql+asyncpg://u@db/app")
    assert direct.cache_statements and direct.session_url("main") == "main"
    assert Settings(database_pooler="session").cache_statements
    with pytest.raises(ValueError, match="TOOLGATE_LISTEN_DATABASE_URL"):
        Settings(database_pooler="transaction")
    pooled = Settings(
        database_url="postgresql+asyncpg://u@pgbouncer:6432/app",
        database_pooler="transaction",
        listen_database_url="postgresql+asyncpg://u@db:5432/app",
    )
    assert not pooled.cache_statements
    assert pooled.session_url("main") == "postgresql+asyncpg://u@db:5432/app"
