from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.pending_declaration_out import PendingDeclarationOut
    from ..models.tool_out_input_schema import ToolOutInputSchema
    from ..models.tool_out_output_schema_type_0 import ToolOutOutputSchemaType0


T = TypeVar("T", bound="ToolOut")


@_attrs_define
class ToolOut:
    """
    Attributes:
        name (str):
        description (str):
        input_schema (ToolOutInputSchema):
        output_schema (None | ToolOutOutputSchemaType0):
        risk (str):
        requires_approval (bool):
        side_effects (bool):
        idempotent (bool):
        permissions (list[str]):
        timeout_s (float):
        concurrency_group (None | str):
        max_concurrency (int | None):
        cost_usd (float):
        enabled (bool):
        pending_declaration (None | PendingDeclarationOut): An MCP tool's declaration held for an admin's acceptance;
            the tool is unavailable meanwhile (`enabled: false`).
    """

    name: str
    description: str
    input_schema: ToolOutInputSchema
    output_schema: None | ToolOutOutputSchemaType0
    risk: str
    requires_approval: bool
    side_effects: bool
    idempotent: bool
    permissions: list[str]
    timeout_s: float
    concurrency_group: None | str
    max_concurrency: int | None
    cost_usd: float
    enabled: bool
    pending_declaration: None | PendingDeclarationOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.pending_declaration_out import PendingDeclarationOut
        from ..models.tool_out_output_schema_type_0 import ToolOutOutputSchemaType0

        name = self.name

        description = self.description

        input_schema = self.input_schema.to_dict()

        output_schema: dict[str, Any] | None
        if isinstance(self.output_schema, ToolOutOutputSchemaType0):
            output_schema = self.output_schema.to_dict()
        else:
            output_schema = self.output_schema

        risk = self.risk

        requires_approval = self.requires_approval

        side_effects = self.side_effects

        idempotent = self.idempotent

        permissions = self.permissions

        timeout_s = self.timeout_s

        concurrency_group: None | str
        concurrency_group = self.concurrency_group

        max_concurrency: int | None
        max_concurrency = self.max_concurrency

        cost_usd = self.cost_usd

        enabled = self.enabled

        pending_declaration: dict[str, Any] | None
        if isinstance(self.pending_declaration, PendingDeclarationOut):
            pending_declaration = self.pending_declaration.to_dict()
        else:
            pending_declaration = self.pending_declaration

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "description": description,
                "input_schema": input_schema,
                "output_schema": output_schema,
                "risk": risk,
                "requires_approval": requires_approval,
                "side_effects": side_effects,
                "idempotent": idempotent,
                "permissions": permissions,
                "timeout_s": timeout_s,
                "concurrency_group": concurrency_group,
                "max_concurrency": max_concurrency,
                "cost_usd": cost_usd,
                "enabled": enabled,
                "pending_declaration": pending_declaration,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.pending_declaration_out import PendingDeclarationOut
        from ..models.tool_out_input_schema import ToolOutInputSchema
        from ..models.tool_out_output_schema_type_0 import ToolOutOutputSchemaType0

        d = dict(src_dict)
        name = d.pop("name")

        description = d.pop("description")

        input_schema = ToolOutInputSchema.from_dict(d.pop("input_schema"))

        def _parse_output_schema(data: object) -> None | ToolOutOutputSchemaType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                output_schema_type_0 = ToolOutOutputSchemaType0.from_dict(data)

                return output_schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ToolOutOutputSchemaType0, data)

        output_schema = _parse_output_schema(d.pop("output_schema"))

        risk = d.pop("risk")

        requires_approval = d.pop("requires_approval")

        side_effects = d.pop("side_effects")

        idempotent = d.pop("idempotent")

        permissions = cast(list[str], d.pop("permissions"))

        timeout_s = d.pop("timeout_s")

        def _parse_concurrency_group(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        concurrency_group = _parse_concurrency_group(d.pop("concurrency_group"))

        def _parse_max_concurrency(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        max_concurrency = _parse_max_concurrency(d.pop("max_concurrency"))

        cost_usd = d.pop("cost_usd")

        enabled = d.pop("enabled")

        def _parse_pending_declaration(data: object) -> None | PendingDeclarationOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                pending_declaration_type_0 = PendingDeclarationOut.from_dict(data)

                return pending_declaration_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PendingDeclarationOut, data)

        pending_declaration = _parse_pending_declaration(d.pop("pending_declaration"))

        tool_out = cls(
            name=name,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            risk=risk,
            requires_approval=requires_approval,
            side_effects=side_effects,
            idempotent=idempotent,
            permissions=permissions,
            timeout_s=timeout_s,
            concurrency_group=concurrency_group,
            max_concurrency=max_concurrency,
            cost_usd=cost_usd,
            enabled=enabled,
            pending_declaration=pending_declaration,
        )

        tool_out.additional_properties = d
        return tool_out

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
