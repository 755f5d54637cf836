from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ApproveIn")


@_attrs_define
class ApproveIn:
    """
    Attributes:
        content_hash (str): The preview's `content_hash` as reviewed.
    """

    content_hash: str

    def to_dict(self) -> dict[str, Any]:
        content_hash = self.content_hash

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "content_hash": content_hash,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        content_hash = d.pop("content_hash")

        approve_in = cls(
            content_hash=content_hash,
        )

        return approve_in
