"""The application factory. `create_app(settings)` builds everything; the lifespan owns the
database engine, the runtime (config, tools, model routes) and the driver."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import signal
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from types import FrameType

import httpx
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app import openapi
from app.adapters.clock import SystemClock
from app.adapters.model.lazy import OnFirstCall
from app.adapters.model.scripted import ScriptedModel
from app.adapters.model.sdk import key_env_of
from app.adapters.tools.builtin.tech_radar import SPECS, radar_tools
from app.adapters.webhooks.dns import Resolver
from app.adapters.webhooks.http import WebhookClient
from app.api import errors
from app.api.concurrency import ConcurrencyLimitMiddleware
from app.api.event_stream import Streams
from app.api.fast_json import FastJSONResponse
from app.api.middleware import TraceAndErrorsMiddleware
from app.api.routes import (
    approvals,
    audit,
    catalog,
    console,
    docs,
    events,
    health,
    keys,
    problems,
    runs,
    sso,
    webhooks,
)
from app.api.routes import metrics as scrape_route
from app.config.files import (
    DEMO_CONFIG_PATH,
    AppConfig,
    ModelRouteConfig,
    load_config,
)
from app.config.settings import Settings
from app.db.clock import DbTime
from app.db.session import make_engine, make_sessionmaker
from app.domain.ports import Clock, ModelProvider, Tool
from app.engine.access.oidc import OidcVerifier
from app.engine.driver import Driver
from app.engine.lifecycle.delegation import Delegation
from app.engine.process.runtime import Runtime
from app.engine.tools.pinned_config import Versions
from app.engine.webhooks.sender import WebhookSender
from app.observability import telemetry as tracing
from app.observability.metrics import Metrics
from app.observability.otel_setup import Telemetry
from app.operator_tools import Outside, operator_tools, outside, rebuilder

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
ToolFactory = Callable[[async_sessionmaker[AsyncSession], Clock], Mapping[str, Tool]]

DESCRIPTION = """Toolgate runs agents whose model only proposes: every proposal goes through a
persisted state machine that validates, authorizes, executes under a deadline and budgets,
and records everything. Errors are RFC 9457 problem documents; see `/problems/{slug}`.

**Getting a key.** Every `/v1` operation needs an API key, sent as
`Authorization: Bearer tg_…` (in this page: **Authorize**, top right). A key belongs to one
tenant and holds roles (`caller`, `approver`, `admin`) and scopes.

- `make run` creates a demo key for the tenant `demo` with every role, prints it, and keeps
  it in `.data/demo-key.json`.
