from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PendingApproval")


@_attrs_define
class PendingApproval:
    """
    Attributes:
        preview_id (str):
        call_id (str):
        tool (str):
        summary (str):
        expires_at (datetime.datetime):
    """

    preview_id: str
    call_id: str
    tool: str
    summary: str
    expires_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        preview_id = self.preview_id

        call_id = self.call_id

        tool = self.tool

        summary = self.summary

        expires_at = self.expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "preview_id": preview_id,
                "call_id": call_id,
                "tool": tool,
                "summary": summary,
                "expires_at": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        preview_id = d.pop("preview_id")

        call_id = d.pop("call_id")

        tool = d.pop("tool")

        summary = d.pop("summary")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        pending_approval = cls(
            preview_id=preview_id,
            call_id=call_id,
            tool=tool,
            summary=summary,
            expires_at=expires_at,
        )

        pending_approval.additional_properties = d
        return pending_approval

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
