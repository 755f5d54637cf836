"""Webhook endpoints over HTTP (SPEC §3.8): admins only, per tenant (another tenant's
endpoint is 404), the allowlist and the event types checked at registration (422 naming
the field), the secret in the creation and rotation answers only (a replayed creation
answers it as null; a replayed rotation answers the same secret, read again from the
endpoint while that rotation is its latest: the key's record, kept in the rotation's own
transaction, holds no copy of it), and paging (newest first)."""

from __future__ import annotations

import logging
import secrets

import httpx
import pytest
from sqlalchemy import text

from app.api.routes.webhooks import rotation_answer
from app.domain.access.idempotency import fingerprint
from app.domain.lifecycle.events import EventType
from app.domain.tools.specs import Principal
from app.engine.access import idempotency
from app.engine.webhooks import endpoints as webhooks
from tests.support.assertions import assert_problem as problem_at
from tests.support.harness import Harness, make_config
from tests.support.webhook_receiver import ADMIN

URL = "https://hooks.example.com/toolgate"
EVENTS = [EventType.RUN_FINISHED, EventType.CALL_AWAITING_APPROVAL]


async def _app(harness_factory) -> Harness:  # type: ignore[no-untyped-def]
    return await harness_factory(config=make_config(webhooks={"allow": ["https://*"]}))


async def _create(h: Harness, headers: dict[str, str], **body: object) -> httpx.Response:
    return await h.client.post(
        "/v1/webhooks", headers=headers, json={"url": URL, "events": EVENTS, **body}
    )


def assert_problem(response: httpx.Response, status: int, slug: str) -> None:
    problem_at(response, status, slug, response.request.url.path)


async def test_an_admin_registers_lists_rotates_and_deletes_an_endpoint(harness_factory) -> None:
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    created = await _create(h, admin)
    assert created.status_code == 201, created.text
    hook = created.json()
    assert created.headers["location"] == f"/v1/webhooks/{hook['id']}"
    assert hook["secret"].startswith("whsec_") and hook["created_by"] == "ops"
    assert hook["url"] == URL and sorted(hook["events"]) == sorted(EVENTS)

    listed = (await h.client.get("/v1/webhooks", headers=admin)).json()
    assert [i["id"] for i in listed["items"]] == [hook["id"]]
    assert "secret" not in listed["items"][0]

    rotated = await h.client.post(f"/v1/webhooks/{hook['id']}/rotate", headers=admin)
    assert rotated.status_code == 200
    assert rotated.json()["secret"] not in (None, hook["secret"])

    deleted = await h.client.delete(f"/v1/webhooks/{hook['id']}", headers=admin)
    assert deleted.status_code == 204
    assert (await h.client.get("/v1/webhooks", headers=admin)).json()["items"] == []
    again = await h.client.delete(f"/v1/webhooks/{hook['id']}", headers=admin)
    assert_problem(again, 404, "not-found")


async def test_only_admins_manage_webhooks(harness_factory) -> None:
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN)
    hook = (await _create(h, admin)).json()
    other = await h.key(roles="caller,approver")
    for response in [
        await _create(h, other),
        await h.client.get("/v1/webhooks", headers=other),
        await h.client.delete(f"/v1/webhooks/{hook['id']}", headers=other),
        await h.client.post(f"/v1/webhooks/{hook['id']}/rotate", headers=other),
        await h.client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=other),
    ]:
        assert_problem(response, 403, "forbidden")


async def test_another_tenants_endpoint_is_not_found(harness_factory) -> None:
    h = await _app(harness_factory)
    hook = (await _create(h, await h.key(roles=ADMIN))).json()
    stranger = await h.key(tenant="globex", roles=ADMIN)
    assert (await h.client.get("/v1/webhooks", headers=stranger)).json()["items"] == []
    for response in [
        await h.client.delete(f"/v1/webhooks/{hook['id']}", headers=stranger),
        await h.client.post(f"/v1/webhooks/{hook['id']}/rotate", headers=stranger),
        await h.client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=stranger),
    ]:
        assert_problem(response, 404, "not-found")


