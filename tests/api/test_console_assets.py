"""Odd console addresses and asset names are a 4xx problem, never a 500 or a file from
outside the console's own directory."""

from __future__ import annotations

import pytest

from app.api.problems import PROBLEM_JSON
from app.api.routes.console import CSP
from tests.support.harness import Harness


@pytest.mark.parametrize(
    "path",
    [
        "/console/..%2f..%2fetc/passwd",
        "/console/%2e%2e/%2e%2e/etc/passwd",
        "/console/%00",
        "/console/assets/%00.js",
        "/console/assets/app.js%00.png",
        "/console/assets/%ED%A0%80.js",
        "/console/assets/..%2f..%2f..%2fmain.py",
        "/console/assets/.hidden.js",
        "/console/assets/",
        "/console/assets/app.exe",
        "/console/assets/" + "a" * 300 + ".js",  # longer than a file name may be
        "/console/assets/" + "a/" * 3000 + "x.js",  # longer than a path may be
        "/static/vendor/" + "a" * 300 + ".js",
        "/static/vendor/..%2f..%2fmain.py",
    ],
)
async def test_odd_console_asset_paths_are_a_4xx_problem(harness: Harness, path: str) -> None:
    response = await harness.client.get(path)
    assert response.status_code in (400, 404), (response.status_code, response.text[:200])
    assert response.headers["content-type"] == PROBLEM_JSON
    assert response.json()["code"] in ("bad-request", "not-found")


@pytest.mark.parametrize(
    "path", ["/console/..%2f..%2fetc/passwd", "/console/runs/%2e%2e", "/console/%2e/tools"]
)
async def test_a_console_address_with_dot_segments_is_not_found(
    harness: Harness, path: str
) -> None:
    response = await harness.client.get(path)
    assert response.status_code == 404 and response.json()["code"] == "not-found"
    assert response.headers["content-security-policy"] == CSP


async def test_the_console_and_its_assets_are_still_served(harness: Harness) -> None:
    for path in ("/console", "/console/runs/run_x", "/console/assets/app.js"):
        assert (await harness.client.get(path)).status_code == 200, path


async def test_the_favicon_is_served_where_browsers_look_and_the_shell_links_it(
    harness: Harness,
) -> None:
    shell = (await harness.client.get("/console")).text
    assert '<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">' in shell
    for path in ("/favicon.ico", "/console/assets/favicon.svg"):
        response = await harness.client.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"] == "image/svg+xml"
        assert response.text.startswith("<svg") and response.headers["content-security-policy"]
