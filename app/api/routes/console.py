"""The approvers' console (`/console`): one HTML shell for every `/console/...` address,
whose plain ES modules (under `app/static/console`, no build step) route on the path and
talk to the API with the API key the user pasted. Every console response carries a strict
Content-Security-Policy: only the service's own scripts and styles, no inline code, no
other host. None of it is part of the API document."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from app.api.problems import ProblemError

router = APIRouter(include_in_schema=False)

ASSETS = Path(__file__).resolve().parents[2] / "static" / "console"
ASSETS_URL = "/console/assets"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; "
    "object-src 'none'"
)
_MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
#: What every console response carries (the SSO addresses' too).
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

# The shell holds no data: everything shown comes from the API, rendered as text.
SHELL = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Toolgate console</title>
<link rel="icon" href="{ASSETS_URL}/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="{ASSETS_URL}/console.css">
<script type="module" src="{ASSETS_URL}/app.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="bar">
<span class="brand">Toolgate console</span>
<nav aria-label="Console" id="nav" hidden>
<a href="/console">Queue</a>
<a href="/console/runs">Runs</a>
<a href="/console/tools">Tools</a>
<a href="/console/keys" id="nav-keys" hidden>Keys</a>
<a href="/console/audit" id="nav-audit" hidden>Audit</a>
</nav>
<div class="who" id="who"></div>
</header>
<div class="announcer" id="announcer" role="status" aria-live="polite"></div>
<main id="main" tabindex="-1">
<noscript>The console needs JavaScript.</noscript>
</main>
</body>
</html>
"""


def _shell() -> HTMLResponse:
    return HTMLResponse(SHELL, headers={**HEADERS, "Cache-Control": "no-store"})


@router.get("/")
async def root() -> Response:
    return RedirectResponse("/console", status_code=307, headers=HEADERS)


@router.get("/favicon.ico")
async def favicon() -> Response:
    """The console's icon, also where browsers look for one unasked (the docs' pages, a
    JSON answer opened in a tab): without it each of them logs a 404."""
    return FileResponse(
        ASSETS / "favicon.svg",
        media_type=_MEDIA_TYPES[".svg"],
        headers={**HEADERS, "Cache-Control": "max-age=86400"},
    )


@router.get(ASSETS_URL + "/{name:path}")
async def console_asset(name: str) -> Response:
    """A file of the console, only from its own directory (no `..`, no hidden files)."""
    path = _asset(name)
    if path is None:
        raise ProblemError("not-found", "no such console asset", headers=HEADERS)
    return FileResponse(
        path,
        media_type=_MEDIA_TYPES[path.suffix],
        headers={**HEADERS, "Cache-Control": "no-cache"},
    )


def _asset(name: str) -> Path | None:
    path = (ASSETS / name).resolve()
    if (
        not path.is_relative_to(ASSETS)
        or any(part.startswith(".") for part in path.relative_to(ASSETS).parts)
        or path.suffix not in _MEDIA_TYPES
    ):
        return None
    try:
        return path if path.is_file() else None
    except OSError:  # e.g. a name longer than the file system allows: no such asset
        return None


@router.get("/console")
async def console_home() -> HTMLResponse:
    return _shell()


@router.get("/console/{path:path}")
async def console_page(path: str) -> HTMLResponse:
    """Any console address (`/console/runs/{id}`, `/console/previews/{id}`, …) works when
    opened directly: the shell's script routes on the path. One with `.` or `..` segments
    (`/console/..%2f..%2fetc/passwd`) is no console address, and the shell's relative
    links would not work there."""
    if any(segment in (".", "..") for segment in path.split("/")):
        raise ProblemError("not-found", "no such console page", headers=HEADERS)
    return _shell()
