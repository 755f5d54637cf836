"""`python -m app ...`: serve, worker, db upgrade, keys create, demo seed, openapi,
console-schema, eval, replay, audit verify."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging.config
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app import cli_args
from app.config.settings import Settings
from app.domain.errors import ToolgateError
from app.domain.forensics.replay import SCRATCH_PREFIX, is_scratch
from app.observability import logs


def _resolve_database(settings: Settings) -> tuple[Settings, Any]:
    """Starts the embedded Postgres when no URL is set, once, in this (parent) process,
    and exports its URL so worker processes use the same server."""
    if settings.database_url is not None:
        return settings, None
    from pydantic import SecretStr

    from app.db.embedded import start_embedded

    url, server = start_embedded(settings.data_dir)
    os.environ["TOOLGATE_DATABASE_URL"] = url
    return settings.model_copy(update={"database_url": SecretStr(url)}), server


class SchemaBehind(ToolgateError):
    """The database answers, but its schema is not at the newest migration."""


async def _with_engine(  # type: ignore[no-untyped-def]
    settings: Settings, work, *, session: bool = False, migrated: bool = False
) -> Any:
    """`work(engine, sessions)` once the database has answered (else `urls.Unreachable`)
    and, with `migrated`, when its schema is at the newest migration (else SchemaBehind:
    a missing table would otherwise be an error quoting SQL). `session`: on the session
    URL (TOOLGATE_LISTEN_DATABASE_URL when set), not a pooler's."""
    from app.db import migrate, urls
    from app.db.session import make_engine, make_sessionmaker

    url = settings.database_url.get_secret_value()  # type: ignore[union-attr]
    if session:
        engine = make_engine(settings.session_url(url))
    else:
        engine = make_engine(url, cache_statements=settings.cache_statements)
    try:
        await urls.check(engine)
        if migrated:
            async with engine.connect() as connection:
                if await migrate.current_revision(connection) != migrate.head_revision():
                    raise SchemaBehind(
                        f"the database at {urls.where(engine.url)} is not at the newest "
                        "migration: run `python -m app db upgrade` first"
                    )
        return await work(engine, make_sessionmaker(engine))
    finally:
        await engine.dispose()


def _check_database(settings: Settings) -> None:
    """A server process stops at start-up when its database does not answer, saying so;
    an outage later is ridden out (`503`s, runs handed back)."""

    async def nothing(_engine, _sessions) -> None:  # type: ignore[no-untyped-def]
        return None

    asyncio.run(_with_engine(settings, nothing))


def cmd_db_upgrade(settings: Settings, _args: argparse.Namespace) -> int:
    from app.db import migrate

    # On a session connection: a migration's DDL may hold its locks for long, which a
    # pooler's transaction timeouts would cut short.
    asyncio.run(_with_engine(settings, lambda engine, _s: migrate.upgrade(engine), session=True))
    print("database at head", file=sys.stderr)
    return 0


def cmd_db_purge(settings: Settings, args: argparse.Namespace) -> int:
    """Applies the config's `retention` now (or, with --dry-run, counts what would go) and
    prints what it removed as JSON."""
    from app.adapters.clock import SystemClock
    from app.engine.limits import retention
    from app.main import load_app_config

    kept = load_app_config(settings).retention.rules()
    run = retention.Pass(kept, SystemClock().now(), settings.purge_batch, settings.purge_pass_s)
    act = retention.count if args.dry_run else retention.purge
    done = asyncio.run(_with_engine(settings, lambda _e, s: act(s, run), migrated=True))
    print(json.dumps({"dry_run": args.dry_run, **done.as_dict()}))
    return 0


