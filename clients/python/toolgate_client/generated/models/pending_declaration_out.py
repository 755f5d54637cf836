from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.pending_declaration_out_annotations_type_0 import (
        PendingDeclarationOutAnnotationsType0,
    )


T = TypeVar("T", bound="PendingDeclarationOut")


@_attrs_define
class PendingDeclarationOut:
    """An MCP tool's declaration as its server lists it now, held until an admin accepts
    it (`POST /v1/tools/{name}/accept`): it differs from the pinned one, or was refused at
    first sight.

        Attributes:
            declaration_hash (str): What `accept` must send back.
            description (None | str):
            input_schema (Any):
            output_schema (Any):
            annotations (None | PendingDeclarationOutAnnotationsType0):
            held_for (list[str]): Why it is held: `changed` (differs from the pinned declaration), `description_too_long`,
                `schema_too_large`, `annotations_too_large`, `injection_suspected`, `invalid_schema` (cannot be accepted).
            seen_at (datetime.datetime | None):
    """

    declaration_hash: str
    description: None | str
    input_schema: Any
    output_schema: Any
    annotations: None | PendingDeclarationOutAnnotationsType0
    held_for: list[str]
    seen_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.pending_declaration_out_annotations_type_0 import (
            PendingDeclarationOutAnnotationsType0,
        )

        declaration_hash = self.declaration_hash

        description: None | str
        description = self.description

        input_schema = self.input_schema

        output_schema = self.output_schema

        annotations: dict[str, Any] | None
        if isinstance(self.annotations, PendingDeclarationOutAnnotationsType0):
            annotations = self.annotations.to_dict()
        else:
            annotations = self.annotations

        held_for = self.held_for

        seen_at: None | str
        if isinstance(self.seen_at, datetime.datetime):
            seen_at = self.seen_at.isoformat()
        else:
            seen_at = self.seen_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "declaration_hash": declaration_hash,
                "description": description,
                "input_schema": input_schema,
                "output_schema": output_schema,
                "annotations": annotations,
                "held_for": held_for,
                "seen_at": seen_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.pending_declaration_out_annotations_type_0 import (
            PendingDeclarationOutAnnotationsType0,
        )

        d = dict(src_dict)
        declaration_hash = d.pop("declaration_hash")

        def _parse_description(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        description = _parse_description(d.pop("description"))

        input_schema = d.pop("input_schema")

        output_schema = d.pop("output_schema")

        def _parse_annotations(
            data: object,
        ) -> None | PendingDeclarationOutAnnotationsType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                annotations_type_0 = PendingDeclarationOutAnnotationsType0.from_dict(
                    data
                )

                return annotations_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PendingDeclarationOutAnnotationsType0, data)

        annotations = _parse_annotations(d.pop("annotations"))

        held_for = cast(list[str], d.pop("held_for"))

        def _parse_seen_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                seen_at_type_0 = datetime.datetime.fromisoformat(data)

                return seen_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        seen_at = _parse_seen_at(d.pop("seen_at"))

        pending_declaration_out = cls(
            declaration_hash=declaration_hash,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=annotations,
            held_for=held_for,
            seen_at=seen_at,
        )

        pending_declaration_out.additional_properties = d
        return pending_declaration_out

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
