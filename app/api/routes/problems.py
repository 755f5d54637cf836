"""`GET /problems/{slug}`: the documentation every problem's `type` URI points to."""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel
from starlette.responses import HTMLResponse

from app.api.middleware import base_url_of
from app.api.problems import PROBLEM_TYPES, ProblemError, problem_type_uri
from app.api.responses import problems

router = APIRouter(tags=["problems"])


class ProblemTypeOut(BaseModel):
    type: str
    code: str
    status: int
    title: str
    meaning: str
    action: str


@router.get(
    "/problems/{slug}",
    response_model=ProblemTypeOut,
    responses={
        **problems(404),
        200: {"content": {"text/html": {"schema": {"type": "string"}}}},
    },
    summary="Documentation of a problem type",
)
async def problem_type(slug: str, request: Request) -> Any:
    """What a problem type means and what a client should do about it: JSON, or a short
    HTML page for a browser following a problem's `type` link."""
    kind = PROBLEM_TYPES.get(slug)
    if kind is None:
        raise ProblemError("not-found", "no such problem type")
    page = ProblemTypeOut(
        type=problem_type_uri(base_url_of(request.scope), slug),
        code=kind.slug,
        status=kind.status,
        title=kind.title,
        meaning=kind.meaning,
        action=kind.action,
    )
    if "text/html" in request.headers.get("accept", ""):
        return HTMLResponse(_HTML.format(**{k: html.escape(str(v)) for k, v in page}))
    return page


_HTML = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title} ({code})</title></head><body>
<h1>{title}</h1><p>HTTP status <strong>{status}</strong> &middot; <code>{code}</code></p>
<h2>What it means</h2><p>{meaning}</p><h2>What to do</h2><p>{action}</p>
</body></html>
"""
