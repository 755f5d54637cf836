"""The OpenAPI document, as served and as committed in openapi/openapi.json."""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.api.problems import PROBLEM_JSON
from app.api.schemas import Problem
from app.config import parse_config


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
    schemas["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")


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
            _problem_responses_only(document)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def openapi_json() -> str:
    """The document does not depend on the config: built from an empty one."""
    from app.main import create_app

    app = create_app(config=parse_config({}, builtin_tools={}))
    return json.dumps(app.openapi(), indent=2, sort_keys=False) + "\n"
