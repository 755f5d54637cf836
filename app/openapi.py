"""The OpenAPI document, as served and as committed in openapi/openapi.json."""

from __future__ import annotations

import json

from app.config import parse_config


def openapi_json() -> str:
    """The document does not depend on the config: built from an empty one."""
    from app.main import create_app

    app = create_app(config=parse_config({}, builtin_tools={}))
    return json.dumps(app.openapi(), indent=2, sort_keys=False) + "\n"
