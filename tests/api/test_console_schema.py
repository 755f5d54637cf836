"""The console's generated `schema.js` (its status lists and JSDoc types) is the one the
served OpenAPI document gives."""

from __future__ import annotations

from pathlib import Path

from app.cli import main
from app.console_schema import console_module
from tests.support.harness import Harness

GENERATED = Path(__file__).resolve().parents[2] / "app" / "static" / "console" / "schema.js"


async def test_generated_console_schema_equals_the_served_enums_and_schemas(
    harness: Harness,
) -> None:
    served = (await harness.client.get("/openapi.json")).json()
    assert console_module(served) == GENERATED.read_text(), "run `make openapi` and commit"


async def test_the_generated_lists_are_the_served_enums(harness: Harness) -> None:
    text = GENERATED.read_text()
    schemas = harness.app.openapi()["components"]["schemas"]
    for name, constant in (
        ("RunStatus", "RUN_STATUSES"),
        ("CallStatus", "CALL_STATUSES"),
        ("PreviewStatus", "PREVIEW_STATUSES"),
        ("EventType", "EVENT_TYPES"),
    ):
        items = "".join(f'  "{value}",\n' for value in schemas[name]["enum"])
        assert f"export const {constant} = Object.freeze([\n{items}]);" in text, name


def test_the_console_schema_command_prints_the_committed_module(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["console-schema"]) == 0
    assert capsys.readouterr().out == GENERATED.read_text()
