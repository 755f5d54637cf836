"""The scripted model's items as a request carries them (SPEC §5)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

#: Tokens one scripted turn may report.
MAX_TOKENS = 10**9


class StrictIn(BaseModel):
    """A request body part: unknown fields are errors, never ignored."""

    model_config = ConfigDict(extra="forbid")


class Usage(StrictIn):
    input_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS)
    output_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS)


class ScriptCall(StrictIn):
    id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    script: list[ScriptItem] | None = Field(
        default=None,
        max_length=1000,
        description="For a call to an `agent` tool whose agent is on a scripted model: "
        "the child run's script.",
    )


class ScriptToolCalls(StrictIn):
    type: Literal["tool_calls"]
    calls: list[ScriptCall]
    text: str | None = Field(
        default=None,
        max_length=2000,
        description="What the model writes beside its calls (its stated reason): kept on "
        "the turn (`turn.completed`'s `text`) and shown to approvers.",
    )
    usage: Usage | None = None
    delay_ms: int = Field(default=0, ge=0, le=600_000)


class ScriptFinal(StrictIn):
    type: Literal["final"]
    # Before `text`, whose check reads it: an error then names `text`, a field sent.
    data: Any = Field(
        default=None,
        description="The answer as a JSON value, which the scripted model sends as its JSON "
        "text, checked like any answer: for an agent with an `output_schema`, its document "
        "(`output.data`); for another agent, the answer's text. Give it or `text`, not both.",
    )
    text: str | None = Field(
        default=None,
        validate_default=True,
        description="The final answer. Give it or `data`.",
    )
    usage: Usage | None = None
    delay_ms: int = Field(default=0, ge=0, le=600_000)

    @field_validator("text")
    @classmethod
    def _text_or_data(cls, text: str | None, info: ValidationInfo) -> str | None:
        given = info.data.get("data") is not None
        if text is None and not given:
            raise ValueError("required: the answer as `text`, or as a JSON value in `data`")
        if text is not None and given:
            raise ValueError("give `text` or `data`, not both")
        return text


class ScriptError(StrictIn):
    type: Literal["error"]
    code: str = Field(min_length=1, max_length=100)
    retryable: bool = False
    message: str | None = Field(default=None, max_length=500)
    usage: Usage | None = Field(
        default=None,
        description="What the failed call was billed (a reply cut at its length limit, or "
        "billed past the run's budgets, as a replay carries it): charged to the run.",
    )
    delay_ms: int = Field(default=0, ge=0, le=600_000)


ScriptItem = Annotated[ScriptToolCalls | ScriptFinal | ScriptError, Field(discriminator="type")]

ScriptCall.model_rebuild()
