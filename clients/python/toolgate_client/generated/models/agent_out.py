from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.limits_out import LimitsOut


T = TypeVar("T", bound="AgentOut")


@_attrs_define
class AgentOut:
    """
    Attributes:
        name (str):
        model (str):
        instructions (str):
        tools (list[str]):
        limits (LimitsOut):
    """

    name: str
    model: str
    instructions: str
    tools: list[str]
    limits: LimitsOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        model = self.model

        instructions = self.instructions

        tools = self.tools

        limits = self.limits.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "model": model,
                "instructions": instructions,
                "tools": tools,
                "limits": limits,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.limits_out import LimitsOut

        d = dict(src_dict)
        name = d.pop("name")

        model = d.pop("model")

        instructions = d.pop("instructions")

        tools = cast(list[str], d.pop("tools"))

        limits = LimitsOut.from_dict(d.pop("limits"))

        agent_out = cls(
            name=name,
            model=model,
            instructions=instructions,
            tools=tools,
            limits=limits,
        )

        agent_out.additional_properties = d
        return agent_out

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
