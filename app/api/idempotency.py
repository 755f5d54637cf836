"""Idempotency-Key at the HTTP edge: read and check the header, fingerprint the request,
then either replay a stored answer, refuse, or run the operation under a claim and store
what it answered."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Header, Request
from pydantic import BaseModel
from starlette.responses import JSONResponse, Response

from app.api.errors import render
from app.api.problems import ProblemError, from_domain
from app.db.access.idempotency import Answered
from app.domain.access.idempotency import KeySyntaxError, Verdict, fingerprint, parse_key
from app.domain.errors import DomainError
from app.domain.tools.specs import Principal
from app.engine.access import idempotency
from app.engine.access.idempotency import Claim, ClaimLost, KeyTaken, Replay
from app.engine.process.runtime import Runtime

log = logging.getLogger(__name__)
HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
#: Headers of a stored answer that a replay repeats.
KEPT_HEADERS = ("location", "content-type")

Operation = Callable[[Claim | None], Awaitable[JSONResponse]]
#: What a replay answers, made from the stored answer (a part the record does not keep
#: read again from where it lives); it may refuse, as a `DomainError`.
Replayed = Callable[[Replay], Awaitable[Replay]]

_KEY_DOC = (
    '1–255 visible ASCII characters (the quoted form `"abc"` is the same key). A retry '
    "with the same key and body replays the first answer (`Idempotent-Replayed: true`)."
)
# Typed `str` with a None default, not `str | None`: optional without a `null` union in the
# document (generated clients choke on nullable header parameters).
#: The key's syntax, declared in the document but checked by `parse_key` (a bad key is a
#: `400 bad-request` problem, as SPEC §3.6 says, not a field-validation error): bare, or
#: quoted, visible ASCII without `"`.
_KEY_SCHEMA = {"minLength": 1, "maxLength": 257, "pattern": '^([!#-~]{1,255}|"[!#-~]{1,255}")$'}
IdempotencyKey = Annotated[
    str, Header(alias="Idempotency-Key", description=_KEY_DOC, json_schema_extra=_KEY_SCHEMA)
]
RequiredIdempotencyKey = Annotated[
    str,
    Header(
        alias="Idempotency-Key", description="Required. " + _KEY_DOC, json_schema_extra=_KEY_SCHEMA
    ),
]


def shown_once(field: str) -> Callable[[Any], Any]:
    """A `kept` for an answer whose `field` is a secret shown once: the key's record stores
    the answer without it, and a replay answers it as null."""

    def kept(body: Any) -> Any:
        return {**body, field: None} if isinstance(body, dict) else body

    return kept


def answered(response: Response) -> Answered:
    """A response as a key's record keeps it (and a replay answers it)."""
    headers = {k: v for k, v in response.headers.items() if k.lower() in KEPT_HEADERS}
    return Answered(response.status_code, headers, bytes(response.body).decode())


def _key(request: Request, *, required: bool) -> str | None:
    raw = request.headers.get(HEADER)
    if raw is None:
        if required:
            raise ProblemError(
                "idempotency-key-missing", f"this operation requires an {HEADER} header"
            )
        return None
    try:
        return parse_key(raw)
    except KeySyntaxError as exc:
        raise ProblemError("bad-request", str(exc)) from None


async def _body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        return None
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise ProblemError("bad-request", "the body is not valid JSON") from None


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Python's parser accepts them, Postgres' jsonb does not.
    raise ValueError(name)


