"""The OpenAPI document, as served and as committed in openapi/openapi.json."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.api.problems import PROBLEM_JSON, PROBLEM_TYPES, problem_body
from app.api.schemas.runs import Problem
from app.config.files import parse_config
from app.domain.errors import FieldError

#: What each problem type's example says: a message the service gives (or one like it).
_EXAMPLE_DETAILS = {
    "bad-request": "the body is not valid JSON",
    "idempotency-key-missing": "this operation requires an Idempotency-Key header",
    "unauthenticated": "the API key is not valid",
    "forbidden": "this operation needs the role approver",
    "not-found": "no such run",
    "method-not-allowed": "Method Not Allowed",
    "invalid-state": "only a finished run can be continued",
    "idempotency-key-in-flight": "a request with this Idempotency-Key is still in progress",
    "preview-mismatch": "the content hash is not the preview's as stored",
    "preview-not-approved": "the preview is not approved yet",
    "version-conflict": "the resource changed since the preview; a new preview awaits approval",
    "preview-expired": "the preview expired",
    "payload-too-large": "the body is larger than 1048576 bytes",
    "unsupported-media-type": "send the body as application/json",
    "validation-error": "some fields are invalid",
    "idempotency-key-reused": "this Idempotency-Key was used for a different request",
    "rate-limited": "too many requests; try again shortly.",
    "quota-exceeded": "the tenant's runs quota is used up; try again later",
    "internal": "an unexpected error; see the trace id",
    "unavailable": "the database is unreachable",
}
_EXAMPLE_EXTRA: dict[str, dict[str, Any]] = {
    "version-conflict": {"new_preview_id": "prv_9e107d9d372bb6826bd81d3542a419d6"},
}
#: Example values of the path parameters, for an example's `instance`.
_PATH_EXAMPLES = {
    "run_id": "run_5d41402abc4b2a76b9719d911017c592",
    "preview_id": "prv_7d793037a0760186574b0282f2f435e7",
    "key_id": "key_e4d909c290d0fb1ca068ffaddf22cbd0",
    "webhook_id": "wh_45c48cce2e2d7fbdea1afc51c7c6ad26",
    "name": "search_technologies",
    "slug": "not-found",
}
#: The problem types of a decision on a preview, by decision (the path's last segment);
#: no other operation answers them.
_DECISION_SLUGS = {
    "approve": {"preview-mismatch", "preview-expired"},
    "reject": {"preview-expired"},
    "commit": {"preview-not-approved", "version-conflict", "preview-expired"},
}
_PREVIEW_SLUGS = frozenset().union(*_DECISION_SLUGS.values())
_EXAMPLE_ERRORS = {
    "validation-error": [
        FieldError("limits.max_steps", "Input should be greater than or equal to 1")
    ],
}
#: The problem type an error status shows first; its other types follow.
_FIRST = {400: "bad-request", 409: "invalid-state", 422: "validation-error", 429: "rate-limited"}


def _slugs(status: int, path: str, operation: dict[str, Any]) -> list[str]:
    """The problem types of `status` this operation may answer, the usual one first."""
    keyed = any(p.get("name") == "Idempotency-Key" for p in operation.get("parameters", []))
    decision = _DECISION_SLUGS.get(path.rsplit("/", 1)[-1], set())
    every = [p.slug for p in PROBLEM_TYPES.values() if p.status == status]
    slugs = [
        s
        for s in every
        if (keyed or not s.startswith("idempotency-key"))
        and (s in decision or s not in _PREVIEW_SLUGS)
    ]
    return sorted(slugs or every, key=lambda slug: (slug != _FIRST.get(status), slug))


def _problem_examples(slugs: list[str], path: str) -> dict[str, Any]:
    """One example per problem type, named by its slug."""
    instance = re.sub(r"\{(\w+)\}", lambda m: _PATH_EXAMPLES.get(m[1], m[0]), path)
    return {
        slug: {
            "summary": PROBLEM_TYPES[slug].title,
            "value": problem_body(
                slug,
                _EXAMPLE_DETAILS[slug],
                base_url="https://toolgate.example",
                instance=instance,
                trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
                errors=_EXAMPLE_ERRORS.get(slug, ()),
                extra=_EXAMPLE_EXTRA.get(slug),
            ),
        }
        for slug in slugs
    }


def _problem_responses_only(document: dict[str, Any]) -> None:
    """Error responses are problem+json, never FastAPI's default JSON or its
    HTTPValidationError; each status shows examples of its own problem types."""
    for path, operations in document.get("paths", {}).items():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if status[0] in "45":
                    slugs = _slugs(int(status), path, operation)
                    title = response.get("description", "")
                    response["description"] = f"{title} ({', '.join(slugs)})"
                    response["content"] = {
                        PROBLEM_JSON: {
                            "schema": {"$ref": "#/components/schemas/Problem"},
                            "examples": _problem_examples(slugs, path),
                        }
                    }
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(problem.pop("$defs", {}))  # its item schemas go with the others
    schemas["Problem"] = problem


def _no_null_in_requests(document: dict[str, Any]) -> None:
    """Optional request fields and headers are simply not required, never `T | null`:
    generated clients choke on nullable inputs. (A `null` sent is still accepted.)"""
    schemas = document.get("components", {}).get("schemas", {})
    seen: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            options = node.get("anyOf")
            if isinstance(options, list) and {"type": "null"} in options:
                rest = [o for o in options if o != {"type": "null"}]
                del node["anyOf"]
                if len(rest) == 1:
                    node.update(rest[0])
                else:
                    node["anyOf"] = rest
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name not in seen and name in schemas:
                    seen.add(name)
                    visit(schemas[name])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            visit(operation.get("requestBody"))
            visit([p for p in operation.get("parameters", []) if p.get("in") == "header"])


#: What `api.hygiene` refuses in a path or a query string (`400`), declared where a
#: parameter does not already say what its value may hold.
_NO_NUL = r"^[^\x00]*$"


_BAD_REQUEST = {"description": "Bad Request: the path or query string is not UTF-8 without NUL"}


def _no_nul_in_urls(document: dict[str, Any]) -> None:
    """Path and query parameters never hold NUL: the hygiene layer refuses the request
    (`400`) before any route, and the document says so."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if parameter.get("in") not in ("path", "query"):
                    continue
                operation["responses"].setdefault("400", dict(_BAD_REQUEST))
                if "pattern" in schema:
                    continue
                for option in schema.get("anyOf", [schema]):
                    if option.get("type") == "string" and "pattern" not in option:
                        option["pattern"] = _NO_NUL


