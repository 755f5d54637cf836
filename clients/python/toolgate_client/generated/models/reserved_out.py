from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ReservedOut")


@_attrs_define
class ReservedOut:
    """
    Attributes:
        tokens (int):
        cost_usd (float):
        tool_calls (int):
    """

    tokens: int
    cost_usd: float
    tool_calls: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        tokens = self.tokens

        cost_usd = self.cost_usd

        tool_calls = self.tool_calls

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "tokens": tokens,
                "cost_usd": cost_usd,
                "tool_calls": tool_calls,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        tokens = d.pop("tokens")

        cost_usd = d.pop("cost_usd")

        tool_calls = d.pop("tool_calls")

        reserved_out = cls(
            tokens=tokens,
            cost_usd=cost_usd,
            tool_calls=tool_calls,
        )

        reserved_out.additional_properties = d
        return reserved_out

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
