"""Process settings from the environment (prefix TOOLGATE_). Built once, passed down."""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.db import urls
from app.db.session import pool_size_for

_PUBLIC_URL = re.compile(r"https?://[^/?#\s]+(?:/[^?#\s]*)?")


def _name_server(text: str) -> bool:
    """An `ip`, `ipv4:port` or `[ipv6]:port` (what c-ares takes as a server)."""
    host, port = text, None
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":") if rest.startswith(":") else ("" if rest else None)
    elif text.count(":") == 1:
        host, port = text.split(":")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return port is None or (port.isdigit() and 0 < int(port) < 65536)


def _instance_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Settings(BaseSettings):
    # Inputs are never repeated in errors: a database URL holds its password.
    model_config = SettingsConfigDict(
        env_prefix="TOOLGATE_", extra="ignore", hide_input_in_errors=True
    )

    #: postgresql://... (taken as postgresql+asyncpg://...); unset: an embedded Postgres
    #: under `data_dir`.
    database_url: SecretStr | None = None
    #: What `database_url` points at. `transaction`: a pooler in transaction mode (PgBouncer's
    #: `pool_mode = transaction`), where a server connection is ours for one transaction
    #: only, so no statement is kept prepared. `none` (a direct connection) and `session` (a
    #: session-mode pooler) keep statements prepared per connection, which saves a round
    #: trip per statement.
    database_pooler: Literal["none", "session", "transaction"] = "none"
    #: A session connection for LISTEN and for migrations (straight to Postgres, or through a
    #: session-mode pooler); unset: `database_url`. Required with a transaction pooler.
    listen_database_url: SecretStr | None = None
    #: YAML config; unset: the demo config shipped in the package.
    config: Path | None = None
    data_dir: Path = Path(".data")
    #: How long a stepper's claim on a run lasts without renewal.
    lease_s: float = Field(default=30.0, gt=0)
    #: How often the driver looks for runs nobody is advancing.
    driver_poll_s: float = Field(default=1.0, gt=0)
    #: Runs one process advances at once.
    max_active_runs: int = Field(default=64, ge=1)
    #: Read-only tool calls one process executes at once.
    tool_concurrency: int = Field(default=8, ge=1)
    #: An MCP server that could not be reached is tried again at most this often (its
    #: tools stay unlisted meanwhile).
    mcp_retry_s: float = Field(default=5.0, gt=0)
    #: Allocations between two collections of the garbage collector's youngest
    #: generation (CPython's default is 700); raised, never lowered, at start-up.
    gc_gen0_threshold: int = Field(default=50_000, ge=700)
    #: Step writes of different runs one statement commits at most (`engine.process.
    #: commit_batcher`, one batch in flight); 1 commits every step alone.
    commit_batch_max: int = Field(default=64, ge=1)
    #: How long a turn whose accepted calls are all read-only waits for their outcomes,
    #: to be committed with them in one write, in milliseconds; past it the turn is
    #: committed alone while they run. 0 commits every turn before its calls run.
    turn_hold_ms: float = Field(default=50.0, ge=0, le=1000)
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    idempotency_ttl_s: int = Field(default=86_400, ge=60)
    #: How long an in-flight Idempotency-Key claim blocks retries; past it a crashed
    #: holder's claim can be taken over. Longer than the longest wait_s (30 s).
    idempotency_lock_s: float = Field(default=60.0, gt=30)
    instance_id: str = Field(default_factory=_instance_id)
    #: Rows one retention purge statement removes (each its own short transaction).
    purge_batch: int = Field(default=5000, ge=1)
    #: Seconds a purge pass spends on one kind of row before leaving the rest to the next.
    purge_pass_s: float = Field(default=20.0, gt=0)
    #: Requests one process serves at once; beyond it, 503 at once (`api.concurrency`).
    http_concurrency: int = Field(default=64, ge=1)
    #: Event streams (Server-Sent Events) one process keeps open at once; beyond it, 429.
    max_streams: int = Field(default=100, ge=1)
    #: Of those, what one tenant may hold; beyond it, 429. Unset: half of max_streams.
    max_streams_per_tenant: int | None = Field(default=None, ge=1)
    #: A quiet event stream sends a `: ping` comment this often, so that proxies and
    #: clients do not take it for a dead one.
    stream_ping_s: float = Field(default=15.0, gt=0)
    #: An event stream reads anyway this often, in case a wake-up was lost with its process.
    stream_poll_s: float = Field(default=5.0, gt=0)
    #: An event stream checks this often that its request's key still holds.
    stream_key_check_s: float = Field(default=15.0, gt=0)
    #: How long a process keeps a key's principal after looking it up (0: never), while
    #: revocations reach it; the bound for a revocation whose notification is lost unseen.
    key_cache_s: float = Field(default=5.0, ge=0, le=300)
    #: Database connections per process; unset: sized from max_active_runs and
    #: http_concurrency (see `db.session.pool_size_for`).
    db_pool_size: int | None = Field(default=None, ge=1)
    #: How long a checkout waits for a free database connection.
    db_pool_timeout_s: float = Field(default=30.0, gt=0)
    #: The service's public base URL (`https://host[/prefix]`), for problem `type` URIs;
    #: unset: they are relative. Never taken from a request's Host header.
    public_url: str | None = None
    #: How often the webhook sender looks for due deliveries when no commit woke it.
    webhook_poll_s: float = Field(default=1.0, gt=0)
    #: Webhook deliveries one process sends at once.
    webhook_concurrency: int = Field(default=64, ge=1)
    #: Webhook deliveries of one endpoint being sent at once, counted over every process:
    #: an endpoint that hangs holds no more of the senders than that.
    webhook_endpoint_concurrency: int = Field(default=4, ge=1)
    #: Webhook deliveries of one tenant being sent at once, counted over every process: a
    #: tenant's slow endpoints hold no more of the senders than that (keep it below
    #: `webhook_concurrency`, so that every process has room for the other tenants).
    webhook_tenant_concurrency: int = Field(default=16, ge=1)
    #: How long resolving a webhook destination's name may take; past it, the attempt is
    #: tried again later and not counted against the delivery (the resolver is ours).
    webhook_resolve_s: float = Field(default=5.0, gt=0)
    #: The name servers webhook destinations are resolved with, `ip` or `ip:port` (an IPv6
    #: address with a port in brackets), comma-separated; unset: the system's
    #: (/etc/resolv.conf).
    webhook_dns_servers: str | None = None
    #: How long a registration or removal of a webhook endpoint waits for the tenant's
    #: event writes in progress before it is answered 503 (to be retried).
    webhook_lock_wait_s: float = Field(default=5.0, gt=0)
    #: Whether this process also runs the driver (`serve --no-driver` turns it off).
    run_driver: bool = True
    #: Whether the driver's background work (its poll, lease upkeep, purges, the listener)
    #: makes database spans too. Off: an idle process would export spans every poll.
    trace_background: bool = False

    @property
    def pool_size(self) -> int:
        if self.db_pool_size is not None:
            return self.db_pool_size
        return pool_size_for(
            max_active_runs=self.max_active_runs, http_concurrency=self.http_concurrency
        )

    @property
    def cache_statements(self) -> bool:
        """Whether database connections keep statements prepared (never through a
        transaction pooler, where the next transaction may get another server connection)."""
        return self.database_pooler != "transaction"

    def session_url(self, database_url: str) -> str:
        """Where LISTEN and migrations connect, given the main URL in force."""
        if self.listen_database_url is not None:
            return self.listen_database_url.get_secret_value()
        return database_url

    @property
    def tenant_stream_share(self) -> int:
        if self.max_streams_per_tenant is not None:
            return min(self.max_streams_per_tenant, self.max_streams)
        return -(-self.max_streams // 2)

    @property
    def connection_limit(self) -> int:
        """uvicorn's `limit_concurrency`, a backstop against a flood of connections only:
        uvicorn counts every open connection (idle keep-alive ones and event streams too)
        and answers past it with a bare 503, not a problem. The bounds that clients meet
        are the request bound and the stream limit, both well inside it."""
        return 2 * (self.http_concurrency + self.max_streams)

    @field_validator("database_url", "listen_database_url")
    @classmethod
    def _asyncpg_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        return SecretStr(urls.normalized(value.get_secret_value()))

    @field_validator("public_url")
    @classmethod
    def _absolute_http_url(cls, value: str | None) -> str | None:
        # Without a scheme and host, `type` would be a relative path nobody resolves.
        if value is not None and not _PUBLIC_URL.fullmatch(value):
            raise ValueError("TOOLGATE_PUBLIC_URL must be http(s)://host[:port][/path]")
        return value

    @field_validator("webhook_dns_servers")
    @classmethod
    def _name_servers(cls, value: str | None) -> str | None:
        if value is not None:
            for server in value.split(","):
                if not _name_server(server.strip()):
                    raise ValueError(
                        "TOOLGATE_WEBHOOK_DNS_SERVERS must be ip or ip:port entries "
                        "([ipv6]:port), comma-separated"
                    )
        return value

    @property
    def webhook_name_servers(self) -> list[str]:
        """`webhook_dns_servers` as a list (empty: the system's)."""
        raw = self.webhook_dns_servers or ""
        return [s.strip() for s in raw.split(",") if s.strip()]

    @model_validator(mode="after")
    def _listen_beside_a_transaction_pooler(self) -> Settings:
        # Through a transaction pooler LISTEN holds no server connection: cancels and kill
        # switches would reach other processes only by polling. Refused rather than slow.
        if self.database_pooler == "transaction" and self.listen_database_url is None:
            raise ValueError(
                "TOOLGATE_DATABASE_POOLER=transaction needs TOOLGATE_LISTEN_DATABASE_URL: "
                "a session connection for LISTEN (straight to Postgres, or a session-mode pooler)"
            )
        return self

    @model_validator(mode="after")
    def _key_outlives_its_lock(self) -> Settings:
        if self.idempotency_ttl_s <= self.idempotency_lock_s:
            raise ValueError("TOOLGATE_IDEMPOTENCY_TTL_S must exceed TOOLGATE_IDEMPOTENCY_LOCK_S")
        return self
