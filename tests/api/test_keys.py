"""API keys over HTTP (admin): a key made is usable at once with exactly its roles and
scopes and is shown only in its creation answer; lists never show a key or its hash; a
revoked key is refused at once by the process that revoked it and, when its notification
arrives, by every other, which forgets the principal it kept; scopes must be ones the
tools declare; tenants never see each other's keys."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from sqlalchemy import text

from app.engine.access.keys import hash_key
from tests.support.assertions import assert_problem
from tests.support.harness import Harness
from tests.support.statements import counting
from tests.support.waiting import until

KEYS = "/v1/keys"


@pytest.fixture
def h(harness: Harness) -> Harness:
    return harness


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def make(h: Harness, admin: dict[str, str], status: int = 201, **body: Any) -> dict[str, Any]:
    wanted = {"name": "shop backend", "roles": ["caller"], "scopes": ["radar:read"], **body}
    response = await h.client.post(KEYS, headers=admin, json=wanted)
    assert response.status_code == status, response.text
    return response.json()


async def listed(h: Harness, admin: dict[str, str], query: str = "") -> list[dict[str, Any]]:
    response = await h.client.get(KEYS + query, headers=admin)
    assert response.status_code == 200, response.text
    return response.json()["items"]


async def test_a_key_made_over_http_works_at_once_with_its_roles_and_scopes(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    made = await make(h, admin, roles=["caller", "caller"], scopes=["radar:read"])
    assert made["key"].startswith("tg_") and made["prefix"] == made["key"][:11]
    assert made["id"].startswith("key_") and made["name"] == "shop backend"
    assert made["subject"] == "shop backend"  # no subject given: the name
    assert made["roles"] == ["caller"] and made["scopes"] == ["radar:read"]

    me = await h.client.get("/v1/me", headers=bearer(made["key"]))
    assert me.json() == {
        "tenant": "acme",
        "subject": "shop backend",
        "roles": ["caller"],
        "scopes": ["radar:read"],
    }
    body = {"agent": "tech-radar", "input": "x", "script": [{"type": "final", "text": "ok"}]}
    run = await h.client.post("/v1/runs", headers=bearer(made["key"]), json=body)
    assert run.status_code == 201, run.text
    assert sorted(run.json()["tools"]) == ["get_technology", "search_technologies"]
    # Only its roles: not an approver, not an admin.
    approvals = await h.client.get("/v1/approvals", headers=bearer(made["key"]))
    assert_problem(approvals, 403, "forbidden", "/v1/approvals")
    assert_problem(await h.client.get(KEYS, headers=bearer(made["key"])), 403, "forbidden", KEYS)

    named = await make(h, admin, name="alice", subject="alice@example.com", roles=["approver"])
    me = (await h.client.get("/v1/me", headers=bearer(named["key"]))).json()
    assert me["subject"] == "alice@example.com" and me["roles"] == ["approver"]


async def test_the_list_shows_what_a_key_is_but_never_the_key_or_its_hash(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    made = await make(h, admin, scopes=[])
    items = await listed(h, admin)
    assert [i["name"] for i in items] == ["shop backend", "root"]  # newest first
    mine = items[0]
    assert mine == {
        "id": made["id"],
        "name": "shop backend",
        "prefix": made["prefix"],
        "subject": "shop backend",
        "roles": ["caller"],
        "scopes": [],
        "created_at": made["created_at"],
        "created_by": "root",
        "last_used_at": None,
        "revoked_at": None,
    }
    assert items[1]["created_by"] is None  # made with the CLI
    page = await h.client.get(KEYS, headers=admin)
    assert made["key"] not in page.text and hash_key(made["key"]) not in page.text
    assert made["key"][11:20] not in page.text

    first = (await h.client.get(KEYS + "?limit=1", headers=admin)).json()
    assert [i["id"] for i in first["items"]] == [made["id"]]
    rest = await listed(h, admin, f"?limit=1&cursor={first['next_cursor']}")
    assert [i["name"] for i in rest] == ["root"]


async def test_a_revoked_key_is_refused_by_every_process_that_kept_it(harness_factory) -> None:  # type: ignore[no-untyped-def]
    # Kept far longer than the test: only the revocation's notification can end it.
    kept = {"key_cache_s": 300.0}
    a = await harness_factory(settings_override=kept)
    b = await harness_factory(settings_override=kept)
    for h in (a, b):
        await asyncio.wait_for(h.app.state.driver.listener.ready.wait(), 10)
    admin = await a.key(subject="root", roles="admin")
    made = await make(a, admin)
    key = bearer(made["key"])
    for h in (a, b):
        assert (await h.client.get("/v1/me", headers=key)).status_code == 200
        with counting(h.app.state.engine) as seen:
            assert (await h.client.get("/v1/me", headers=key)).status_code == 200
        assert seen.reading("api_key") == []  # its principal was kept: no lookup

    revoked = await b.client.delete(f"{KEYS}/{made['id']}", headers=admin)
    assert revoked.status_code == 204 and revoked.content == b""
    # At once where it was revoked; elsewhere as soon as the notification arrives.
    assert_problem(await b.client.get("/v1/me", headers=key), 401, "unauthenticated", "/v1/me")

    async def refused_by_a() -> bool:
        return (await a.client.get("/v1/me", headers=key)).status_code == 401

    await until(refused_by_a, timeout_s=5, what="the revocation reaching the other process")
    assert_problem(await a.client.get("/v1/me", headers=key), 401, "unauthenticated", "/v1/me")

    # Only keys that still open are listed, unless revoked ones are asked for too.
    assert made["id"] not in [i["id"] for i in await listed(a, admin)]
    [gone] = [i for i in await listed(a, admin, "?revoked=true") if i["id"] == made["id"]]
    assert gone["revoked_at"] is not None
    again = await a.client.delete(f"{KEYS}/{made['id']}", headers=admin)
    assert again.status_code == 204
    [still] = [i for i in await listed(a, admin, "?revoked=true") if i["id"] == made["id"]]
    assert still["revoked_at"] == gone["revoked_at"]  # the first revocation is kept


async def test_an_admin_may_revoke_the_key_it_calls_with(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    [me] = await listed(h, admin)
    assert (await h.client.delete(f"{KEYS}/{me['id']}", headers=admin)).status_code == 204
    assert_problem(await h.client.get(KEYS, headers=admin), 401, "unauthenticated", KEYS)


async def test_only_an_admin_manages_keys(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    made = await make(h, admin)
    other = await h.key(subject="svc", roles="caller,approver")
    path = f"{KEYS}/{made['id']}"
    body = {"name": "x", "roles": ["admin"], "scopes": []}
    assert_problem(await h.client.post(KEYS, headers=other, json=body), 403, "forbidden", KEYS)
    assert_problem(await h.client.get(KEYS, headers=other), 403, "forbidden", KEYS)
    assert_problem(await h.client.delete(path, headers=other), 403, "forbidden", path)
    assert_problem(await h.client.delete(path), 401, "unauthenticated", path)
    assert (await h.client.get("/v1/me", headers=bearer(made["key"]))).status_code == 200


async def test_another_tenants_keys_are_not_found(h: Harness) -> None:
    ours = await h.key(subject="root", roles="admin")
    theirs = await h.key(tenant="globex", subject="boss", roles="admin")
    made = await make(h, ours)
    path = f"{KEYS}/{made['id']}"
    assert_problem(await h.client.delete(path, headers=theirs), 404, "not-found", path)
    assert made["id"] not in [i["id"] for i in await listed(h, theirs, "?revoked=true")]
    assert (await h.client.get("/v1/me", headers=bearer(made["key"]))).status_code == 200
    missing = f"{KEYS}/key_nope"
    assert_problem(await h.client.delete(missing, headers=ours), 404, "not-found", missing)


async def test_scopes_must_be_declared_by_a_tool_and_held_by_the_caller(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    unknown = await h.client.post(
        KEYS, headers=admin, json={"name": "n", "roles": ["caller"], "scopes": ["radar:read", "x"]}
    )
    problem = assert_problem(unknown, 422, "validation-error", KEYS)
    assert problem["errors"] == [
        {"path": "scopes.1", "message": "no registered tool declares this scope"}
    ]
    narrow = await h.key(subject="narrow", roles="admin", scopes=["radar:read"])
    wider = await h.client.post(
        KEYS, headers=narrow, json={"name": "n", "roles": ["caller"], "scopes": ["radar:write"]}
    )
    problem = assert_problem(wider, 422, "validation-error", KEYS)
    assert [e["path"] for e in problem["errors"]] == ["scopes.0"]
    assert len(await listed(h, admin)) == 2  # the two keys made with the CLI only


async def test_a_key_request_is_checked_field_by_field(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    valid = {"name": "n", "roles": ["caller"], "scopes": []}
    for change, path in [
        ({"roles": []}, "roles"),
        ({"roles": ["owner"]}, "roles.0"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "a\nb"}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"scopes": None}, "scopes"),
        ({"key": "tg_mine"}, "key"),
    ]:
        response = await h.client.post(KEYS, headers=admin, json={**valid, **change})
        problem = assert_problem(response, 422, "validation-error", KEYS)
        assert path in [e["path"] for e in problem["errors"]], (change, problem)
    missing = await h.client.post(KEYS, headers=admin, json={"name": "n", "roles": ["caller"]})
    assert "scopes" in [e["path"] for e in missing.json()["errors"]]
    assert len(await listed(h, admin)) == 1


async def test_last_use_is_written_at_most_once_a_minute(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    made = await make(h, admin)

    async def last_used() -> str | None:
        [item] = [i for i in await listed(h, admin) if i["id"] == made["id"]]
        return item["last_used_at"]

    assert await last_used() is None
    await h.client.get("/v1/me", headers=bearer(made["key"]))
    first = await last_used()
    assert first is not None
    await h.client.get("/v1/me", headers=bearer(made["key"]))
    assert await last_used() == first
    h.travel(61)
    await h.client.get("/v1/me", headers=bearer(made["key"]))
    later = await last_used()
    assert later is not None and later > first


async def test_a_replayed_creation_names_the_key_but_never_shows_it_again(h: Harness) -> None:
    admin = await h.key(subject="root", roles="admin")
    idem = {**admin, "Idempotency-Key": uuid.uuid4().hex}
    body = {"name": "shop backend", "roles": ["caller"], "scopes": ["radar:read"]}
    first = await h.client.post(KEYS, headers=idem, json=body)
    assert first.status_code == 201 and first.json()["key"].startswith("tg_")
    replay = await h.client.post(KEYS, headers=idem, json={**body, "roles": ["caller"]})
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == {**first.json(), "key": None}
    reused = await h.client.post(KEYS, headers=idem, json={**body, "name": "other"})
    assert_problem(reused, 422, "idempotency-key-reused", KEYS)
    assert len(await listed(h, admin)) == 2  # root and the one key made

    # The key is nowhere in the database, the Idempotency-Key's record included.
    key = first.json()["key"]
    async with h.runtime.sessions() as session:
        stored = await session.execute(text("SELECT response_body::text FROM idempotency_key"))
        assert all(key not in row[0] for row in stored)

    # A request refused for its body leaves the Idempotency-Key free for a fixed one.
    fresh = {**admin, "Idempotency-Key": uuid.uuid4().hex}
    bad = await h.client.post(KEYS, headers=fresh, json={**body, "scopes": ["nope"]})
    assert_problem(bad, 422, "validation-error", KEYS)
    fixed = await h.client.post(KEYS, headers=fresh, json=body)
    assert fixed.status_code == 201 and fixed.json()["key"].startswith("tg_")


async def test_the_revoking_process_forgets_the_key_before_it_answers(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(settings_override={"key_cache_s": 300.0})
    known, listener = h.runtime.known_keys, h.app.state.driver.listener
    await asyncio.wait_for(listener.ready.wait(), 10)
    admin = await h.key(subject="root", roles="admin")
    made = await make(h, admin)
    key = bearer(made["key"])
    # The process stops hearing notifications, its own revocation's included, yet keeps
    # principals as if it heard them: only the revocation's own forgetting can refuse it.
    await _cut_listening(h)
    await until(lambda: not listener.ready.is_set(), what="the listener noticing its loss")
    known.listen_through(lambda: True)
    assert (await h.client.get("/v1/me", headers=key)).status_code == 200
    assert known.get(hash_key(made["key"])) is not None
    revoked = await h.client.delete(f"{KEYS}/{made['id']}", headers=admin)
    assert revoked.status_code == 204
    assert_problem(await h.client.get("/v1/me", headers=key), 401, "unauthenticated", "/v1/me")


async def _cut_listening(h: Harness) -> None:
    """Ends the listening connections on the test's database (its process's)."""
    async with h.app.state.engine.connect() as connection:
        await connection.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'toolgate-listen' AND datname = current_database()"
            )
        )


async def test_while_revocations_cannot_arrive_every_request_looks_its_key_up(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    # Kept far longer than the test: a lookup is only ever for want of listening.
    h = await harness_factory(settings_override={"key_cache_s": 300.0})
    listener = h.app.state.driver.listener
    await asyncio.wait_for(listener.ready.wait(), 10)
    key = await h.key()
    assert (await h.client.get("/v1/me", headers=key)).status_code == 200
    await _cut_listening(h)
    await until(lambda: not listener.ready.is_set(), what="the listener noticing its loss")
    with counting(h.app.state.engine) as seen:
        for _ in range(2):
            assert (await h.client.get("/v1/me", headers=key)).status_code == 200
    assert len(seen.reading("api_key")) == 2  # nothing kept, nothing used

    # Back (and everything kept before forgotten): kept again from the next lookup on.
    await until(listener.ready.is_set, what="the listener reconnecting")
    with counting(h.app.state.engine) as seen:
        for _ in range(3):
            assert (await h.client.get("/v1/me", headers=key)).status_code == 200
    assert len(seen.reading("api_key")) == 1
