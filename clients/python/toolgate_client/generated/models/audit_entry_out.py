from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.audit_entry_out_data import AuditEntryOutData


T = TypeVar("T", bound="AuditEntryOut")


@_attrs_define
class AuditEntryOut:
    """
    Attributes:
        seq (int): Its place in the tenant's chain, from 1.
        at (datetime.datetime):
        actor (str): Who: a key's or a person's subject, or the operator.
        action (str): What: approve, reject, revise, commit, refuse_commit, disable_tool, enable_tool, create_key,
            revoke_key, register_webhook, delete_webhook, rotate_webhook_secret, accept_mcp_declaration.
        target (str): To what: a preview's, key's or webhook's id, a tool.
        data (AuditEntryOutData):
        prev_hash (str): The previous entry's hash (the first: all zeros).
        hash_ (str): SHA-256 over `prev_hash` and the entry's canonical JSON.
    """

    seq: int
    at: datetime.datetime
    actor: str
    action: str
    target: str
    data: AuditEntryOutData
    prev_hash: str
    hash_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        at = self.at.isoformat()

        actor = self.actor

        action = self.action

        target = self.target

        data = self.data.to_dict()

        prev_hash = self.prev_hash

        hash_ = self.hash_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "at": at,
                "actor": actor,
                "action": action,
                "target": target,
                "data": data,
                "prev_hash": prev_hash,
                "hash": hash_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.audit_entry_out_data import AuditEntryOutData

        d = dict(src_dict)
        seq = d.pop("seq")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        actor = d.pop("actor")

        action = d.pop("action")

        target = d.pop("target")

        data = AuditEntryOutData.from_dict(d.pop("data"))

        prev_hash = d.pop("prev_hash")

        hash_ = d.pop("hash")

        audit_entry_out = cls(
            seq=seq,
            at=at,
            actor=actor,
            action=action,
            target=target,
            data=data,
            prev_hash=prev_hash,
            hash_=hash_,
        )

        audit_entry_out.additional_properties = d
        return audit_entry_out

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
