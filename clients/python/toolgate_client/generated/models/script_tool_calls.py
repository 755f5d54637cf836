from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.script_call import ScriptCall
    from ..models.usage import Usage


T = TypeVar("T", bound="ScriptToolCalls")


@_attrs_define
class ScriptToolCalls:
    """
    Attributes:
        type_ (Literal['tool_calls']):
        calls (list[ScriptCall]):
        text (str | Unset): What the model writes beside its calls (its stated reason): kept on the turn
            (`turn.completed`'s `text`) and shown to approvers.
        usage (Usage | Unset):
        delay_ms (int | Unset):  Default: 0.
    """

    type_: Literal["tool_calls"]
    calls: list[ScriptCall]
    text: str | Unset = UNSET
    usage: Usage | Unset = UNSET
    delay_ms: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        calls = []
        for calls_item_data in self.calls:
            calls_item = calls_item_data.to_dict()
            calls.append(calls_item)

        text = self.text

        usage: dict[str, Any] | Unset = UNSET
        if not isinstance(self.usage, Unset):
            usage = self.usage.to_dict()

        delay_ms = self.delay_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
                "calls": calls,
            }
        )
        if text is not UNSET:
            field_dict["text"] = text
        if usage is not UNSET:
            field_dict["usage"] = usage
        if delay_ms is not UNSET:
            field_dict["delay_ms"] = delay_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.script_call import ScriptCall
        from ..models.usage import Usage

        d = dict(src_dict)
        type_ = cast(Literal["tool_calls"], d.pop("type"))
        if type_ != "tool_calls":
            raise ValueError(f"type must match const 'tool_calls', got '{type_}'")

        calls = []
        _calls = d.pop("calls")
        for calls_item_data in _calls:
            calls_item = ScriptCall.from_dict(calls_item_data)

            calls.append(calls_item)

        text = d.pop("text", UNSET)

        _usage = d.pop("usage", UNSET)
        usage: Usage | Unset
        if isinstance(_usage, Unset):
            usage = UNSET
        else:
            usage = Usage.from_dict(_usage)

        delay_ms = d.pop("delay_ms", UNSET)

        script_tool_calls = cls(
            type_=type_,
            calls=calls,
            text=text,
            usage=usage,
            delay_ms=delay_ms,
        )

        return script_tool_calls
