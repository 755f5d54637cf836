"""The committed OpenAPI document is the one the app serves."""

from __future__ import annotations

import json
from pathlib import Path

from app.api.problems import PROBLEM_TYPES
from app.openapi import openapi_json
from tests.support.harness import DEFAULT_AGENT, Harness, make_config

COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


async def test_committed_openapi_equals_the_served_document(harness: Harness) -> None:
    served = (await harness.client.get("/openapi.json")).json()
    assert json.loads(COMMITTED.read_text()) == served, "run `make openapi` and commit the result"


def test_openapi_command_prints_the_committed_document() -> None:
    assert openapi_json() == COMMITTED.read_text()


async def test_document_does_not_depend_on_the_config(harness_factory) -> None:  # type: ignore[no-untyped-def]
    agent = {**DEFAULT_AGENT, "tools": ["get_technology"]}
    h = await harness_factory(config=make_config({"zz-unusual-agent": agent}))
    response = await h.client.get("/openapi.json")
    assert "zz-unusual-agent" not in response.text
    assert response.json() == json.loads(COMMITTED.read_text())


def _operations(document: dict) -> list[tuple[str, str, dict]]:  # type: ignore[type-arg]
    return [
        (method.upper(), path, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


def test_every_post_documents_the_idempotency_key() -> None:
    document = json.loads(COMMITTED.read_text())
    posts = [(p, op) for m, p, op in _operations(document) if m == "POST"]
    assert posts
    for path, operation in posts:
        headers = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
        assert "Idempotency-Key" in headers, path
    create = document["paths"]["/v1/runs"]["post"]
    [key] = [p for p in create["parameters"] if p["name"] == "Idempotency-Key"]
    assert key["required"] is True


def test_every_operation_documents_problem_responses_only_as_problem_json() -> None:
    document = json.loads(COMMITTED.read_text())
    assert "HTTPValidationError" not in json.dumps(document)
    for method, path, operation in _operations(document):
        errors = {s: r for s, r in operation["responses"].items() if s[0] in "45"}
        assert "500" in errors and "503" in errors, (method, path)
        for status, response in errors.items():
            assert list(response["content"]) == ["application/problem+json"], (method, path, status)
    problem = document["components"]["schemas"]["Problem"]
    assert {"type", "title", "status", "detail", "instance", "code", "trace_id"} <= set(
        problem["required"]
    )


def test_main_bodies_carry_examples() -> None:
    schemas = json.loads(COMMITTED.read_text())["components"]["schemas"]
    for name in ("CreateRunIn", "RunOut"):
        assert schemas[name].get("examples"), name


def test_each_error_status_shows_examples_of_its_own_problem_types() -> None:
    """Not one example for every status: each error response's examples carry that status
    and a problem type of the table for it, valid against the Problem schema."""
    from jsonschema import Draft202012Validator

    document = json.loads(COMMITTED.read_text())
    components = document["components"]
    validator = Draft202012Validator({**components["schemas"]["Problem"], "components": components})
    seen: set[str] = set()
    for method, path, operation in _operations(document):
        for status, response in operation["responses"].items():
            if status[0] not in "45":
                continue
            examples = response["content"]["application/problem+json"].get("examples")
            assert examples, (method, path, status)
            for slug, example in examples.items():
                value = example["value"]
                assert value["status"] == int(status), (method, path, status, slug)
                assert PROBLEM_TYPES[value["code"]].status == int(status), (method, path, slug)
                assert slug == value["code"] and value["type"].endswith(f"/problems/{slug}")
                assert slug in response["description"], (method, path, status)
                assert not list(validator.iter_errors(value)), (method, path, status, slug)
                seen.add(slug)
    # Every problem type is shown somewhere, but 405: it answers a method no operation has.
    assert seen == set(PROBLEM_TYPES) - {"method-not-allowed"}
    approve = document["paths"]["/v1/previews/{preview_id}/approve"]["post"]["responses"]
    assert "preview-mismatch" in approve["409"]["content"]["application/problem+json"]["examples"]
    create = document["paths"]["/v1/runs"]["post"]["responses"]["409"]
    assert "preview-mismatch" not in create["content"]["application/problem+json"]["examples"]


def test_every_example_in_the_document_validates_against_its_own_schema() -> None:
    from jsonschema import Draft202012Validator

    document = json.loads(COMMITTED.read_text())
    components = document["components"]
    checked = 0
    for name, schema in components["schemas"].items():
        for example in schema.get("examples", []):
            validator = Draft202012Validator({**schema, "components": components})
            errors = [
                f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(example)
            ]
            assert not errors, (name, errors)
            checked += 1
    assert checked >= 3


def test_the_contract_suits_generated_clients() -> None:
    document = json.loads(COMMITTED.read_text())
    operations = [op for ops in document["paths"].values() for op in ops.values()]
    ids = {op["operationId"] for op in operations}
    assert {"create_run", "list_run_events", "commit_preview", "get_me"} <= ids
    assert all("_v1_" not in i and not i.endswith(("_get", "_post")) for i in ids)
    for op in operations:
        for parameter in op.get("parameters", []):
            if parameter["in"] == "header":
                assert "null" not in json.dumps(parameter), op["operationId"]
        assert "null" not in json.dumps(op.get("requestBody", {})), op["operationId"]
    create = document["paths"]["/v1/runs"]["post"]["responses"]["201"]["headers"]
    assert {"Location", "Idempotent-Replayed"} <= set(create)
    unavailable = document["paths"]["/v1/runs"]["get"]["responses"]["503"]["headers"]
    assert "Retry-After" in unavailable
    problem = document["components"]["schemas"]["Problem"]["properties"]["errors"]
    assert problem["items"] == {"$ref": "#/components/schemas/FieldErrorOut"}
    ready = document["paths"]["/readyz"]["get"]["responses"]["200"]["content"]
    assert ready["application/json"]["schema"] == {"$ref": "#/components/schemas/ReadyOut"}
    schemas = document["components"]["schemas"]
    enums = {"RunStatus", "TerminationReason", "CallStatus", "PreviewStatus", "EventType"}
    assert all("enum" in schemas[name] for name in enums)
    assert schemas["RunOut"]["properties"]["status"] == {"$ref": "#/components/schemas/RunStatus"}
    assert schemas["CallOut"]["properties"]["status"] == {"$ref": "#/components/schemas/CallStatus"}
    assert schemas["EventOut"]["properties"]["type"] == {"$ref": "#/components/schemas/EventType"}
    reason = schemas["RunOut"]["properties"]["termination_reason"]
    assert {"$ref": "#/components/schemas/TerminationReason"} in reason["anyOf"]


async def test_the_docs_page_says_how_to_get_a_key_and_where_the_console_is(
    harness: Harness,
) -> None:
    """`/docs` shows the document's description first: a new user reads there how to get
    a key (make run, the CLI, POST /v1/keys) and that the console exists."""
    served = (await harness.client.get("/openapi.json")).json()["info"]["description"]
    for told in ("make run", "python -m app keys create", "POST /v1/keys", "/console"):
        assert told in served
    assert (await harness.client.get("/console")).status_code == 200
