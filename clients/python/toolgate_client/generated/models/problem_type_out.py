from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ProblemTypeOut")


@_attrs_define
class ProblemTypeOut:
    """
    Attributes:
        type_ (str):
        code (str):
        status (int):
        title (str):
        meaning (str):
        action (str):
    """

    type_: str
    code: str
    status: int
    title: str
    meaning: str
    action: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        code = self.code

        status = self.status

        title = self.title

        meaning = self.meaning

        action = self.action

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "code": code,
                "status": status,
                "title": title,
                "meaning": meaning,
                "action": action,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = d.pop("type")

        code = d.pop("code")

        status = d.pop("status")

        title = d.pop("title")

        meaning = d.pop("meaning")

        action = d.pop("action")

        problem_type_out = cls(
            type_=type_,
            code=code,
            status=status,
            title=title,
            meaning=meaning,
            action=action,
        )

        problem_type_out.additional_properties = d
        return problem_type_out

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
