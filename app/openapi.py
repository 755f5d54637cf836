"""The OpenAPI document, as served and as committed in openapi/openapi.json."""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.api.problems import PROBLEM_JSON
from app.api.schemas import Problem
from app.config.files import parse_config


def _problem_responses_only(document: dict[str, Any]) -> None:
    """Error responses are problem+json, never FastAPI's default JSON or its
    HTTPValidationError."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if status[0] in "45":
                    response["content"] = {
                        PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}
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
