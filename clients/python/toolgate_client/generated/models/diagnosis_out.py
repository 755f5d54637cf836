from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.finding_out import FindingOut


T = TypeVar("T", bound="DiagnosisOut")


@_attrs_define
class DiagnosisOut:
    """Why the run went as it did, computed from its own records (null: nothing to say).

    Attributes:
        first_deviation (FindingOut | None): The earliest anomaly, even one the run recovered from.
        root_cause (FindingOut | None): The earliest anomaly the run never recovered from (so far, while it runs).
        terminal_cause (FindingOut | None): Why the run ended; null while it has not.
    """

    first_deviation: FindingOut | None
    root_cause: FindingOut | None
    terminal_cause: FindingOut | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.finding_out import FindingOut

        first_deviation: dict[str, Any] | None
        if isinstance(self.first_deviation, FindingOut):
            first_deviation = self.first_deviation.to_dict()
        else:
            first_deviation = self.first_deviation

        root_cause: dict[str, Any] | None
        if isinstance(self.root_cause, FindingOut):
            root_cause = self.root_cause.to_dict()
        else:
            root_cause = self.root_cause

        terminal_cause: dict[str, Any] | None
        if isinstance(self.terminal_cause, FindingOut):
            terminal_cause = self.terminal_cause.to_dict()
        else:
            terminal_cause = self.terminal_cause

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "first_deviation": first_deviation,
                "root_cause": root_cause,
                "terminal_cause": terminal_cause,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.finding_out import FindingOut

        d = dict(src_dict)

        def _parse_first_deviation(data: object) -> FindingOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                first_deviation_type_0 = FindingOut.from_dict(data)

                return first_deviation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(FindingOut | None, data)

        first_deviation = _parse_first_deviation(d.pop("first_deviation"))

        def _parse_root_cause(data: object) -> FindingOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                root_cause_type_0 = FindingOut.from_dict(data)

                return root_cause_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(FindingOut | None, data)

        root_cause = _parse_root_cause(d.pop("root_cause"))

        def _parse_terminal_cause(data: object) -> FindingOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                terminal_cause_type_0 = FindingOut.from_dict(data)

                return terminal_cause_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(FindingOut | None, data)

        terminal_cause = _parse_terminal_cause(d.pop("terminal_cause"))

        diagnosis_out = cls(
            first_deviation=first_deviation,
            root_cause=root_cause,
            terminal_cause=terminal_cause,
        )

        diagnosis_out.additional_properties = d
        return diagnosis_out

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
