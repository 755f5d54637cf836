from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UsageOut")


@_attrs_define
class UsageOut:
    """
    Attributes:
        steps (int):
        input_tokens (int):
        output_tokens (int):
        cost_usd (float):
        tool_calls (int):
    """

    steps: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    tool_calls: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        steps = self.steps

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        cost_usd = self.cost_usd

        tool_calls = self.tool_calls

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "steps": steps,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cost_usd": cost_usd,
                "tool_calls": tool_calls,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        steps = d.pop("steps")

        input_tokens = d.pop("input_tokens")

        output_tokens = d.pop("output_tokens")

        cost_usd = d.pop("cost_usd")

        tool_calls = d.pop("tool_calls")

        usage_out = cls(
            steps=steps,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
            tool_calls=tool_calls,
        )

        usage_out.additional_properties = d
        return usage_out

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
