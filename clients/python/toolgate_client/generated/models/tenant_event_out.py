from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

if TYPE_CHECKING:
    from ..models.tenant_event_out_data import TenantEventOutData


T = TypeVar("T", bound="TenantEventOut")


@_attrs_define
class TenantEventOut:
    """A run's event as the tenant-wide feed shows it.

    Attributes:
        seq (int):
        type_ (EventType):
        at (datetime.datetime):
        data (TenantEventOutData):
        id (str): The event's place in the tenant's feed: `after=` (or `Last-Event-ID`) resumes after it.
        run_id (str):
    """

    seq: int
    type_: EventType
    at: datetime.datetime
    data: TenantEventOutData
    id: str
    run_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        type_ = self.type_.value

        at = self.at.isoformat()

        data = self.data.to_dict()

        id = self.id

        run_id = self.run_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "type": type_,
                "at": at,
                "data": data,
                "id": id,
                "run_id": run_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.tenant_event_out_data import TenantEventOutData

        d = dict(src_dict)
        seq = d.pop("seq")

        type_ = EventType(d.pop("type"))

        at = datetime.datetime.fromisoformat(d.pop("at"))

        data = TenantEventOutData.from_dict(d.pop("data"))

        id = d.pop("id")

        run_id = d.pop("run_id")

        tenant_event_out = cls(
            seq=seq,
            type_=type_,
            at=at,
            data=data,
            id=id,
            run_id=run_id,
        )

        tenant_event_out.additional_properties = d
        return tenant_event_out

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