- On the server's machine: `python -m app keys create --tenant acme --subject ops
  --roles admin` prints a new key once (the first admin key of a tenant comes from here).
- An admin key makes more over HTTP: `POST /v1/keys` (below); the key is shown once.

`GET /v1/me` tells a key its tenant, subject, roles and scopes.

**The console.** Approvers review, approve and commit previews, follow runs live and switch
tools off in the console at [`/console`](/console) (sign in with a key).

The repository's `docs/api.md` walks through every operation with `curl`;
`docs/config.md` lists every setting."""


def load_app_config(settings: Settings) -> AppConfig:
    return load_config(settings.config or DEMO_CONFIG_PATH, builtin_tools=SPECS)


def _openai(route: ModelRouteConfig, client: httpx.AsyncClient) -> ModelProvider:
    from app.adapters.model.openai import OpenAIModel

    return OpenAIModel(route, client)


def _anthropic(route: ModelRouteConfig, client: httpx.AsyncClient) -> ModelProvider:
    from app.adapters.model.anthropic import AnthropicModel

    return AnthropicModel(route, client)


# Imported on a route's first call (`OnFirstCall`): each SDK brings tens of MB of models.
_PROVIDERS = {"openai": _openai, "anthropic": _anthropic}


def _models(config: AppConfig, client: httpx.AsyncClient) -> dict[str, ModelProvider]:
    # The config loader refuses every provider this build cannot run.
    models: dict[str, ModelProvider] = {}
    for name, route in config.models.items():
        if route.provider == "scripted":
            models[name] = ScriptedModel()
        elif route.provider in _PROVIDERS:
            models[name] = OnFirstCall(functools.partial(_PROVIDERS[route.provider], route, client))
    return models


def database_url(settings: Settings) -> str:
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    from app.db.embedded import start_embedded

    url, _server = start_embedded(settings.data_dir)
    return url


def create_app(
    settings: Settings | None = None,
    *,
    config: AppConfig | None = None,
    clock: Clock | None = None,
    tools: ToolFactory | None = None,
    run_driver: bool | None = None,
    db_time: DbTime | None = None,
    telemetry: Telemetry | None = None,
    models: Mapping[str, ModelProvider] | None = None,
) -> FastAPI:
    """`models`: providers that take the place of the config's routes of those names (a
    test's model that answers when the test says)."""
    settings = settings or Settings()
    config = config or load_app_config(settings)
    clock = clock or SystemClock()
    otel = telemetry or Telemetry()

    lifespan = _lifespan(settings, config, clock, tools, run_driver, db_time, otel, models or {})
    # /docs and /redoc are served from vendored assets (routes/docs.py), not from a CDN.
    app = FastAPI(
        title="Toolgate",
        # Answers of routes that return data (not a Response of their own), by orjson.
        default_response_class=FastJSONResponse,
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        # Short operation ids (`create_run`), which generated clients name their calls by.
        generate_unique_id_function=lambda route: route.name,
        # Starlette's redirect of `/v1/runs/` to `/v1/runs` is an absolute URL made from
        # the Host header, which the client chooses: such a path is simply not found.
        redirect_slashes=False,
    )
    _install(app, settings)
    if otel.scrape is not None:
        scrape_route.install(app, otel.scrape)
    openapi.install(app)
    otel.instrument_app(app)
    return app


def _tune_gc(settings: Settings) -> None:
    """A step makes thousands of short-lived containers, almost none of them in a cycle:
    at CPython's default (a collection every 700) the collector took an eighth of a step's
    CPU (docs/performance.md)."""
    gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(max(gen0, settings.gc_gen0_threshold), gen1, gen2)


def _lifespan(
    settings: Settings,
    config: AppConfig,
    clock: Clock,
    tools: ToolFactory | None,
    run_driver: bool | None,
    db_time: DbTime | None,
    otel: Telemetry,
    models: Mapping[str, ModelProvider],
) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifespan: the engine, the HTTP client, the runtime, the driver and the
    streams, made at start-up and closed at shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        _tune_gc(settings)
        url = database_url(settings)
        engine = make_engine(
            url,
            # One more, which the commit batcher holds (`engine.process.commit_batcher`).
            pool_size=settings.pool_size + 1,
            pool_timeout_s=settings.db_pool_timeout_s,
            cache_statements=settings.cache_statements,
        )
        otel.instrument_engine(engine)
        out = outside(settings, config, clock)
        otel.instrument_client(out.http)
        runtime, delegation = _runtime(
            settings, config, clock, tools, db_time, otel, engine, out, models
        )
        # Webhooks have their own client (adapters.webhooks.http): no proxies, pinned addresses.
        webhooks = WebhookSender(
            runtime,
            WebhookClient(settings.webhook_concurrency),
            Resolver(timeout_s=settings.webhook_resolve_s, servers=settings.webhook_name_servers),
        )
        # LISTEN needs a session of its own, which a transaction pooler does not give.
        driver = Driver(runtime, listen_url=settings.session_url(url), webhooks=webhooks)
        delegation.attach(runtime, driver)  # agent tools run their children with these
        streams = _streams(settings, runtime)
        app.state.engine, app.state.runtime = engine, runtime
        app.state.driver, app.state.streams = driver, streams
        restore_signals = close_on_exit_signals(streams.close_all)
        # Lease upkeep and cancel delivery run in every process that may hold a run; only
        # the poller (claiming runs nobody advances) is optional.
        driver.start(poll=settings.run_driver if run_driver is None else run_driver)
        if driver.listener is not None and not await driver.listener.first_connection():
            log.warning("serving before notifications are heard; they are read again later")
        try:
            yield
        finally:
            restore_signals()
            streams.close_all()
            await driver.stop()
            await runtime.commits.close()
            await out.close()
            await engine.dispose()
            otel.shutdown()

    return lifespan


def _streams(settings: Settings, runtime: Runtime) -> Streams:
    return Streams(
        runtime.events,
        settings.max_streams,
        settings.tenant_stream_share,
        ping_s=settings.stream_ping_s,
        poll_s=settings.stream_poll_s,
        key_check_s=settings.stream_key_check_s,
    )


def _runtime(
    settings: Settings,
    config: AppConfig,
    clock: Clock,
    tools: ToolFactory | None,
    db_time: DbTime | None,
    otel: Telemetry,
    engine: AsyncEngine,
    out: Outside,
    models: Mapping[str, ModelProvider],
) -> tuple[Runtime, Delegation]:
    """What the use cases run with, on `engine` (see `Runtime` for its three handles),
    and the delegation its agent tools run children with (attached to the driver later)."""
    sessions = make_sessionmaker(engine)
    single = engine.execution_options(isolation_level="AUTOCOMMIT")
    reads = make_sessionmaker(single)
    # The built-in tools only read: each of their statements stands alone.
    registry = dict((tools or radar_tools)(reads, clock))
    delegation = Delegation()
    registry.update(operator_tools(config, out, delegation))

    runtime = Runtime(
        sessions=sessions,
        clock=clock,
        settings=settings,
        config=config,
        tools=registry,
        models={**_models(config, out.http), **models},
        db_time=db_time or DbTime(),
        tracer=tracing.tracer(otel.tracer_provider),
        metrics=Metrics(otel.meter_provider),
        capture=otel.capture,
        single=single,
        reads=reads,
        versions=Versions(config, registry, rebuilder(out, delegation)),
        mcp_declarations=out.declarations,
        oidc=_verifier(config, out.http, clock),
    )
    out.declarations.attach(runtime)
    return runtime, delegation


def _verifier(config: AppConfig, http: httpx.AsyncClient, clock: Clock) -> OidcVerifier | None:
    oidc = config.auth.oidc
    return None if oidc is None else OidcVerifier(oidc, http, clock.monotonic)


def _install(app: FastAPI, settings: Settings) -> None:
    """Problems, routes, the docs' assets and the middleware."""
    errors.install(app)
    for router in (
        runs,
        approvals,
        events,
        catalog,
        keys,
        webhooks,
        audit,
        health,
        problems,
        docs,
        sso,  # before the console's catch-all `/console/{path}`
        console,
    ):
        app.include_router(router.router)
    # Only the docs' vendored assets: the console's are served with its policy (console.py).
    app.mount("/static/vendor", StaticFiles(directory=STATIC / "vendor"), name="vendor")
    # Inside the trace middleware: a refusal carries the request's trace id.
    app.add_middleware(ConcurrencyLimitMiddleware, limit=settings.http_concurrency)
    app.add_middleware(TraceAndErrorsMiddleware)


def close_on_exit_signals(close: Callable[[], None]) -> Callable[[], None]:
    """Makes SIGINT and SIGTERM also call `close` (then do what they did: uvicorn's
    graceful shutdown). uvicorn waits for open responses before the lifespan ends, so
    endless responses such as event streams must hear of the shutdown from the signal.
    Returns what puts the previous handlers back. Off the main thread, where signals
    cannot be handled, it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(close)
        before = previous[signal.Signals(signum)]
        if callable(before):
            before(signum, frame)
        elif before == signal.SIG_DFL:
            signal.signal(signum, before)
            signal.raise_signal(signum)

    for sig in previous:
        signal.signal(sig, handler)

    def restore() -> None:
        if threading.current_thread() is threading.main_thread():
            for sig, before in previous.items():
                if signal.getsignal(sig) is handler:
                    signal.signal(sig, before)

    return restore


def telemetry_from_env(config: AppConfig) -> Telemetry:
    """Telemetry as the `OTEL_*` variables ask (off unless they do); the model routes' API
    keys are never recorded, even with content capture on."""
    keys = [env for route in config.models.values() if (env := key_env_of(route))]
    return Telemetry.from_env(secret_envs=keys)


def app_from_env() -> FastAPI:
    """For `uvicorn --factory app.main:app_from_env` (one app per worker process)."""
    settings = Settings()
    config = load_app_config(settings)
    return create_app(settings, config=config, telemetry=telemetry_from_env(config))
