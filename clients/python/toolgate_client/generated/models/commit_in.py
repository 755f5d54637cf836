from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CommitIn")


@_attrs_define
class CommitIn:
    """
    Attributes:
        wait_s (float | Unset): How long to advance the run after the commit. Default: 10.0.
    """

    wait_s: float | Unset = 10.0

    def to_dict(self) -> dict[str, Any]:
        wait_s = self.wait_s

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if wait_s is not UNSET:
            field_dict["wait_s"] = wait_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        wait_s = d.pop("wait_s", UNSET)

        commit_in = cls(
            wait_s=wait_s,
        )

        return commit_in
