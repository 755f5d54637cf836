from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.call_out import CallOut
    from ..models.preview_out import PreviewOut
    from ..models.run_out import RunOut


T = TypeVar("T", bound="CommitOut")


@_attrs_define
class CommitOut:
    """
    Attributes:
        preview (PreviewOut): A proposed call as an approver decides on it: immutable but for its status.
        call (CallOut):
        run (RunOut):
    """

    preview: PreviewOut
    call: CallOut
    run: RunOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        preview = self.preview.to_dict()

        call = self.call.to_dict()

        run = self.run.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "preview": preview,
                "call": call,
                "run": run,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.call_out import CallOut
        from ..models.preview_out import PreviewOut
        from ..models.run_out import RunOut

        d = dict(src_dict)
        preview = PreviewOut.from_dict(d.pop("preview"))

        call = CallOut.from_dict(d.pop("call"))

        run = RunOut.from_dict(d.pop("run"))

        commit_out = cls(
            preview=preview,
            call=call,
            run=run,
        )

        commit_out.additional_properties = d
        return commit_out

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
