"""`python -m app ...` against the test database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.radar.radar_tables import technology
from app.db.session import make_sessionmaker
from app.db.tables import api_key
from app.engine.access.keys import authenticate, hash_key
from tests.support.dbserver import fresh_database
from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]


def cli(
    *args: str, env: dict[str, str] | None = None, unset: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**environ, **(env or {})},
        timeout=120,
    )


async def test_keys_create_prints_a_key_once_and_stores_only_its_hash(
    db: AsyncEngine, database_url: str
) -> None:
    result = cli(
        "keys",
        "create",
        "--tenant",
        "acme",
        "--subject",
        "shop",
        "--roles",
        "caller,approver",
        "--scopes",
        "radar:read",
        env={"TOOLGATE_DATABASE_URL": database_url},
    )
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    key = printed["key"]
    assert key.startswith("tg_") and printed["roles"] == ["approver", "caller"]
    async with db.connect() as connection:
        rows = (await connection.execute(select(api_key))).mappings().all()
    assert len(rows) == 1 and rows[0]["key_hash"] == hash_key(key)
    assert key not in json.dumps([dict(r) for r in rows], default=str)
    principal = await authenticate(make_sessionmaker(db), key)
    assert principal is not None and principal.tenant_id == "acme"
    assert principal.scopes == frozenset({"radar:read"})


def test_keys_create_refuses_an_unknown_role(database_url: str) -> None:
    result = cli(
        "keys",
        "create",
        "--tenant",
        "acme",
        "--subject",
        "s",
        "--roles",
        "root",
        env={"TOOLGATE_DATABASE_URL": database_url},
    )
    assert result.returncode == 2 and "roles" in result.stderr


async def test_demo_seed_is_idempotent(db: AsyncEngine, database_url: str) -> None:
    env = {"TOOLGATE_DATABASE_URL": database_url}
    first = cli("demo", "seed", "--tenant", "t1", env=env)
    second = cli("demo", "seed", "--tenant", "t1", env=env)
    assert first.returncode == 0 and second.returncode == 0
    assert json.loads(first.stdout)["added"] >= 5 and json.loads(second.stdout)["added"] == 0
    async with db.connect() as connection:
        count = (
            await connection.execute(
                select(func.count()).select_from(technology).where(technology.c.tenant_id == "t1")
            )
        ).scalar_one()
        rings = dict(
            (
                await connection.execute(
                    select(technology.c.name, technology.c.ring).where(
                        technology.c.tenant_id == "t1"
                    )
                )
            ).all()
        )
    assert count == json.loads(first.stdout)["added"]
    assert rings["PostgreSQL"] == "adopt" and rings["Kafka"] == "trial"
    assert rings["Kubernetes"] == "adopt" and rings["GraphQL"] == "assess"
    assert rings["CORBA"] == "hold"


def test_db_upgrade_is_repeatable(database_url: str) -> None:
    result = cli("db", "upgrade", env={"TOOLGATE_DATABASE_URL": database_url})
    assert result.returncode == 0, result.stderr


def test_openapi_command_prints_json() -> None:
    result = cli("openapi")
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert document["info"]["title"] == "Toolgate" and "/v1/runs" in document["paths"]


async def test_empty_scopes_mean_no_scopes_and_empty_names_are_refused(
    db: AsyncEngine, database_url: str
) -> None:
    env = {"TOOLGATE_DATABASE_URL": database_url}
    result = cli(
        "keys",
        "create",
        "--tenant",
        "acme",
        "--subject",
        "s",
        "--roles",
        "caller",
        "--scopes",
        "",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    principal = await authenticate(make_sessionmaker(db), json.loads(result.stdout)["key"])
    assert principal is not None and principal.scopes == frozenset()
    empty = cli("keys", "create", "--tenant", " ", "--subject", "s", "--roles", "caller", env=env)
    assert empty.returncode == 2 and "--tenant" in empty.stderr


def test_a_bad_setting_names_its_variable() -> None:
    result = cli("openapi", env={"TOOLGATE_LEASE_S": "abc"})
    assert result.returncode == 2
    assert "TOOLGATE_LEASE_S" in result.stderr and "Traceback" not in result.stderr


def test_the_demo_key_is_kept_private_and_renewed_when_it_no_longer_opens_the_database(
    tmp_path: Path, database_url: str
) -> None:
    from pydantic import SecretStr

    from app.cli import _demo_key
    from app.config.settings import Settings

    settings = Settings(database_url=SecretStr(database_url), data_dir=tmp_path)
    key_file = tmp_path / "demo-key.json"
    key_file.write_text(json.dumps({"key": "tg_from_a_database_that_was_reset"}))
    key = _demo_key(settings, key_file)
    assert key != "tg_from_a_database_that_was_reset" and key.startswith("tg_")
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert _demo_key(settings, key_file) == key  # kept while it still opens the database


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        (
            "models:\n  scripted: {provider: scripted}\n"
            "agents:\n  a:\n    model: scripted\n    tools: [search_technologies]\n"
            "    limits: {max_steps: 0}\n",
            ["agents.a.limits.max_steps"],
        ),
        (
            "models:\n  scripted: {provider: scripted}\n"
            "agents:\n  a:\n    model: scripted\n    limits: {context_tokens: 0}\n",
            ["agents.a.limits.context_tokens"],
        ),
        (
            "models:\n  scripted: {provider: scripted}\nquotas: {runs_per_minute: 0}\n",
            ["quotas.runs_per_minute"],
        ),
        (
            "models:\n  scripted: {provider: scripted}\n"
            "agents:\n  a:\n    model: scripted\n"
            "    output_schema: {type: object, required: ring}\n",
            ["agents.a.output_schema", "not a valid JSON Schema"],
        ),
    ],
    ids=["bad-limit", "bad-context-tokens", "bad-quota", "bad-output-schema"],
)
def test_a_refused_config_stops_start_up_naming_the_key_path(
    tmp_path: Path, database_url: str, yaml_text: str, expected: list[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml_text)
    result = cli(
        "serve",
        "--port",
        "1",
        env={"TOOLGATE_CONFIG": str(config), "TOOLGATE_DATABASE_URL": database_url},
    )
    assert result.returncode == 2
    for text in expected:
        assert text in result.stderr
    assert "Traceback" not in result.stderr


def test_a_command_on_the_embedded_postgres_says_nothing_of_a_missing_runtime_dir(
    tmp_path: Path,
) -> None:
    result = cli(
        "db",
        "upgrade",
        env={"TOOLGATE_DATA_DIR": str(tmp_path)},
        unset=("TOOLGATE_DATABASE_URL", "XDG_RUNTIME_DIR"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "database at head"


@pytest.mark.parametrize(
    "url",
    ["not a url", "postgresql://app:s3cret@db:notaport/toolgate", "mysql://app:s3cret@db/toolgate"],
)
def test_an_unusable_database_url_stops_with_its_variable_and_exit_code_2(url: str) -> None:
    result = cli("db", "upgrade", env={"TOOLGATE_DATABASE_URL": url})
    assert result.returncode == 2
    assert result.stderr.startswith("settings error: TOOLGATE_DATABASE_URL: ")
    assert "postgresql://" in result.stderr  # what a usable one looks like
    assert "Traceback" not in result.stderr and "s3cret" not in result.stderr


async def test_a_plain_postgresql_url_is_taken_as_asyncpg_with_libpqs_sslmode(
    db: AsyncEngine, database_url: str
) -> None:
    plain = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    plain += ("&" if "?" in plain else "?") + "sslmode=disable"
    created = ["keys", "create", "--tenant", "acme", "--subject", "s", "--roles", "caller"]
    result = cli(*created, env={"TOOLGATE_DATABASE_URL": plain})
    assert result.returncode == 0, result.stderr
    principal = await authenticate(make_sessionmaker(db), json.loads(result.stdout)["key"])
    assert principal is not None and principal.tenant_id == "acme"


@pytest.mark.parametrize(
    "command",
    [
        ["db", "upgrade"],
        ["keys", "create", "--tenant", "t", "--subject", "s", "--roles", "caller"],
        ["serve", "--port", "1"],
    ],
    ids=lambda c: c[0],
)
def test_a_database_that_does_not_answer_is_said_in_words(command: list[str]) -> None:
    closed = free_port()  # nothing listens there
    url = f"postgresql://app:s3cret@127.0.0.1:{closed}/toolgate"
    result = cli(*command, env={"TOOLGATE_DATABASE_URL": url})
    assert result.returncode == 1
    assert result.stderr.startswith("database error: TOOLGATE_DATABASE_URL: "), result.stderr
    assert f"127.0.0.1:{closed}/toolgate" in result.stderr and "refused" in result.stderr
    assert "Traceback" not in result.stderr and "s3cret" not in result.stderr


def test_a_database_without_the_schema_says_to_upgrade_it_first(
    db_server: tuple[str, str],
) -> None:
    with fresh_database(db_server[1]) as empty:
        env = {"TOOLGATE_DATABASE_URL": empty}
        seeded = cli("demo", "seed", "--tenant", "t", env=env)
        created = cli(
            "keys", "create", "--tenant", "t", "--subject", "s", "--roles", "caller", env=env
        )
    for result in (seeded, created):
        assert result.returncode == 1
        assert result.stderr.startswith("database error: TOOLGATE_DATABASE_URL: ")
        assert "python -m app db upgrade" in result.stderr
        assert "Traceback" not in result.stderr and "SELECT" not in result.stderr