async def test_a_url_outside_the_allowlist_or_an_unknown_event_type_is_422(
    harness_factory,
) -> None:
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN)
    cases = {
        "url": [
            "http://hooks.example.com/x",  # not https
            "https://hooks.example.com:8443/x",  # a pattern without a port: 443 only
            "https://user:pw@hooks.example.com/x",
            "ftp://hooks.example.com/x",
            "https://",
        ],
        "events.1": ["run.exploded"],
    }
    for field, values in cases.items():
        for value in values:
            body = {"url": value} if field == "url" else {"events": [EVENTS[0], value]}
            response = await _create(h, admin, **body)
            assert_problem(response, 422, "validation-error")
            assert [e["path"] for e in response.json()["errors"]] == [field], value
    assert_problem(await _create(h, admin, events=[]), 422, "validation-error")


async def test_a_replayed_creation_answers_the_same_endpoint_without_its_secret(
    harness_factory,
) -> None:
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN)
    keyed = {**admin, "Idempotency-Key": secrets.token_hex(8)}
    first = await _create(h, keyed)
    replay = await _create(h, keyed)
    assert first.status_code == replay.status_code == 201
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == {**first.json(), "secret": None}
    assert len((await h.client.get("/v1/webhooks", headers=admin)).json()["items"]) == 1


async def test_endpoints_are_paged_newest_first_and_deliveries_paged(harness_factory) -> None:
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN)
    made = [(await _create(h, admin)).json()["id"] for _ in range(3)]
    seen: list[str] = []
    url = "/v1/webhooks?limit=2"
    while url:
        page = (await h.client.get(url, headers=admin)).json()
        seen += [i["id"] for i in page["items"]]
        url = page["next_cursor"] and f"/v1/webhooks?limit=2&cursor={page['next_cursor']}"
    assert seen == made[::-1]  # newest first, as keys, approvals and runs are listed
    forged = await h.client.get("/v1/webhooks?cursor=bm9wZQ", headers=admin)
    assert_problem(forged, 422, "validation-error")
    empty = await h.client.get(f"/v1/webhooks/{made[0]}/deliveries", headers=admin)
    assert empty.json() == {"items": [], "next_cursor": None}


