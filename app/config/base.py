"""What every part of the YAML config's models shares: plain scalar types and strictness."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.domain.tools import schema_validator

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"

# Agent, route and tool names appear in URLs, logs and model tool lists: keep them plain.
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
PosInt = Annotated[int, Field(ge=1)]
# Finite only: YAML spells infinity `.inf`, and an infinite budget is no budget.
PosFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
URL_PATTERN = r"^https?://[^\s/]+\S*$"
ENV_VAR_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
HttpUrl = Annotated[str, StringConstraints(pattern=URL_PATTERN)]
EnvVarName = Annotated[str, StringConstraints(pattern=ENV_VAR_PATTERN)]


class Strict(BaseModel):
    # strict: YAML already types its scalars, so "8" for an integer or "no" quoted for a bool
    # is a mistake to report, not to coerce. extra=forbid: a typo is an error naming its path.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


def check_schema(value: dict[str, Any]) -> dict[str, Any]:
    why = schema_validator.problem(value)
    if why is not None:
        raise ValueError(why)
    return value


def object_input_schema(value: dict[str, Any]) -> dict[str, Any]:
    check_schema(value)
    # Unknown properties must be refused, so that a model cannot smuggle parameters.
    if value.get("type") != "object" or value.get("additionalProperties") is not False:
        raise ValueError("must be an object schema with additionalProperties: false")
    return value