def cmd_keys_create(settings: Settings, args: argparse.Namespace) -> int:
    from app.adapters.clock import SystemClock
    from app.engine.access.keys import create_key

    roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    # --scopes "" means no scopes at all; leaving it out means every scope.
    scopes = (
        None if args.scopes is None else [s.strip() for s in args.scopes.split(",") if s.strip()]
    )
    if not args.tenant.strip() or not args.subject.strip():
        print("error: --tenant and --subject must not be empty", file=sys.stderr)
        return 2
    if is_scratch(args.tenant):
        print(f"error: tenants named {SCRATCH_PREFIX}… are a replay's", file=sys.stderr)
        return 2
    if args.name is not None and not (args.name.strip() and len(args.name) <= 100):
        print("error: --name must be 1-100 characters, not blank", file=sys.stderr)
        return 2

    async def work(_engine, sessions):  # type: ignore[no-untyped-def]
        return await create_key(
            sessions,
            SystemClock(),
            tenant_id=args.tenant,
            subject=args.subject,
            roles=roles,
            scopes=scopes,
            name=args.name,
        )

    try:
        key_id, key = asyncio.run(_with_engine(settings, work, migrated=True))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        json.dumps(
            {
                "id": key_id,
                "key": key,
                "name": args.name or args.subject,
                "tenant": args.tenant,
                "subject": args.subject,
                "roles": sorted(set(roles)),
                "scopes": scopes,
            }
        )
    )
    return 0


def cmd_demo_seed(settings: Settings, args: argparse.Namespace) -> int:
    from app.adapters.clock import SystemClock
    from app.adapters.tools.builtin.demo_data import seed

    async def work(_engine, sessions):  # type: ignore[no-untyped-def]
        async with sessions.begin() as session:
            return await seed(session, tenant_id=args.tenant, now=SystemClock().now())

    added = asyncio.run(_with_engine(settings, work, migrated=True))
    print(json.dumps({"tenant": args.tenant, "added": added}))
    return 0


def cmd_eval(settings: Settings, args: argparse.Namespace) -> int:
    from app.evaluation import DatasetError, run_cli

    _check_database(settings)
    try:
        return run_cli(settings, Path(args.dataset), args.route, args.trials, args.out)
    except DatasetError as exc:
        print(f"eval error: {exc}", file=sys.stderr)
        return 2


def cmd_replay(settings: Settings, args: argparse.Namespace) -> int:
    from app import replay_cli

    async def nothing(_engine, _sessions) -> None:  # type: ignore[no-untyped-def]
        return None

    # An unreachable or unmigrated database is said here, before the service is built.
    asyncio.run(_with_engine(settings, nothing, migrated=True))
    return replay_cli.run_cli(settings, args.run_id, args.tenant, args.side_effects)


def cmd_audit_verify(settings: Settings, args: argparse.Namespace) -> int:
    from app.audit_cli import report
    from app.engine.audit.trail import verify_chains

    async def work(_engine, sessions):  # type: ignore[no-untyped-def]
        return await verify_chains(sessions, args.tenant)

    return report(asyncio.run(_with_engine(settings, work, migrated=True)), args.tenant)


def cmd_openapi(_settings: Settings, _args: argparse.Namespace) -> int:
    from app.openapi import openapi_json

    sys.stdout.write(openapi_json())
    return 0


def cmd_console_schema(_settings: Settings, _args: argparse.Namespace) -> int:
    from app.console_schema import console_module
    from app.openapi import openapi_json

    sys.stdout.write(console_module(json.loads(openapi_json())))
    return 0


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    if args.no_driver:
        os.environ["TOOLGATE_RUN_DRIVER"] = "false"
    settings, server = _resolve_database(settings)
    from app.main import load_app_config

    # A bad config or OTEL_* setting stops start-up here, saying what is wrong.
    from app.observability.otel_setup import check_env, check_workers

    load_app_config(settings)
    check_env()
    check_workers(args.workers)
    _check_database(settings)
    # uvicorn re-raises the signal that stopped it; exiting through SystemExit instead
    # lets the embedded Postgres (if any) stop with us.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    uvicorn.run(
        "app.main:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_config=logs.config(),
        limit_concurrency=settings.connection_limit,
        # Past this, requests still open at shutdown are cut (a commit or create waits at
        # most 30 s; event streams end at once on the signal).
        timeout_graceful_shutdown=35,
    )
    del server
    return 0


