"""Settings derived from others: the connection backstop handed to uvicorn."""

from __future__ import annotations

from app.settings import Settings


def test_uvicorns_connection_limit_stays_above_every_bound_clients_meet() -> None:
    """uvicorn answers past its limit with a bare 503: the request bound and the stream
    limit together, each at its most, must never reach it."""
    for settings in (Settings(), Settings(http_concurrency=2, max_streams=1)):
        assert settings.connection_limit > settings.http_concurrency + settings.max_streams
