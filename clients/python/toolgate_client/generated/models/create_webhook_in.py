from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.event_type import EventType

T = TypeVar("T", bound="CreateWebhookIn")


@_attrs_define
class CreateWebhookIn:
    """
    Attributes:
        url (str): An http(s) URL the operator's allowlist admits (else 422).
        events (list[EventType]): The event types to deliver, e.g. `call.awaiting_approval`, `run.finished`.
    """

    url: str
    events: list[EventType]

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "url": url,
                "events": events,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        url = d.pop("url")

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = EventType(events_item_data)

            events.append(events_item)

        create_webhook_in = cls(
            url=url,
            events=events,
        )

        return create_webhook_in
