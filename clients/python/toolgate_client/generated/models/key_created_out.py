from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="KeyCreatedOut")


@_attrs_define
class KeyCreatedOut:
    """
    Attributes:
        id (str):
        key (None | str): The key, shown in this answer only. `null` in a replay under the same Idempotency-Key: the key
            is never stored, so a client that lost the first answer revokes this key and makes another.
        prefix (str):
        name (str):
        subject (str):
        roles (list[str]):
        scopes (list[str] | None): `null`: every scope.
        created_at (datetime.datetime):
    """

    id: str
    key: None | str
    prefix: str
    name: str
    subject: str
    roles: list[str]
    scopes: list[str] | None
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        key: None | str
        key = self.key

        prefix = self.prefix

        name = self.name

        subject = self.subject

        roles = self.roles

        scopes: list[str] | None
        if isinstance(self.scopes, list):
            scopes = self.scopes

        else:
            scopes = self.scopes

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "key": key,
                "prefix": prefix,
                "name": name,
                "subject": subject,
                "roles": roles,
                "scopes": scopes,
                "created_at": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        def _parse_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        key = _parse_key(d.pop("key"))

        prefix = d.pop("prefix")

        name = d.pop("name")

        subject = d.pop("subject")

        roles = cast(list[str], d.pop("roles"))

        def _parse_scopes(data: object) -> list[str] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                scopes_type_0 = cast(list[str], data)

                return scopes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None, data)

        scopes = _parse_scopes(d.pop("scopes"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        key_created_out = cls(
            id=id,
            key=key,
            prefix=prefix,
            name=name,
            subject=subject,
            roles=roles,
            scopes=scopes,
            created_at=created_at,
        )

        key_created_out.additional_properties = d
        return key_created_out

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