async def test_a_second_rotation_waits_for_the_first_ones_grace(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """Rotating again within 24 h would drop the secret receivers may still verify with."""
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    hook = (await _create(h, admin)).json()
    rotate = f"/v1/webhooks/{hook['id']}/rotate"
    assert (await h.client.post(rotate, headers=admin)).status_code == 200

    assert_problem(await h.client.post(rotate, headers=admin), 409, "invalid-state")
    h.travel(24 * 3600 + 1)
    again = await h.client.post(rotate, headers=admin)
    assert again.status_code == 200 and again.json()["secret"].startswith("whsec_")


async def test_a_creation_and_its_key_are_one_transaction(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """The key's record names the endpoint it made: a retry finds that one."""
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    keyed = {**admin, "Idempotency-Key": "hook-once"}
    made = await h.client.post("/v1/webhooks", headers=keyed, json={"url": URL, "events": EVENTS})
    assert made.status_code == 201
    async with h.runtime.sessions() as session:
        bound = await session.execute(
            text("SELECT resource_id FROM idempotency_key WHERE key = 'hook-once'")
        )
        assert bound.scalar_one() == made.json()["id"]
    again = await h.client.post("/v1/webhooks", headers=keyed, json={"url": URL, "events": EVENTS})
    assert again.status_code == 201 and again.json()["id"] == made.json()["id"]
    assert again.json()["secret"] is None
    listed = (await h.client.get("/v1/webhooks", headers=admin)).json()["items"]
    assert [i["id"] for i in listed] == [made.json()["id"]]


async def test_a_retried_rotation_answers_the_same_secret_and_rotates_once(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """The first answer was lost on the way: the retry with its key gets the secret,
    neither `null` nor `409` (which would leave the tenant without the new secret for the
    whole 24 h of the grace)."""
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    hook = (await _create(h, admin)).json()
    rotate = f"/v1/webhooks/{hook['id']}/rotate"
    keyed = {**admin, "Idempotency-Key": "rotate-1"}
    first = await h.client.post(rotate, headers=keyed)
    assert first.status_code == 200 and first.json()["secret"] not in (None, hook["secret"])

    retried = await h.client.post(rotate, headers=keyed)
    assert retried.status_code == 200 and retried.headers["idempotent-replayed"] == "true"
    assert retried.json() == first.json()
    async with h.runtime.sessions() as session:
        signing = await session.execute(
            text("SELECT secret, previous_secret FROM webhook_endpoint")
        )
        assert tuple(signing.one()) == (first.json()["secret"], hook["secret"])
    await _assert_no_secret_kept(h, first.json()["secret"])

    # Another key is another rotation: refused while the first one's grace runs.
    other = {**admin, "Idempotency-Key": "rotate-2"}
    assert_problem(await h.client.post(rotate, headers=other), 409, "invalid-state")
    h.travel(24 * 3600 + 1)
    again = await h.client.post(rotate, headers=other)
    assert again.status_code == 200 and again.json()["secret"] != first.json()["secret"]


async def test_a_rotation_whose_process_died_before_answering_is_answered_to_its_retry(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    """The answer is kept in the rotation's own transaction: there is no moment when the
    rotation is committed and its answer is not."""
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    hook = (await _create(h, admin)).json()
    rotate = f"/v1/webhooks/{hook['id']}/rotate"
    rt = h.runtime
    claim = await idempotency.begin(
        rt, tenant_id="acme", key="rotate-1", fingerprint=fingerprint("POST", rotate, None)
    )
    assert isinstance(claim, idempotency.Claim)
    made = await webhooks.rotate(
        rt,
        principal=Principal("acme", "ops"),
        endpoint_id=hook["id"],
        claim=claim,
        answer=rotation_answer,
    )
    # The process dies here, before its answer leaves and before it stores it again.
    h.travel(rt.settings.idempotency_lock_s + 1)  # its claim would have lapsed by now
    retried = await h.client.post(rotate, headers={**admin, "Idempotency-Key": "rotate-1"})
    assert retried.status_code == 200, retried.text
    assert retried.json()["secret"] == made.secret
    assert retried.headers["idempotent-replayed"] == "true"
    await _assert_no_secret_kept(h, made.secret)


async def test_a_rotations_key_is_kept_as_long_as_its_grace_runs(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """Keys kept 1 h by the operator: a rotation's key still answers later, while the
    rotation refuses another, so a lost answer never locks the tenant out of its secret."""
    h = await harness_factory(
        config=make_config(webhooks={"allow": ["https://*"]}),
        settings_override={"idempotency_ttl_s": 3600},
    )
    admin = await h.key(roles=ADMIN, subject="ops")
    hook = (await _create(h, admin)).json()
    rotate = f"/v1/webhooks/{hook['id']}/rotate"
    keyed = {**admin, "Idempotency-Key": "rotate-1"}
    first = await h.client.post(rotate, headers=keyed)
    assert first.status_code == 200
    h.travel(6 * 3600)
    await idempotency.purge_expired(h.runtime)
    retried = await h.client.post(rotate, headers=keyed)
    assert retried.status_code == 200 and retried.json()["secret"] == first.json()["secret"]


async def test_a_kept_rotation_answer_shows_its_secret_to_no_one_else(
    harness_factory, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    hook = (await _create(h, admin)).json()
    rotate = f"/v1/webhooks/{hook['id']}/rotate"
    keyed = {**admin, "Idempotency-Key": "rotate-1"}
    secret = (await h.client.post(rotate, headers=keyed)).json()["secret"]
    assert (await h.client.post(rotate, headers=keyed)).json()["secret"] == secret

    # The same key in another tenant, or for another request, is not this answer.
    stranger = {**(await h.key(tenant="globex", roles=ADMIN)), "Idempotency-Key": "rotate-1"}
    assert_problem(await h.client.post(rotate, headers=stranger), 404, "not-found")
    reused = await h.client.post(f"/v1/webhooks/{hook['id']}x/rotate", headers=keyed)
    assert_problem(reused, 422, "idempotency-key-reused")
    seen = [
        (await h.client.get("/v1/webhooks", headers=admin)).text,
        caplog.text,
    ]
    assert all(secret.removeprefix("whsec_") not in t for t in seen)


async def _assert_no_secret_kept(h: Harness, secret: str) -> None:
    """The key's record answers the rotation without its secret (`null`), and holds it
    nowhere: the endpoint's row is its only copy."""
    async with h.runtime.sessions() as session:
        rows = (
            await session.execute(
                text("SELECT response_body, to_jsonb(k)::text FROM idempotency_key k")
            )
        ).all()
    assert rows
    rotations = [body for body, _ in rows if body and "previous_secret_expires_at" in body]
    assert rotations and all(body["secret"] is None for body in rotations)
    assert all(secret.removeprefix("whsec_") not in whole for _, whole in rows)


async def _long_kept_keys(harness_factory) -> Harness:  # type: ignore[no-untyped-def]
    """Keys kept 3 days by the operator: a rotation's key outlives its grace."""
    return await harness_factory(
        config=make_config(webhooks={"allow": ["https://*"]}),
        settings_override={"idempotency_ttl_s": 3 * 24 * 3600},
    )


async def test_a_rotations_replay_reads_its_secret_while_it_is_the_latest(harness_factory) -> None:  # type: ignore[no-untyped-def]
    """After the grace, the endpoint still signs with that rotation's secret: a replay
    still answers it. Once another key rotated again, the first key's replay is `409`,
    never the newer secret; the newer key's replay answers its own."""
    h = await _long_kept_keys(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    hook = (await _create(h, admin)).json()
    rotate = f"/v1/webhooks/{hook['id']}/rotate"
    first_key = {**admin, "Idempotency-Key": "rotate-1"}
    first = (await h.client.post(rotate, headers=first_key)).json()

    h.travel(24 * 3600 + 1)
    late = await h.client.post(rotate, headers=first_key)
    assert late.status_code == 200 and late.json() == first
    assert late.headers["idempotent-replayed"] == "true"

    second_key = {**admin, "Idempotency-Key": "rotate-2"}
    second = await h.client.post(rotate, headers=second_key)
    assert second.status_code == 200 and second.json()["secret"] != first["secret"]
    superseded = await h.client.post(rotate, headers=first_key)
    assert_problem(superseded, 409, "invalid-state")
    assert second.json()["secret"].removeprefix("whsec_") not in superseded.text
    assert first["secret"].removeprefix("whsec_") not in superseded.text
    again = await h.client.post(rotate, headers=second_key)
    assert again.status_code == 200 and again.json() == second.json()
    await _assert_no_secret_kept(h, first["secret"])
    await _assert_no_secret_kept(h, second.json()["secret"])

    # Nor does a rotation without a key hand its secret to an older key's replay.
    h.travel(24 * 3600 + 1)
    unkeyed = await h.client.post(rotate, headers=admin)
    assert unkeyed.status_code == 200
    assert_problem(await h.client.post(rotate, headers=second_key), 409, "invalid-state")


async def test_a_rotations_replay_once_its_endpoint_is_deleted_is_404(harness_factory) -> None:  # type: ignore[no-untyped-def]
    h = await _app(harness_factory)
    admin = await h.key(roles=ADMIN, subject="ops")
    hook = (await _create(h, admin)).json()
    rotate = f"/v1/webhooks/{hook['id']}/rotate"
    keyed = {**admin, "Idempotency-Key": "rotate-1"}
    assert (await h.client.post(rotate, headers=keyed)).status_code == 200
    deleted = await h.client.delete(f"/v1/webhooks/{hook['id']}", headers=admin)
    assert deleted.status_code == 204
    assert_problem(await h.client.post(rotate, headers=keyed), 404, "not-found")
    # The key still names that rotation: a retry never registers nor rotates anything.
    assert (await h.client.get("/v1/webhooks", headers=admin)).json()["items"] == []
