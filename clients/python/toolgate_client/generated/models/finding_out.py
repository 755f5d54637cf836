from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.diagnosis_category import DiagnosisCategory

T = TypeVar("T", bound="FindingOut")


@_attrs_define
class FindingOut:
    """
    Attributes:
        seq (int): The event that records it (`run.finished` for the terminal cause).
        category (DiagnosisCategory):
        explanation (str): One line, for people; not a contract to match on.
    """

    seq: int
    category: DiagnosisCategory
    explanation: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        category = self.category.value

        explanation = self.explanation

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "category": category,
                "explanation": explanation,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        seq = d.pop("seq")

        category = DiagnosisCategory(d.pop("category"))

        explanation = d.pop("explanation")

        finding_out = cls(
            seq=seq,
            category=category,
            explanation=explanation,
        )

        finding_out.additional_properties = d
        return finding_out

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
