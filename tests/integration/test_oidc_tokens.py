"""People's access tokens as principals (`auth.oidc`): a JWT from the configured issuer,
checked against its discovered JWKS (fetched again on an unknown `kid`, not on every
forged one), with `iss`, `aud`, `exp` and `nbf` checked with 60 s of leeway, is a
principal of the mapped roles beside API keys. Every token that does not verify gets the
same `401`, and no token ever reaches a log line."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import parse_config
from tests.support.approvals import WRITER, move, row
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.fakes import FakeClock
from tests.support.harness import DEFAULT_AGENT, Harness
from tests.support.oidc_issuer import AUDIENCE, Issuer, issuing, rsa_key

GROUPS = {"tg-approvers": ["approver"], "tg-admins": ["admin", "approver"], "tg-users": ["caller"]}


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    async with issuing() as running:
        yield running


def oidc_config(issuer: Issuer, agent: dict[str, Any] = DEFAULT_AGENT, **oidc: Any) -> Any:
    auth = {
        "issuer": issuer.issuer,
        "audience": AUDIENCE,
        "tenant": "acme",
        "roles_claim": "groups",
        "roles": GROUPS,
        **oidc,
    }
    if "tenant_claim" in oidc:
        auth.pop("tenant")
    data = {
        "models": {"scripted": {"provider": "scripted"}},
        "agents": {"tech-radar": agent},
        "auth": {"oidc": auth},
    }
    return parse_config(data, builtin_tools=SPECS)


async def me(h: Harness, token: str) -> Any:
    return await h.client.get("/v1/me", headers={"Authorization": f"Bearer {token}"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hmac_signed(issuer: Issuer, secret: bytes) -> str:
    """A token signed HS256 with `secret` (the issuer's public key: the classic confusion)."""
    header = _b64(json.dumps({"alg": "HS256", "kid": "k1", "typ": "JWT"}).encode())
    payload = json.loads(base64.urlsafe_b64decode(issuer.token().split(".")[1] + "=="))
    body = _b64(json.dumps(payload).encode())
    signature = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64(signature)}"


def unsigned(issuer: Issuer) -> str:
    header = _b64(json.dumps({"alg": "none", "kid": "k1"}).encode())
    return f"{header}.{issuer.token().split('.')[1]}."


async def test_a_token_from_the_issuer_is_a_principal_of_its_mapped_roles(
    harness_factory, issuer: Issuer
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=oidc_config(issuer))
    token = issuer.token(groups=["tg-approvers", "tg-users", "elsewhere"], scope="openid runs:read")
    answer = await me(h, token)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "tenant": "acme",
        "subject": "alice",
        "roles": ["approver", "caller"],
        "scopes": ["openid", "runs:read"],
    }
    # A key still opens the API beside tokens.
    keyed = await h.client.get("/v1/me", headers=await h.key())
    assert keyed.status_code == 200 and keyed.json()["subject"] != "alice"
    # A token 30 s past its expiry is within the leeway.
    late = await me(h, issuer.token(groups="tg-admins", lifetime_s=-30))
    assert late.status_code == 200 and late.json()["roles"] == ["admin", "approver"]
    assert issuer.jwks_fetches == 1  # discovered once, kept


