"""No address in an answer comes from the Host header, which the client chooses: problem
`type` URIs are `TOOLGATE_PUBLIC_URL/problems/{slug}` when the operator set it, else the
relative `/problems/{slug}`; `instance` is the request's path; a created run's `Location`
is a path; a trailing slash is not redirected to a Host-made URL."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from app.config.settings import Settings
from tests.support.factories import final, run_body
from tests.support.harness import Harness

EVIL = {"Host": "evil.example"}


def assert_no_evil(response: Any) -> None:
    assert "evil.example" not in response.text, response.text[:300]
    for name, value in response.headers.items():
        assert "evil.example" not in value, (name, value)


@pytest.mark.parametrize(
    ("method", "path", "headers", "slug"),
    [
        ("GET", "/v1/nope", {}, "not-found"),  # the router's 404
        ("GET", "/v1/runs", {}, "unauthenticated"),  # a route's problem
        ("POST", "/v1/runs", {"Content-Type": "text/plain"}, "unsupported-media-type"),
        ("GET", "/v1/runs/%00", {}, "bad-request"),  # the middleware's
        ("GET", "/v1/runs/", {}, "not-found"),  # no redirect to http://evil.example/v1/runs
    ],
)
async def test_a_problem_never_points_at_the_requests_host(
    harness: Harness, method: str, path: str, headers: dict[str, str], slug: str
) -> None:
    response = await harness.client.request(
        method, path, headers={**EVIL, **headers}, content=b"x" if method == "POST" else None
    )
    body = response.json()
    assert body["code"] == slug, body
    assert body["type"] == f"/problems/{slug}"
    assert body["instance"].startswith("/v1/")
    assert "location" not in response.headers
    assert_no_evil(response)


async def test_the_problem_pages_never_point_at_the_requests_host(harness: Harness) -> None:
    page = await harness.client.get("/problems/not-found", headers=EVIL)
    assert page.json()["type"] == "/problems/not-found"
    html = await harness.client.get("/problems/not-found", headers={**EVIL, "Accept": "text/html"})
    for response in (page, html):
        assert_no_evil(response)


async def test_a_configured_public_url_makes_the_type_uris(harness_factory: Any) -> None:
    h = await harness_factory(settings_override={"public_url": "https://toolgate.example.com/"})
    problem = (await h.client.get("/v1/nope", headers=EVIL)).json()
    assert problem["type"] == "https://toolgate.example.com/problems/not-found"
    assert problem["instance"] == "/v1/nope"
    page = (await h.client.get("/problems/not-found", headers=EVIL)).json()
    assert page["type"] == problem["type"]
    refused = (await h.client.get("/v1/runs/%00", headers=EVIL)).json()
    assert refused["type"] == "https://toolgate.example.com/problems/bad-request"


@pytest.mark.parametrize("url", ["toolgate.example.com", "/api", "ftp://x", "https://x/?q=1"])
def test_a_public_url_must_be_an_absolute_http_url(url: str) -> None:
    with pytest.raises(ValidationError, match="TOOLGATE_PUBLIC_URL"):
        Settings(public_url=url)
    assert Settings(public_url="https://x.example/toolgate").public_url


async def test_no_page_or_created_run_points_at_the_requests_host(harness: Harness) -> None:
    headers = {**await harness.key(), **EVIL}
    created = await harness.client.post("/v1/runs", headers=headers, json=run_body(final("x")))
    assert created.headers["location"] == f"/v1/runs/{created.json()['id']}"
    assert_no_evil(created)
    for path in ("/docs", "/redoc", "/openapi.json", "/console", "/console/runs"):
        response = await harness.client.get(path, headers=EVIL)
        assert response.status_code == 200, path
        assert_no_evil(response)
