"""The committed OpenAPI document, fuzzed against a real server and database with
Schemathesis: every operation, a bounded number of generated requests each (valid and
invalid by the document), and for every answer: no 5xx, a documented status, content type
and headers, a body matching its documented schema; a request the document calls invalid
refused; a request it calls valid accepted, unless the refusal is of something no schema
can say (an opaque token the service gave out, a name from the config)."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance
from sqlalchemy.ext.asyncio import create_async_engine

from app.config.files import DEMO_CONFIG_PATH
from app.db.access import keys as keys_repo
from app.engine.access.keys import hash_key
from app.openapi import openapi_json
from tests.support.dbserver import fresh_database
from tests.support.processes import cli_out, free_port, server, wait_healthy_sync

SCHEMA = schemathesis.openapi.from_dict(json.loads(openapi_json()))

#: Accepted answers to a request the document calls valid: done, or refused for a reason
#: of state (absent, conflicting, expired, over a limit), never of form.
ACCEPTED = {401, 403, 404, 409, 410, 429}
#: What a valid-by-the-document request may still be refused for (`422`, with these
#: `errors[].path`s): opaque tokens the service issues (cursors, event ids) and names that
#: come from the operator's config, which the document does not list (it does not depend
#: on the config, by contract).
OPAQUE = {
    "cursor",
    "after",
    "Last-Event-ID",
    "agent",
    "tools",
    "script",
    "data_policy",
    "scopes",  # a new key's: each must be one some configured tool declares
}
#: Fields the document names for features of a later build: refused by this one, by name.
NOT_YET: set[str] = set()
#: Required under a condition the document states in words: `input`, unless the run
#: continues another (`continue_from`).
CONDITIONAL = {"input"}
#: Refusals of state that answer 422: a key used before for another request.
STATE_422 = {"idempotency-key-reused"}


def _refused_for_state_only(response: Any) -> bool:
    if response.status_code in ACCEPTED or response.status_code < 400:
        return True
    if response.status_code != 422:
        return False
    problem = response.json()
    if problem.get("code") in STATE_422:
        return True
    paths = {str(e.get("path", "")).split(".")[0] for e in problem.get("errors") or []}
    return bool(paths) and paths <= OPAQUE | NOT_YET | CONDITIONAL


@schemathesis.check
def valid_requests_accepted(ctx: Any, response: Any, case: Any) -> bool | None:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if not _refused_for_state_only(response):
        raise AssertionError(
            f"a request valid by the document refused: {response.status_code} {response.text[:500]}"
        )
    return None


ALLOW_EVERY_DESTINATION = """
webhooks:
  allow: ["https://*:*", "http://*:*"]
"""
#: The key the server under test is given (cases are drawn before it starts).
KEY = "tg_" + secrets.token_urlsafe(32)


@SCHEMA.auth()
class BearerKey:
    """The API key, sent as the document's security scheme says: Schemathesis then knows
    the header for what it is, rather than as a parameter it may drop."""

    def get(self, case: Any, context: Any) -> str:
        return KEY

    def set(self, case: Any, data: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


async def _store_key(url: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            await keys_repo.insert_key(
                connection,  # type: ignore[arg-type]
                keys_repo.NewKey(
                    tenant_id="fuzz",
                    id="key_fuzz",
                    key_hash=hash_key(KEY),
                    subject="st",
                    roles=["admin", "approver", "caller"],
                    scopes=None,
                    created_at=datetime.now(UTC),
                    name="fuzz",
                    prefix=KEY[:11],
                ),
            )
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def live(db_server: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own on a database of its own, the demo tenant seeded, and a key
    with every role. Its config is the demo's, with every webhook destination allowed: a
    destination the operator refuses is the config's word, which the document cannot
    carry, so none is refused here and any refused URL is refused for its form."""
    config = tmp_path_factory.mktemp("fuzz") / "config.yaml"
    config.write_text(DEMO_CONFIG_PATH.read_text() + ALLOW_EVERY_DESTINATION)
    with fresh_database(db_server[1]) as url:
        env = {
            "TOOLGATE_DATABASE_URL": url,
            "TOOLGATE_DRIVER_POLL_S": "0.2",
            "TOOLGATE_CONFIG": str(config),
        }
        cli_out(env, "db", "upgrade")
        cli_out(env, "demo", "seed", "--tenant", "fuzz")
        asyncio.run(_store_key(url))
        port = free_port()
        with server(["serve", "--port", str(port)], env):
            base = f"http://127.0.0.1:{port}"
            wait_healthy_sync(base)
            yield base


@SCHEMA.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_every_operation_keeps_the_documented_contract(case: Any, live: str) -> None:
    with requests.Session() as session:
        case.call_and_validate(
            base_url=live,
            session=session,
            excluded_checks=[positive_data_acceptance],
            additional_checks=[valid_requests_accepted],
            timeout=30,
        )
