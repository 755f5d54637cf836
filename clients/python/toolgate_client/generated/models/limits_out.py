from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="LimitsOut")


@_attrs_define
class LimitsOut:
    """
    Attributes:
        max_steps (int):
        deadline_s (float):
        max_tokens (int):
        max_cost_usd (float):
        max_tool_calls (int):
    """

    max_steps: int
    deadline_s: float
    max_tokens: int
    max_cost_usd: float
    max_tool_calls: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        max_steps = self.max_steps

        deadline_s = self.deadline_s

        max_tokens = self.max_tokens

        max_cost_usd = self.max_cost_usd

        max_tool_calls = self.max_tool_calls

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "max_steps": max_steps,
                "deadline_s": deadline_s,
                "max_tokens": max_tokens,
                "max_cost_usd": max_cost_usd,
                "max_tool_calls": max_tool_calls,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        max_steps = d.pop("max_steps")

        deadline_s = d.pop("deadline_s")

        max_tokens = d.pop("max_tokens")

        max_cost_usd = d.pop("max_cost_usd")

        max_tool_calls = d.pop("max_tool_calls")

        limits_out = cls(
            max_steps=max_steps,
            deadline_s=deadline_s,
            max_tokens=max_tokens,
            max_cost_usd=max_cost_usd,
            max_tool_calls=max_tool_calls,
        )

        limits_out.additional_properties = d
        return limits_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
