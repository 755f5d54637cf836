from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.revise_in_arguments import ReviseInArguments


T = TypeVar("T", bound="ReviseIn")


@_attrs_define
class ReviseIn:
    """
    Attributes:
        arguments (ReviseInArguments): The call's new arguments, checked as a proposal's are.
        reason (str): Why: the model is told, with the change.
    """

    arguments: ReviseInArguments
    reason: str

    def to_dict(self) -> dict[str, Any]:
        arguments = self.arguments.to_dict()

        reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "arguments": arguments,
                "reason": reason,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.revise_in_arguments import ReviseInArguments

        d = dict(src_dict)
        arguments = ReviseInArguments.from_dict(d.pop("arguments"))

        reason = d.pop("reason")

        revise_in = cls(
            arguments=arguments,
            reason=reason,
        )

        return revise_in
