from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.role import Role
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateKeyIn")


@_attrs_define
class CreateKeyIn:
    """
    Attributes:
        name (str):
        roles (list[Role]):
        scopes (list[str]): Each a scope some tool declares (its `permissions`) and the calling key holds; `[]`: none.
            Required, so that a key's reach is always chosen (a key of every scope, also of tools added later, is made with
            the CLI only).
        subject (str | Unset): Whom the key stands for in runs, approvals and tool calls (two keys of one subject are
            one principal: neither approves the other's runs). Default: the name.
    """

    name: str
    roles: list[Role]
    scopes: list[str]
    subject: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        roles = []
        for roles_item_data in self.roles:
            roles_item = roles_item_data.value
            roles.append(roles_item)

        scopes = self.scopes

        subject = self.subject

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "roles": roles,
                "scopes": scopes,
            }
        )
        if subject is not UNSET:
            field_dict["subject"] = subject

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        roles = []
        _roles = d.pop("roles")
        for roles_item_data in _roles:
            roles_item = Role(roles_item_data)

            roles.append(roles_item)

        scopes = cast(list[str], d.pop("scopes"))

        subject = d.pop("subject", UNSET)

        create_key_in = cls(
            name=name,
            roles=roles,
            scopes=scopes,
            subject=subject,
        )

        return create_key_in