def cmd_worker(settings: Settings, _args: argparse.Namespace) -> int:
    logging.config.dictConfig(logs.config())
    settings, server = _resolve_database(settings)
    _check_database(settings)

    async def work() -> None:
        from app.main import create_app, load_app_config, telemetry_from_env

        config = load_app_config(settings)
        telemetry = telemetry_from_env(config)
        if telemetry.scrape is not None:
            # The runs a worker advances are counted here, and nothing serves them.
            logging.getLogger("app.cli").warning(
                "OTEL_METRICS_EXPORTER=prometheus: a worker serves no /metrics; "
                "export its metrics with otlp"
            )
        app = create_app(settings, config=config, run_driver=True, telemetry=telemetry)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with app.router.lifespan_context(app):
            print("worker: driving runs", file=sys.stderr)
            await stop.wait()

    asyncio.run(work())
    del server
    return 0


def _demo_key(settings: Settings, key_file: Path) -> str:
    """The demo key kept under the data folder, made anew when that file is missing or its
    key does not open this database (a reset or another database)."""
    from app.adapters.clock import SystemClock
    from app.engine.access.keys import authenticate, create_key

    kept = json.loads(key_file.read_text())["key"] if key_file.exists() else None

    async def work(_engine, sessions):  # type: ignore[no-untyped-def]
        if kept is not None and await authenticate(sessions, kept) is not None:
            return kept
        _, key = await create_key(
            sessions,
            SystemClock(),
            tenant_id="demo",
            subject="demo-user",
            roles=["caller", "approver", "admin"],
            scopes=None,
        )
        return key

    key = asyncio.run(_with_engine(settings, work))
    key_file.parent.mkdir(parents=True, exist_ok=True)
    # Written private from the start (never readable by others, not even for a moment),
    # then moved into place.
    partial = key_file.with_suffix(".tmp")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({"tenant": "demo", "subject": "demo-user", "key": key}, out)
    os.replace(partial, key_file)
    return key


def cmd_quickstart(settings: Settings, args: argparse.Namespace) -> int:
    """What `make run` does: database (embedded if unset), migrations, demo data, a demo
    key created once (kept under the data folder), then serve."""
    settings, server = _resolve_database(settings)
    cmd_db_upgrade(settings, args)
    args.tenant = "demo"
    cmd_demo_seed(settings, args)
    key_file = settings.data_dir / "demo-key.json"
    key = _demo_key(settings, key_file)
    print(
        f"\n  Demo tenant 'demo' is ready. API key (kept in {key_file}):\n\n    {key}\n",
        file=sys.stderr,
    )
    args.no_driver = False
    cmd_serve(settings, args)
    del server
    return 0


COMMANDS: dict[str, cli_args.Command] = {
    "serve": cmd_serve,
    "quickstart": cmd_quickstart,
    "worker": cmd_worker,
    "db upgrade": cmd_db_upgrade,
    "db purge": cmd_db_purge,
    "keys create": cmd_keys_create,
    "demo seed": cmd_demo_seed,
    "openapi": cmd_openapi,
    "console-schema": cmd_console_schema,
    "eval": cmd_eval,
    "replay": cmd_replay,
    "audit verify": cmd_audit_verify,
}


def parser() -> argparse.ArgumentParser:
    return cli_args.build(COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:  # name the variable, no traceback
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            name = f"TOOLGATE_{where.upper()}" if error["loc"] else where
            message = error["msg"].removeprefix("Value error, ")
            print(f"settings error: {name}: {message}", file=sys.stderr)
        return 2
    if args.command not in ("openapi", "console-schema", "serve", "quickstart", "worker"):
        settings, server = _resolve_database(settings)
    try:
        return int(args.func(settings, args))
    except Exception as exc:  # a config error and the like: say it, no traceback
        said = _said(exc)
        if said is None:
            raise
        message, code = said
        print(message, file=sys.stderr)
        return code


def _said(exc: Exception) -> tuple[str, int] | None:
    """What to print for an error an operator can fix, and the exit code; None: a bug."""
    from app.config.files import ConfigError
    from app.db import urls
    from app.observability.otel_setup import TelemetryConfigError

    if isinstance(exc, ConfigError | TelemetryConfigError):
        return f"config error: {exc}", 2
    if isinstance(exc, urls.Unreachable | SchemaBehind):
        return f"database error: TOOLGATE_DATABASE_URL: {exc}", 1
    return None
