"""Typed final output without a server: the check of an answer against an agent's
`output_schema` (what fits, and the reasons for what does not), the config's refusal of a
schema that is no JSON Schema, and the strictness of the OpenAI response format for
schemas as Pydantic generates them."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from app.adapters.model.openai import response_format
from app.adapters.tools.builtin.tech_radar import SPECS
from app.config.files import ConfigError, load_config
from app.domain.model.typed_output import MAX_ERRORS, OutputSchema, check

RING = {
    "type": "object",
    "additionalProperties": False,
    "required": ["ring"],
    "properties": {"ring": {"type": "string", "enum": ["adopt", "trial", "assess", "hold"]}},
}
JUDGE_YAML = """
models:
  small: {provider: scripted}
agents:
  ring-judge:
    model: small
    instructions: Say which ring a technology belongs in.
    tools: [search_technologies]
    output_schema: {type: object, additionalProperties: false, required: [ring],
                    properties: {ring: {type: string, enum: [adopt, trial, assess, hold]}}}
"""


def test_an_answer_that_fits_is_its_document() -> None:
    typed = check('{"ring": "hold"}', RING)
    assert typed.fits and typed.data == {"ring": "hold"}
    # Models fence JSON unasked: the document inside one fence is read.
    assert check('```json\n{"ring": "adopt"}\n```', RING).data == {"ring": "adopt"}
    assert check('```\n{"ring": "adopt"}\n```', RING).data == {"ring": "adopt"}


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        ("The ring is hold.", "", "not a JSON document (at character 0)"),
        ('{"ring": "hold"', "", "not a JSON document"),
        ("{}", "", "'ring' is a required property"),
        ('{"ring": 3}', "/ring", "3 is not of type 'string'"),
        ('["hold"]', "", "is not of type 'object'"),
    ],
)
def test_an_answer_that_does_not_fit_says_where_and_why(text: str, path: str, words: str) -> None:
    typed = check(text, RING)
    assert not typed.fits and typed.data is None
    assert typed.errors[0].path == path and words in typed.errors[0].message
    assert words in typed.message()


def test_the_reasons_are_few_short_and_point_into_the_document() -> None:
    schema = {
        "type": "object",
        "properties": {"a/b~c": {"type": "array", "items": {"type": "integer"}}},
    }
    typed = check('{"a/b~c": [1, "x", "y", "z", "' + "w" * 500 + '"]}', schema)
    assert len(typed.errors) == MAX_ERRORS
    assert [e.path for e in typed.errors][:2] == ["/a~1b~0c/1", "/a~1b~0c/2"]
    assert all(len(e.message) <= 120 for e in typed.errors)


def test_the_agent_field_loads_and_a_bad_schema_is_refused_by_its_key_path(
    tmp_path: Path,
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(JUDGE_YAML)
    config = load_config(good, builtin_tools=SPECS)
    assert config.agents["ring-judge"].output_schema == RING

    bad = tmp_path / "bad.yaml"
    bad.write_text(JUDGE_YAML.replace("required: [ring]", "required: ring"))
    with pytest.raises(ConfigError) as refused:
        load_config(bad, builtin_tools=SPECS)
    assert refused.value.path == "agents.ring-judge.output_schema"
    assert "not a valid JSON Schema" in refused.value.message


class Reason(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


class Verdict(BaseModel):
    """As a user of an SDK's `output_type` would declare it: closed, every field required."""

    model_config = ConfigDict(extra="forbid")
    ring: Literal["adopt", "trial", "assess", "hold"]
    reasons: list[Reason]


class LooseVerdict(BaseModel):
    ring: str
    note: str = ""  # optional, and the object is open: strict mode cannot take it


def test_a_pydantic_models_schema_is_sent_strict_when_it_is_closed_and_all_required() -> None:
    schema = Verdict.model_json_schema()
    sent = response_format(OutputSchema("ring-judge", schema))
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": "ring-judge", "schema": schema, "strict": True},
    }
    loose = response_format(OutputSchema("ring-judge", LooseVerdict.model_json_schema()))
    assert loose["json_schema"]["strict"] is False
    # And the check reads what the SDK's model would: the same document validates in both.
    answer = '{"ring": "trial", "reasons": [{"text": "two teams run it"}]}'
    assert Verdict.model_validate(check(answer, schema).data).ring == "trial"


@pytest.mark.parametrize(
    "text",
    [
        '{"ring": NaN}',  # Python's parser takes it; JSON and jsonb do not
        '{"ring": "adopt\\u0000"}',  # a NUL Postgres cannot store
        '{"ring": "\\ud800"}',  # a lone surrogate has no UTF-8 form
        "[" * 100 + "]" * 100,  # deeper than any output may nest
        "[" * 5000 + "]" * 5000,  # deeper than the parser recurses
    ],
)
def test_an_answer_that_could_not_be_kept_is_rejected_not_stored(text: str) -> None:
    typed = check(text, {})
    assert not typed.fits and typed.data is None
    assert typed.errors[0].path == ""
