"""The SSO callback's access line keeps no `code` nor `state`: they are a sign-in's
secrets. Other lines are left as they are."""

from __future__ import annotations

import logging

from app.observability.logs import NoSignInQuery


def _line(path: str) -> logging.LogRecord:
    args = ("127.0.0.1:5000", "GET", path, "1.1", 303)
    return logging.LogRecord(
        "uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d', args, None
    )


def test_the_callbacks_query_is_left_out_of_the_access_log() -> None:
    record = _line("/console/sso/callback?code=SECRET-CODE&state=SECRET-STATE")
    assert NoSignInQuery().filter(record) is True
    said = record.getMessage()
    assert "SECRET" not in said and "/console/sso/callback" in said


def test_other_lines_keep_their_query() -> None:
    record = _line("/v1/runs?status=finished")
    NoSignInQuery().filter(record)
    assert "/v1/runs?status=finished" in record.getMessage()
