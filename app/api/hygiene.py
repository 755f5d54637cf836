"""Request hygiene: what no request may carry, refused before any route sees it — in the
path, the query string and the header values (`refusal`, asked by the outermost
middleware: 400 bad-request), and in a JSON body (`RequestBody`, the base of every body
schema: 422 validation-error naming the field). Postgres cannot store U+0000 in text or
jsonb and UTF-8 has no form for a lone surrogate: let through, either fails the first
database write that meets it, as a 500."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_to_bytes

from pydantic import ValidationError, ValidatorFunctionWrapHandler, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError
from starlette.types import Scope

from app.api.schemas.script_items import StrictIn
from app.domain.tools.specs import first_path, scan, unstorable

#: How deep a request body may nest: the schemas need a few levels, free-form JSON
#: (metadata, script arguments) is held to 32 of its own further down.
MAX_BODY_DEPTH = 64

# RFC 9110 §5.5: a field value holds no control character but HTAB. Also refused: the
# bytes UTF-8 would give a lone surrogate (ED A0..BF xx), which decode to nothing valid.
_BAD_HEADER_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]|\xed[\xa0-\xbf]")
# RFC 9112 §3.2: uri-host [":" port], else 400.
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::[0-9]*)?")


def refusal(scope: Scope) -> str | None:
    """Why the request's path, query string or headers cannot be served, or None."""
    raw_path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogatepass")
    if not _clean(raw_path):
        return "the path is not percent-encoded UTF-8 without NUL"
    if not _clean(scope.get("query_string", b"")):
        return "the query string is not percent-encoded UTF-8 without NUL"
    hosts = [value for name, value in scope.get("headers", []) if name == b"host"]
    if len(hosts) > 1 or (hosts and not _HOST.fullmatch(hosts[0].decode("latin-1"))):
        return "the Host header is not one valid host"
    for name, value in scope.get("headers", []):
        if _BAD_HEADER_VALUE.search(value):
            name_shown = name.decode("latin-1")[:64]
            return f"the {name_shown} header holds a control character or a lone surrogate"
    return None


def _clean(raw: bytes) -> bool:
    """Whether `raw`, percent-decoded, is UTF-8 without NUL (an overlong or a surrogate
    encoding is not UTF-8 either)."""
    try:
        return "\x00" not in unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False


class RequestBody(StrictIn):
    """A whole request body: besides its schema, it nests at most MAX_BODY_DEPTH levels,
    and no string or key anywhere in it holds U+0000 or a lone surrogate, no number is
    infinite (`1e400`) — checked on the body as sent, so the error names the field. NaN
    is not JSON at all (Python's parser takes it): refused as malformed JSON, 400."""

    @model_validator(mode="wrap")
    @classmethod
    def _storable(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        depth, nan, bad = scan(data)  # one walk; the paths only for a body that needs one
        if nan:
            # The type the error handler answers as malformed JSON.
            raise _invalid(cls, [], "NaN is not JSON", kind="json_invalid")
        if depth > MAX_BODY_DEPTH:
            raise _invalid(cls, [], f"the body may nest at most {MAX_BODY_DEPTH} levels")
        if bad:
            where = first_path(data, unstorable) or []
            raise _invalid(cls, where, "must not hold U+0000, a lone surrogate or an infinity")
        return handler(data)


def _invalid(
    model: type, where: list[str | int], message: str, kind: str = "unstorable"
) -> ValidationError:
    error = PydanticCustomError(kind, message)
    return ValidationError.from_exception_data(
        model.__name__, [InitErrorDetails(type=error, loc=tuple(where), input=None)]
    )
