from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DeliveryAttemptOut")


@_attrs_define
class DeliveryAttemptOut:
    """
    Attributes:
        at (datetime.datetime):
        status_code (int | None): The receiver's answer; `null`: none came.
        latency_ms (int | None):
        error (None | str): Why the attempt failed, when it did.
        counted (bool): `false`: the service could not make the attempt (its own resolver did not answer), and it does
            not count against the delivery's retries.
    """

    at: datetime.datetime
    status_code: int | None
    latency_ms: int | None
    error: None | str
    counted: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        status_code: int | None
        status_code = self.status_code

        latency_ms: int | None
        latency_ms = self.latency_ms

        error: None | str
        error = self.error

        counted = self.counted

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "status_code": status_code,
                "latency_ms": latency_ms,
                "error": error,
                "counted": counted,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        def _parse_status_code(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        status_code = _parse_status_code(d.pop("status_code"))

        def _parse_latency_ms(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        latency_ms = _parse_latency_ms(d.pop("latency_ms"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        counted = d.pop("counted")

        delivery_attempt_out = cls(
            at=at,
            status_code=status_code,
            latency_ms=latency_ms,
            error=error,
            counted=counted,
        )

        delivery_attempt_out.additional_properties = d
        return delivery_attempt_out

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
