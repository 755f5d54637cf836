from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="AcceptIn")


@_attrs_define
class AcceptIn:
    """
    Attributes:
        declaration_hash (str): The pending declaration's `declaration_hash`, as reviewed.
    """

    declaration_hash: str

    def to_dict(self) -> dict[str, Any]:
        declaration_hash = self.declaration_hash

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "declaration_hash": declaration_hash,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        declaration_hash = d.pop("declaration_hash")

        accept_in = cls(
            declaration_hash=declaration_hash,
        )

        return accept_in
