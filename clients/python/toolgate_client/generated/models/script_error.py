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


T = TypeVar("T", bound="ScriptError")


@_attrs_define
class ScriptError:
    """
    Attributes:
        type_ (Literal['error']):
        code (str):
        retryable (bool | Unset):  Default: False.
        message (str | Unset):
        usage (Usage | Unset):
        delay_ms (int | Unset):  Default: 0.
    """

    type_: Literal["error"]
    code: str
    retryable: bool | Unset = False
    message: str | Unset = UNSET
    usage: Usage | Unset = UNSET
    delay_ms: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        code = self.code

        retryable = self.retryable

        message = self.message

        usage: dict[str, Any] | Unset = UNSET
        if not isinstance(self.usage, Unset):
            usage = self.usage.to_dict()

        delay_ms = self.delay_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
                "code": code,
            }
        )
        if retryable is not UNSET:
            field_dict["retryable"] = retryable
        if message is not UNSET:
            field_dict["message"] = message
        if usage is not UNSET:
            field_dict["usage"] = usage
        if delay_ms is not UNSET:
            field_dict["delay_ms"] = delay_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage import Usage

        d = dict(src_dict)
        type_ = cast(Literal["error"], d.pop("type"))
        if type_ != "error":
            raise ValueError(f"type must match const 'error', got '{type_}'")

        code = d.pop("code")

        retryable = d.pop("retryable", UNSET)

        message = d.pop("message", UNSET)

        _usage = d.pop("usage", UNSET)
        usage: Usage | Unset
        if isinstance(_usage, Unset):
            usage = UNSET
        else:
            usage = Usage.from_dict(_usage)

        delay_ms = d.pop("delay_ms", UNSET)

        script_error = cls(
            type_=type_,
            code=code,
            retryable=retryable,
            message=message,
            usage=usage,
            delay_ms=delay_ms,
        )

        return script_error