async def run_idempotent(
    request: Request,
    rt: Runtime,
    principal: Principal,
    operation: Operation,
    *,
    required: bool,
    creates: bool = False,
    validated: BaseModel | None = None,
    kept: Callable[[Any], Any] | None = None,
    replayed: Replayed | None = None,
) -> Response:
    """`creates`: the operation creates its resource in one transaction that can bind a
    deferred claim, so a first request writes its key there and nowhere else.
    `validated`: the request's body as validated. The fingerprint is taken over it (defaults
    filled in, numbers by value), so that a client writing a default out, or `10.0` for
    `10`, sends the same request (SPEC §3.6). `kept`: what of the answer's body the key's
    record stores, and a replay answers (a secret shown once is left out). `replayed`: what
    a replay answers instead of the stored answer as it is (a secret left out of the
    record, read again from its resource; or a refusal once it may no longer be shown)."""
    key = _key(request, required=required)
    if key is None:
        return await operation(None)
    if validated is not None:
        # Parsed, and refused if it held NaN or an infinity, on its way to validation.
        body = validated.model_dump(mode="json")
    else:
        body = await _body(request)  # also refuses what JSON does not allow (NaN, Infinity)
    request_print = fingerprint(request.method, request.scope["path"], body)
    if creates:
        claim = idempotency.defer(
            rt, tenant_id=principal.tenant_id, key=key, fingerprint=request_print
        )
        try:
            return await _run_claimed(rt, claim, operation, request, kept)
        except KeyTaken:
            pass  # the key has a record: judge it the ordinary way
        except DomainError:
            # Refused before the key was looked at: a record of the key still answers
            # first (a replay, or the key reused for another request), as SPEC §3.6 says.
            earlier = await idempotency.look(
                rt, tenant_id=principal.tenant_id, key=key, fingerprint=request_print
            )
            if earlier is None:
                raise
            return await _answer(earlier, replayed)
    outcome = await idempotency.begin(
        rt, tenant_id=principal.tenant_id, key=key, fingerprint=request_print
    )
    if isinstance(outcome, Claim):
        return await _run_claimed(rt, outcome, operation, request, kept)
    return await _answer(outcome, replayed)


async def _abandon(rt: Runtime, claim: Claim) -> None:
    try:
        await idempotency.abandon(rt, claim)
    except Exception:  # the database is out: freed once it is back
        rt.deferred.owe(lambda: idempotency.abandon(rt, claim))


async def _answer(outcome: Replay | Verdict, replayed: Replayed | None = None) -> Response:
    """The answer a request gets from an earlier request's record of its key."""
    if isinstance(outcome, Replay):
        if replayed is not None:
            outcome = await replayed(outcome)
        return JSONResponse(
            outcome.body, status_code=outcome.status, headers={**outcome.headers, REPLAYED: "true"}
        )
    if outcome is Verdict.REUSED:
        raise ProblemError(
            "idempotency-key-reused", f"this {HEADER} was used for a different request"
        )
    raise ProblemError(
        "idempotency-key-in-flight",
        f"a request with this {HEADER} is still in progress",
        headers={"Retry-After": "1"},
    )


async def _run_claimed(
    rt: Runtime,
    claim: Claim,
    operation: Operation,
    request: Request,
    kept: Callable[[Any], Any] | None = None,
) -> Response:
    try:
        response = await operation(claim)
    except DomainError as error:
        if not error.settled:
            await _abandon(rt, claim)
            raise
        # Refused after the use case changed state: the answer is kept like a success's,
        # so a retry under the key hears the same, not what the new state would say.
        response = render(request, from_domain(error))
    except ClaimLost:
        # Our claim was taken over (we were slower than its lock): the other holder answers.
        raise ProblemError(
            "idempotency-key-in-flight",
            f"a request with this {HEADER} is still in progress",
            headers={"Retry-After": "1"},
        ) from None
    except KeyTaken:
        raise
    except Exception:
        await _abandon(rt, claim)
        raise
    kept_answer = answered(response)
    # Kept as the response carried it, unless part of it is a secret shown only once.
    body = kept_answer.body
    if kept is not None:
        body = json.dumps(kept(json.loads(body)))

    async def complete() -> None:
        await idempotency.complete(
            rt, claim, status=response.status_code, headers=kept_answer.headers, body=body
        )

    try:
        await complete()
    except Exception:
        # The answer is still right; it is stored as soon as the database takes it, so a
        # retry is answered from it then.
        log.info("an idempotent answer is stored once the database is back")
        rt.deferred.owe(complete)
    return response
