"""How long checking a typical tool's I/O against its JSON Schema takes.

    PYTHONPATH=. .venv/bin/python bench/bench_schema.py [--rounds N]

The demo's search tool: its arguments (three properties) and its output (five items of
five strings each), each valid and invalid (a wrong type deep inside, and a missing
property), checked by the service's validator (`domain.tools.schema_validator`: jsonschema-rs,
the compiled validator cached per schema) and, for reference, by Python's `jsonschema`
(Draft 2020-12, the validator built once). A valid value is asked whether it fits; an
invalid one for its errors, as the tool path does. Figures: the median of five runs of
`--rounds` checks each, in microseconds a check.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator

from app.adapters.tools.builtin.tech_radar import SEARCH_SPEC
from app.domain.tools import schema_validator

INPUT = SEARCH_SPEC.input_schema
OUTPUT = SEARCH_SPEC.output_schema or {}

ITEM = {
    "id": "t1",
    "name": "Postgres",
    "category": "platforms",
    "ring": "adopt",
    "summary": "The relational database of choice.",
}
CASES: list[tuple[str, Any, Any, bool]] = [
    ("arguments, valid", INPUT, {"query": "postgres", "ring": "adopt", "limit": 5}, True),
    ("arguments, invalid", INPUT, {"query": 5, "limit": 50}, False),
    ("output of 5 items, valid", OUTPUT, {"items": [ITEM] * 5, "total": 5}, True),
    (
        "output of 5 items, invalid",
        OUTPUT,
        {"items": [ITEM] * 4 + [{**ITEM, "ring": "maybe"}], "total": "5"},
        False,
    ),
]


def _per_check_us(check: Callable[[], Any], rounds: int) -> float:
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(rounds):
            check()
        runs.append((time.perf_counter() - started) / rounds * 1e6)
    return statistics.median(runs)


def _kept(schema: Any, value: Any, valid: bool) -> Callable[[], Any]:
    if valid:
        return lambda: schema_validator.fits(schema, value)
    return lambda: schema_validator.errors(schema, value)


def _reference(schema: Any, value: Any, valid: bool) -> Callable[[], Any]:
    validator = Draft202012Validator(schema)
    if valid:
        return lambda: validator.is_valid(value)
    return lambda: list(validator.iter_errors(value))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    print(f"{'case':<28} {'kept validator µs':>18} {'jsonschema µs':>14}")
    for name, schema, value, valid in CASES:
        assert schema_validator.fits(schema, value) is valid, name
        kept = _per_check_us(_kept(schema, value, valid), rounds)
        reference = _per_check_us(_reference(schema, value, valid), rounds)
        print(f"{name:<28} {kept:>18.1f} {reference:>14.1f}")


if __name__ == "__main__":
    main()
