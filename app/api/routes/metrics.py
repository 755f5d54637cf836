"""`/metrics`: the OpenTelemetry metrics in Prometheus' text format, served by the app itself
when `OTEL_METRICS_EXPORTER` includes `prometheus` (see docs/telemetry.md).

On the service's own port, so one process is one scrape target, with no second port to
open, route and keep from colliding between processes. Unauthenticated, as scrapers
expect: it carries only names from the config and fixed codes (never a run, tenant, key or
user id), and the runbook says to keep it off the public ingress. Not in the OpenAPI
document: it is not part of the API, and present only when configured."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

PATH = "/metrics"


def install(app: FastAPI, registry: Any) -> None:
    """Serves `registry` (a prometheus_client registry) at `/metrics`."""
    from prometheus_client.exposition import choose_encoder

    def scrape(request: Request) -> Response:
        # A plain function: Starlette runs it in its thread pool, since collecting walks
        # every metric stream under the SDK's locks.
        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(encoder(registry), headers={"Content-Type": content_type})

    app.add_route(PATH, scrape, methods=["GET"], include_in_schema=False)
