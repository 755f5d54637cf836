"""JSON answers encoded by orjson: a run's answer is the biggest JSON a request makes, and
the standard library's encoder was a tenth of a request's CPU. Same bytes in all but
number spelling (`1e16`, not `1e+16`); what orjson refuses (an integer wider than 64
bits) goes through the standard encoder."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import JSONResponse


class FastJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        try:
            return orjson.dumps(content)
        except TypeError:
            return super().render(content)
