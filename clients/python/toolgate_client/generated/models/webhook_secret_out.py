from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

T = TypeVar("T", bound="WebhookSecretOut")


@_attrs_define
class WebhookSecretOut:
    """The answer that shows the signing secret, the only one.

    Attributes:
        id (str):
        url (str):
        events (list[EventType]):
        created_at (datetime.datetime):
        created_by (str):
        disabled_at (datetime.datetime | None): When deliveries stopped (the endpoint answered `410 Gone`).
        disabled_reason (None | str):
        previous_secret_expires_at (datetime.datetime | None): After a rotation: until when the previous secret still
            signs.
        secret (None | str): `whsec_` + base64 of the HMAC key, shown only in this answer. A rotation replayed for a
            repeated Idempotency-Key answers the same secret, read again from the endpoint while no later rotation replaced
            it (then `409`); a registration replayed answers `null` (rotate to get a new one).
    """

    id: str
    url: str
    events: list[EventType]
    created_at: datetime.datetime
    created_by: str
    disabled_at: datetime.datetime | None
    disabled_reason: None | str
    previous_secret_expires_at: datetime.datetime | None
    secret: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        url = self.url

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        created_at = self.created_at.isoformat()

        created_by = self.created_by

        disabled_at: None | str
        if isinstance(self.disabled_at, datetime.datetime):
            disabled_at = self.disabled_at.isoformat()
        else:
            disabled_at = self.disabled_at

        disabled_reason: None | str
        disabled_reason = self.disabled_reason

        previous_secret_expires_at: None | str
        if isinstance(self.previous_secret_expires_at, datetime.datetime):
            previous_secret_expires_at = self.previous_secret_expires_at.isoformat()
        else:
            previous_secret_expires_at = self.previous_secret_expires_at

        secret: None | str
        secret = self.secret

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "url": url,
                "events": events,
                "created_at": created_at,
                "created_by": created_by,
                "disabled_at": disabled_at,
                "disabled_reason": disabled_reason,
                "previous_secret_expires_at": previous_secret_expires_at,
                "secret": secret,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        url = d.pop("url")

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = EventType(events_item_data)

            events.append(events_item)

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        def _parse_disabled_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                disabled_at_type_0 = datetime.datetime.fromisoformat(data)

                return disabled_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        disabled_at = _parse_disabled_at(d.pop("disabled_at"))

        def _parse_disabled_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason"))

        def _parse_previous_secret_expires_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                previous_secret_expires_at_type_0 = datetime.datetime.fromisoformat(
                    data
                )

                return previous_secret_expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        previous_secret_expires_at = _parse_previous_secret_expires_at(
            d.pop("previous_secret_expires_at")
        )

        def _parse_secret(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        secret = _parse_secret(d.pop("secret"))

        webhook_secret_out = cls(
            id=id,
            url=url,
            events=events,
            created_at=created_at,
            created_by=created_by,
            disabled_at=disabled_at,
            disabled_reason=disabled_reason,
            previous_secret_expires_at=previous_secret_expires_at,
            secret=secret,
        )

        webhook_secret_out.additional_properties = d
        return webhook_secret_out

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
