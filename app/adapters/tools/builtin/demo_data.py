"""Sample radar rows for `python -m app demo seed`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.radar import technologies
from app.domain.ids import new_id

SAMPLE: list[tuple[str, str, str, str]] = [
    (
        "PostgreSQL",
        "database",
        "adopt",
        "Relational database. Our default store for transactional data.",
    ),
    (
        "Kafka",
        "messaging",
        "trial",
        "Distributed event log. Trialled for event streaming between services.",
    ),
    ("Kubernetes", "platform", "adopt", "Container orchestration. Runs every production service."),
    ("GraphQL", "api", "assess", "Query language for APIs. Being assessed for the mobile backend."),
    (
        "CORBA",
        "middleware",
        "hold",
        "Distributed object middleware. Do not start new work with it.",
    ),
    ("Redis", "database", "adopt", "In-memory data store. Used for caches and rate limits."),
    ("MongoDB", "database", "hold", "Document database. New services should prefer PostgreSQL."),
    ("DuckDB", "database", "assess", "Embedded analytical database. Assessed for local analytics."),
    ("RabbitMQ", "messaging", "trial", "Message broker. Trialled for task queues."),
    (
        "OpenTelemetry",
        "observability",
        "adopt",
        "Vendor-neutral tracing and metrics. Required in new services.",
    ),
    ("gRPC", "api", "trial", "RPC framework over HTTP/2. Trialled between internal services."),
    (
        "Terraform",
        "platform",
        "adopt",
        "Infrastructure as code. Every cloud resource is declared with it.",
    ),
]


async def seed(
    session: AsyncSession,
    *,
    tenant_id: str,
    now: datetime,
    ids: Mapping[str, str] | None = None,
) -> int:
    """`ids`: the id to give a technology of that name (a replay's scratch tenant takes
    the recorded tenant's, so that recorded arguments name the same rows); else a new one."""
    rows: list[dict[str, Any]] = [
        {
            "tenant_id": tenant_id,
            "id": (ids or {}).get(name) or new_id("tech"),
            "name": name,
            "category": category,
            "ring": ring,
            "description": description,
            "version": 1,
            "updated_at": now,
        }
        for name, category, ring, description in SAMPLE
    ]
    return await technologies.insert_missing(session, rows)
