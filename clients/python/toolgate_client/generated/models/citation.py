from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Citation")


@_attrs_define
class Citation:
    """
    Attributes:
        source_id (str):
        tool (str):
        observed_at (None | str):
        source_version (None | str):
    """

    source_id: str
    tool: str
    observed_at: None | str
    source_version: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source_id = self.source_id

        tool = self.tool

        observed_at: None | str
        observed_at = self.observed_at

        source_version: None | str
        source_version = self.source_version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "source_id": source_id,
                "tool": tool,
                "observed_at": observed_at,
                "source_version": source_version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        source_id = d.pop("source_id")

        tool = d.pop("tool")

        def _parse_observed_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        observed_at = _parse_observed_at(d.pop("observed_at"))

        def _parse_source_version(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        source_version = _parse_source_version(d.pop("source_version"))

        citation = cls(
            source_id=source_id,
            tool=tool,
            observed_at=observed_at,
            source_version=source_version,
        )

        citation.additional_properties = d
        return citation

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
