"""The interactive API docs (`/docs`, Swagger UI) and the reference (`/redoc`), with every
asset served by the service itself: they work without internet. The assets are vendored
under `app/static/vendor` (versions and licences in its README)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.responses import HTMLResponse

router = APIRouter(include_in_schema=False)
VENDOR = "/static/vendor"
TITLE = "Toolgate"
# Nothing leaves for another host, even what a bundle hard-codes (Redoc's footer logo):
# the browser refuses it before any request is made. Both pages start with an inline script.
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'"
)


# Built once: the pages hold nothing but the assets' and the document's addresses.
_SWAGGER = get_swagger_ui_html(
    openapi_url="/openapi.json",
    title=f"{TITLE} — API docs",
    swagger_js_url=f"{VENDOR}/swagger-ui/swagger-ui-bundle.js",
    swagger_css_url=f"{VENDOR}/swagger-ui/swagger-ui.css",
    swagger_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png",
).body
_REDOC = get_redoc_html(
    openapi_url="/openapi.json",
    title=f"{TITLE} — API reference",
    redoc_js_url=f"{VENDOR}/redoc/redoc.standalone.js",
    redoc_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png",
    with_google_fonts=False,
).body


@router.get("/docs")
async def swagger_ui() -> HTMLResponse:
    return HTMLResponse(_SWAGGER, headers={"Content-Security-Policy": CSP})


@router.get("/redoc")
async def redoc() -> HTMLResponse:
    return HTMLResponse(_REDOC, headers={"Content-Security-Policy": CSP})
