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
    from ..models.usage import Usage


T = TypeVar("T", bound="ScriptFinal")


@_attrs_define
class ScriptFinal:
    """
    Attributes:
        type_ (Literal['final']):
        data (Any | Unset): The answer as a JSON value, which the scripted model sends as its JSON text, checked like
            any answer: for an agent with an `output_schema`, its document (`output.data`); for another agent, the answer's
            text. Give it or `text`, not both.
        text (str | Unset): The final answer. Give it or `data`.
        usage (Usage | Unset):
        delay_ms (int | Unset):  Default: 0.
    """

    type_: Literal["final"]
    data: Any | Unset = UNSET
    text: str | Unset = UNSET
    usage: Usage | Unset = UNSET
    delay_ms: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        data = self.data

        text = self.text

        usage: dict[str, Any] | Unset = UNSET
        if not isinstance(self.usage, Unset):
            usage = self.usage.to_dict()

        delay_ms = self.delay_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
            }
        )
        if data is not UNSET:
            field_dict["data"] = data
        if text is not UNSET:
            field_dict["text"] = text
        if usage is not UNSET:
            field_dict["usage"] = usage
        if delay_ms is not UNSET:
            field_dict["delay_ms"] = delay_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage import Usage

        d = dict(src_dict)
        type_ = cast(Literal["final"], d.pop("type"))
        if type_ != "final":
            raise ValueError(f"type must match const 'final', got '{type_}'")

        data = d.pop("data", UNSET)

        text = d.pop("text", UNSET)

        _usage = d.pop("usage", UNSET)
        usage: Usage | Unset
        if isinstance(_usage, Unset):
            usage = UNSET
        else:
            usage = Usage.from_dict(_usage)

        delay_ms = d.pop("delay_ms", UNSET)

        script_final = cls(
            type_=type_,
            data=data,
            text=text,
            usage=usage,
            delay_ms=delay_ms,
        )

        return script_final
