from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="LimitsIn")


@_attrs_define
class LimitsIn:
    """
    Attributes:
        max_steps (int | Unset):
        deadline_s (float | Unset):
        max_tokens (int | Unset):
        max_cost_usd (float | Unset):
        max_tool_calls (int | Unset):
    """

    max_steps: int | Unset = UNSET
    deadline_s: float | Unset = UNSET
    max_tokens: int | Unset = UNSET
    max_cost_usd: float | Unset = UNSET
    max_tool_calls: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_steps = self.max_steps

        deadline_s = self.deadline_s

        max_tokens = self.max_tokens

        max_cost_usd = self.max_cost_usd

        max_tool_calls = self.max_tool_calls

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_steps is not UNSET:
            field_dict["max_steps"] = max_steps
        if deadline_s is not UNSET:
            field_dict["deadline_s"] = deadline_s
        if max_tokens is not UNSET:
            field_dict["max_tokens"] = max_tokens
        if max_cost_usd is not UNSET:
            field_dict["max_cost_usd"] = max_cost_usd
        if max_tool_calls is not UNSET:
            field_dict["max_tool_calls"] = max_tool_calls

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        max_steps = d.pop("max_steps", UNSET)

        deadline_s = d.pop("deadline_s", UNSET)

        max_tokens = d.pop("max_tokens", UNSET)

        max_cost_usd = d.pop("max_cost_usd", UNSET)

        max_tool_calls = d.pop("max_tool_calls", UNSET)

        limits_in = cls(
            max_steps=max_steps,
            deadline_s=deadline_s,
            max_tokens=max_tokens,
            max_cost_usd=max_cost_usd,
            max_tool_calls=max_tool_calls,
        )

        return limits_in