_REPLAYED = {
    "description": "`true` when the answer is the stored answer to an earlier request with "
    "the same Idempotency-Key.",
    "schema": {"type": "string", "enum": ["true"]},
}
_RETRY_AFTER = {
    "description": "Seconds to wait before trying again.",
    "schema": {"type": "integer"},
}
_LOCATION = {"description": "The new run's address.", "schema": {"type": "string"}}


def _declared_headers(document: dict[str, Any]) -> None:
    """The headers answers carry: `Idempotent-Replayed` on every POST's success (POSTs
    honour Idempotency-Key), `Location` on a created run, `Retry-After` on 409, 429, 503."""
    for operations in document.get("paths", {}).values():
        for method, operation in operations.items():
            for status, response in operation.get("responses", {}).items():
                headers = response.setdefault("headers", {})
                if method == "post" and status.startswith("2"):
                    headers["Idempotent-Replayed"] = _REPLAYED
                if method == "post" and status == "201":
                    headers["Location"] = _LOCATION
                if status in ("409", "429", "503"):
                    headers["Retry-After"] = _RETRY_AFTER
                if not headers:
                    del response["headers"]


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
            )
            _no_nul_in_urls(document)
            _problem_responses_only(document)
            _no_null_in_requests(document)
            _declared_headers(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def openapi_json() -> str:
    """The document does not depend on the config: built from an empty one."""
    from app.main import create_app

    app = create_app(config=parse_config({}, builtin_tools={}))
    return json.dumps(app.openapi(), indent=2, sort_keys=False) + "\n"
