"""The test OpenID Connect provider is a real one: driven over HTTP as a client would, it
gives tokens only for a code presented once, by its client, with the PKCE verifier that
answers the challenge, and the access tokens it gives verify against its JWKS."""

from __future__ import annotations

from collections.abc import AsyncIterator
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from tests.support.oidc_issuer import AUDIENCE
from tests.support.oidc_provider import Provider, pkce_pair, providing

CLIENT = "toolgate-console"
SECRET = "s3cret"
# Never followed: the tests read the Location the provider answers.
REDIRECT = "http://127.0.0.1:9/console/callback"
SIGNED_OUT = "http://127.0.0.1:9/console/signed-out"


class SignInPage(HTMLParser):
    """The page's form as a browser sees it: hidden fields, and the users' buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: dict[str, str] = {}
        self.buttons: dict[str, str] = {}  # value -> label
        self._button: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            assert found["method"] == "post"
            self.action = found["action"]
        elif tag == "input" and found.get("type") == "hidden":
            self.fields[found["name"]] = found["value"]
        elif tag == "button" and found.get("name") == "user":
            self._button = found["value"]

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self.buttons[self._button] = data
            self._button = None


@pytest.fixture
async def op() -> AsyncIterator[Provider]:
    async with providing() as running:
        running.client(
            CLIENT, SECRET, redirect_uris=[REDIRECT], post_logout_redirect_uris=[SIGNED_OUT]
        )
        running.user("alice", roles=["approver"], name="Alice Doe", email="alice@example.com")
        running.user("bob", roles=["caller"])
        yield running


@pytest.fixture
async def http(op: Provider) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=op.url, timeout=5) as client:
        yield client


def authorize_query(challenge: str | None, **changes: str) -> dict[str, str]:
    query = {
        "response_type": "code",
        "client_id": CLIENT,
        "redirect_uri": REDIRECT,
        "scope": "openid profile email",
        "state": "st-1",
        "nonce": "n-1",
        "code_challenge": challenge or "",
        "code_challenge_method": "S256",
        **changes,
    }
    return {name: value for name, value in query.items() if value}


def redirected(response: httpx.Response) -> tuple[str, dict[str, str]]:
    assert response.status_code == 302, response.text
    parts = urlsplit(response.headers["location"])
    target = f"{parts.scheme}://{parts.netloc}{parts.path}"
    return target, {name: values[0] for name, values in parse_qs(parts.query).items()}


async def sign_in(http: httpx.AsyncClient, challenge: str, user: str = "alice") -> str:
    """Through the sign-in page as a person would: the code the client gets back."""
    page = await http.get("/authorize", params=authorize_query(challenge))
    assert page.status_code == 200
    form = SignInPage()
    form.feed(page.text)
    answer = await http.post(form.action, data={**form.fields, "user": user})
    target, query = redirected(answer)
    assert target == REDIRECT
    assert query["state"] == "st-1"
    return query["code"]


async def exchange(http: httpx.AsyncClient, code: str, verifier: str, **form: str) -> Any:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        **form,
    }
    auth = None if "client_secret" in form else (CLIENT, SECRET)
    return await http.post("/token", data=data, auth=auth)


async def test_the_page_offers_each_user_and_carries_the_request(
    op: Provider, http: httpx.AsyncClient
) -> None:
    _, challenge = pkce_pair()
    page = await http.get("/authorize", params=authorize_query(challenge))
    form = SignInPage()
    form.feed(page.text)
    assert page.headers["content-type"].startswith("text/html")
    assert form.buttons == {"alice": "Sign in as Alice Doe", "bob": "Sign in as bob"}
    assert form.fields == authorize_query(challenge)
    assert op.authorize_requests == [authorize_query(challenge)]


async def test_a_code_and_its_verifier_give_tokens_that_verify(
    op: Provider, http: httpx.AsyncClient
) -> None:
    discovery = (await http.get("/.well-known/openid-configuration")).json()
    assert discovery["issuer"] == op.issuer
    assert discovery["code_challenge_methods_supported"] == ["S256"]
    verifier, challenge = pkce_pair()
    code = await sign_in(http, challenge)
    answer = await exchange(http, code, verifier)
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    tokens = answer.json()
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 300
    assert tokens["scope"] == "openid profile email"
    keys = jwt.PyJWKSet.from_dict((await http.get(discovery["jwks_uri"])).json())
    access_key = keys[jwt.get_unverified_header(tokens["access_token"])["kid"]]
    access = jwt.decode(
        tokens["access_token"], access_key.key, algorithms=["RS256"], audience=AUDIENCE
    )
    assert access["iss"] == op.issuer
    assert (access["sub"], access["roles"]) == ("alice", ["approver"])
    assert access["iat"] <= access["nbf"] < access["exp"] == access["iat"] + 300
    id_key = keys[jwt.get_unverified_header(tokens["id_token"])["kid"]]
    identity = jwt.decode(
        tokens["id_token"], id_key.key, algorithms=["RS256"], audience=CLIENT, issuer=op.issuer
    )
    assert identity["nonce"] == "n-1"
    assert (identity["name"], identity["email"]) == ("Alice Doe", "alice@example.com")
    assert "roles" not in identity
    assert op.last_token_request["code_verifier"] == verifier
    assert all("code_verifier" not in sent for sent in op.authorize_requests)
    assert (op.codes_issued, op.tokens_issued, op.token_refusals) == (1, 1, [])


async def test_a_code_is_good_once(op: Provider, http: httpx.AsyncClient) -> None:
    verifier, challenge = pkce_pair()
    code = await sign_in(http, challenge)
    by_post = {"client_id": CLIENT, "client_secret": SECRET}
    assert (await exchange(http, code, verifier, **by_post)).status_code == 200
    again = await exchange(http, code, verifier, **by_post)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")
    assert op.tokens_issued == 1


async def test_a_code_without_its_binding_is_refused(op: Provider, http: httpx.AsyncClient) -> None:
    wrongs = {
        "another verifier": {"code_verifier": pkce_pair()[0]},
        "no verifier": {"code_verifier": ""},
        "another redirect_uri": {"redirect_uri": REDIRECT + "/other"},
    }
    for case, wrong in wrongs.items():
        verifier, challenge = pkce_pair()
        code = await sign_in(http, challenge)
        refused = await exchange(http, code, verifier, **wrong)
        assert (refused.status_code, refused.json()["error"]) == (400, "invalid_grant"), case
        # Spent all the same: the right verifier is too late now.
        late = await exchange(http, code, verifier)
        assert (late.status_code, late.json()["error"]) == (400, "invalid_grant"), case
    assert op.tokens_issued == 0


async def test_an_expired_code_is_refused(op: Provider, http: httpx.AsyncClient) -> None:
    verifier, challenge = pkce_pair()
    code = await sign_in(http, challenge)
    op.code_lifetime_s = 0
    refused = await exchange(http, code, verifier)
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_grant")
    assert op.token_refusals == ["invalid_grant: code expired"]


async def test_pkce_is_required(op: Provider, http: httpx.AsyncClient) -> None:
    cases = {
        "no challenge": {"code_challenge": ""},
        "plain": {"code_challenge_method": "plain"},
        "no method (plain, RFC 7636 §4.3)": {"code_challenge_method": ""},
    }
    for case, pkce in cases.items():
        query = authorize_query(pkce_pair()[1], **pkce)
        target, error = redirected(await http.get("/authorize", params=query))
        assert target == REDIRECT, case
        assert (error["error"], error["state"]) == ("invalid_request", "st-1"), case
        assert "code" not in error, case
    assert op.codes_issued == 0


async def test_an_unregistered_redirect_uri_is_never_redirected_to(
    op: Provider, http: httpx.AsyncClient
) -> None:
    query = authorize_query(pkce_pair()[1], redirect_uri="http://127.0.0.1:9/elsewhere")
    refused = await http.get("/authorize", params=query)
    assert refused.status_code == 400
    assert refused.headers["content-type"].startswith("text/html")
    assert "location" not in refused.headers
    assert op.codes_issued == 0


async def test_a_wrong_client_secret_is_invalid_client(
    op: Provider, http: httpx.AsyncClient
) -> None:
    verifier, challenge = pkce_pair()
    code = await sign_in(http, challenge)
    basic = await http.post(
        "/token",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT},
        auth=(CLIENT, "wrong"),
    )
    assert (basic.status_code, basic.json()["error"]) == (401, "invalid_client")
    assert basic.headers["www-authenticate"].startswith("Basic")
    posted = await exchange(http, code, verifier, client_id=CLIENT, client_secret="wrong")
    assert (posted.status_code, posted.json()["error"]) == (401, "invalid_client")
    # Nobody was given the code: its client can still redeem it.
    assert (await exchange(http, code, verifier)).status_code == 200


async def test_a_person_who_declines_sends_access_denied(
    op: Provider, http: httpx.AsyncClient
) -> None:
    op.decline = True
    page = await http.get("/authorize", params=authorize_query(pkce_pair()[1]))
    form = SignInPage()
    form.feed(page.text)
    _, query = redirected(await http.post(form.action, data={**form.fields, "user": "alice"}))
    assert query == {"error": "access_denied", "state": "st-1"}
    assert op.codes_issued == 0


async def test_logout_goes_back_only_to_a_registered_uri(
    op: Provider, http: httpx.AsyncClient
) -> None:
    params = {"post_logout_redirect_uri": SIGNED_OUT, "state": "bye", "client_id": CLIENT}
    target, query = redirected(await http.get("/logout", params=params))
    assert (target, query) == (SIGNED_OUT, {"state": "bye"})
    elsewhere = {"post_logout_redirect_uri": "http://127.0.0.1:9/elsewhere"}
    refused = await http.get("/logout", params=elsewhere)
    assert (refused.status_code, refused.headers.get("location")) == (400, None)
    assert op.logouts == [params]