async def test_every_token_that_does_not_verify_gets_the_same_401_and_is_never_logged(
    harness_factory, issuer: Issuer, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=oidc_config(issuer))
    public = (
        issuer.keys["k1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    groups = {"groups": ["tg-admins"]}
    refused = {
        "another audience": issuer.token(aud="someone-else", **groups),
        "expired past the leeway": issuer.token(lifetime_s=-120, **groups),
        "not yet valid": issuer.token(nbf=int(time.time()) + 600, **groups),
        "another issuer": issuer.token(iss="https://evil.example/", **groups),
        "signed by another key": issuer.token(key=rsa_key(), **groups),
        "an EC key under the RSA key's kid": issuer.token(
            key=ec.generate_private_key(ec.SECP256R1())
        ),
        "unsigned (alg none)": unsigned(issuer),
        "HMAC keyed by the public key": hmac_signed(issuer, public),
        "no expiry": issuer.token(exp=None, **groups),
        "not a JWT": "abc.def.ghi",
        "no subject": issuer.token(sub=None, **groups),
    }
    caplog.set_level(logging.DEBUG)
    bodies = set()
    for reason, token in refused.items():
        answer = await me(h, token)
        assert answer.status_code == 401, (reason, answer.text)
        assert answer.headers["www-authenticate"] == "Bearer"
        body = answer.json()
        assert token not in answer.text
        bodies.add((body["type"], body["title"], body["detail"]))
    assert len(bodies) == 1, bodies  # whatever the reason, the same answer
    logged = "\n".join(r.getMessage() for r in caplog.records)
    parts = {part for token in refused.values() for part in token.split(".") if len(part) > 8}
    assert parts and not [part for part in parts if part in logged]


async def test_a_rotated_key_is_fetched_once_and_forged_kids_do_not_hammer_the_issuer(
    harness_factory, issuer: Issuer, clock: FakeClock
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=oidc_config(issuer))
    assert (await me(h, issuer.token(groups="tg-users"))).status_code == 200
    assert issuer.jwks_fetches == 1
    # Tokens naming kids the issuer never had: one fetch at most, then refused unseen.
    for n in range(5):
        forged = issuer.token(kid=f"forged-{n}", key=rsa_key(), groups="tg-admins")
        assert (await me(h, forged)).status_code == 401
    assert issuer.jwks_fetches == 1  # the keys were fetched less than 30 s ago
    # The issuer rotates: a token under the new kid is taken once the wait is over.
    issuer.add_key("k2")
    clock.advance(31)
    rotated = await me(h, issuer.token(kid="k2", groups="tg-users"))
    assert rotated.status_code == 200, rotated.text
    assert issuer.jwks_fetches == 2
    assert (await me(h, issuer.token(kid="k2", groups="tg-users"))).status_code == 200
    assert issuer.jwks_fetches == 2


async def test_a_token_that_maps_to_no_role_is_forbidden(harness_factory, issuer: Issuer) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=oidc_config(issuer))
    answer = await me(h, issuer.token(groups=["some-other-group"]))
    assert answer.status_code == 403 and answer.json()["type"].endswith("/forbidden")
    runs = await h.client.get(
        "/v1/runs", headers={"Authorization": f"Bearer {issuer.token(groups=[])}"}
    )
    assert runs.status_code == 403


async def test_the_tenant_may_come_from_a_claim(harness_factory, issuer: Issuer) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=oidc_config(issuer, tenant_claim="org"))
    answer = await me(h, issuer.token(org="globex", groups="tg-users"))
    assert answer.status_code == 200 and answer.json()["tenant"] == "globex"
    assert (await me(h, issuer.token(groups="tg-users"))).status_code == 401  # no tenant


def test_an_issuer_is_https_or_loopback_and_names_one_tenant_source() -> None:
    from app.config.files import ConfigError

    def refused(**oidc: Any) -> str:
        data = {"auth": {"oidc": {"issuer": "https://id.example/", "audience": "tg", **oidc}}}
        with pytest.raises(ConfigError) as caught:
            parse_config(data, builtin_tools=SPECS)
        return str(caught.value)

    assert "loopback" in refused(issuer="http://id.example/", tenant="acme")
    assert "tenant" in refused()
    assert "tenant" in refused(tenant="acme", tenant_claim="org")
    assert "approver" in refused(tenant="acme", roles={"g": ["boss"]})
    assert "client_id" in refused(tenant="acme", client_secret_env="TG_SECRET")
    assert "openid" in refused(tenant="acme", client_id="console", scopes=["email"])
    assert "redirect_uri" in refused(tenant="acme", client_id="console", redirect_uri="nope")


async def test_a_person_who_asked_never_approves_and_an_approval_names_the_person(
    harness_factory, issuer: Issuer
) -> None:  # type: ignore[no-untyped-def]
    h = await harness_factory(config=oidc_config(issuer, WRITER))
    await seed_radar(h)

    def bearer(subject: str, group: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {issuer.token(sub=subject, groups=[group, 'tg-users'])}"}

    alice, bob = bearer("alice", "tg-approvers"), bearer("bob", "tg-approvers")
    kafka = await row(h, "Kafka")
    body = run_body(tool_calls(move(kafka["id"])), final("Moved [source:s1]"))
    run = (await h.client.post("/v1/runs", headers=alice, json=body)).json()
    assert run["status"] == "awaiting_approval", run
    preview_id = run["pending_approvals"][0]["preview_id"]
    preview = (await h.client.get(f"/v1/previews/{preview_id}", headers=bob)).json()
    decide = {"content_hash": preview["content_hash"]}
    own = await h.client.post(f"/v1/previews/{preview_id}/approve", headers=alice, json=decide)
    assert own.status_code == 403, own.text  # alice asked: she may not approve
    approved = await h.client.post(f"/v1/previews/{preview_id}/approve", headers=bob, json=decide)
    assert approved.status_code == 200, approved.text
    assert approved.json()["decided_by"] == "bob"
