"""Assertions shared by the API tests."""

from __future__ import annotations

from typing import Any

import httpx


def assert_problem(response: httpx.Response, status: int, slug: str, path: str) -> dict[str, Any]:
    """The common shape of every problem response; returns the body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].split(";")[0] == "application/problem+json"
    body = response.json()
    assert body["type"] == f"/problems/{slug}", body  # no public URL set: relative
    assert isinstance(body["title"], str) and body["title"], body
    assert body["status"] == status, body
    assert isinstance(body["detail"], str) and body["detail"], body
    assert body["instance"] == path, body
    assert body["code"] == slug, body
    assert isinstance(body["trace_id"], str) and body["trace_id"], body
    return body
