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
from attrs import field as _attrs_field

from ..models.call_status import CallStatus

if TYPE_CHECKING:
    from ..models.call_error_out import CallErrorOut
    from ..models.revision_out import RevisionOut


T = TypeVar("T", bound="CallOut")


@_attrs_define
class CallOut:
    """
    Attributes:
        id (str):
        call_id (str):
        step (int):
        tool (str):
        status (CallStatus):
        arguments (Any):
        args_hash (str):
        operation_id (str):
        attempts (int):
        error (CallErrorOut | None):
        output (Any):
        source_id (None | str):
        observed_at (None | str):
        source_version (None | str):
        preview_id (None | str):
        proposed_arguments (Any): The model's own arguments when an approver revised them (null: not revised);
            `arguments` are the revised ones, which run.
        revision (None | RevisionOut): The latest revision: who, why, when.
        output_withheld (bool): It took effect, but its output broke its schema or size limit: not kept
        trust (Literal['untrusted']): The trust level of what the tool returned: always `untrusted` data, which reaches
            the model inside an envelope and never as instructions (docs/trust.md)
    """

    id: str
    call_id: str
    step: int
    tool: str
    status: CallStatus
    arguments: Any
    args_hash: str
    operation_id: str
    attempts: int
    error: CallErrorOut | None
    output: Any
    source_id: None | str
    observed_at: None | str
    source_version: None | str
    preview_id: None | str
    proposed_arguments: Any
    revision: None | RevisionOut
    output_withheld: bool
    trust: Literal["untrusted"]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.call_error_out import CallErrorOut
        from ..models.revision_out import RevisionOut

        id = self.id

        call_id = self.call_id

        step = self.step

        tool = self.tool

        status = self.status.value

        arguments = self.arguments

        args_hash = self.args_hash

        operation_id = self.operation_id

        attempts = self.attempts

        error: dict[str, Any] | None
        if isinstance(self.error, CallErrorOut):
            error = self.error.to_dict()
        else:
            error = self.error

        output = self.output

        source_id: None | str
        source_id = self.source_id

        observed_at: None | str
        observed_at = self.observed_at

        source_version: None | str
        source_version = self.source_version

        preview_id: None | str
        preview_id = self.preview_id

        proposed_arguments = self.proposed_arguments

        revision: dict[str, Any] | None
        if isinstance(self.revision, RevisionOut):
            revision = self.revision.to_dict()
        else:
            revision = self.revision

        output_withheld = self.output_withheld

        trust = self.trust

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "call_id": call_id,
                "step": step,
                "tool": tool,
                "status": status,
                "arguments": arguments,
                "args_hash": args_hash,
                "operation_id": operation_id,
                "attempts": attempts,
                "error": error,
                "output": output,
                "source_id": source_id,
                "observed_at": observed_at,
                "source_version": source_version,
                "preview_id": preview_id,
                "proposed_arguments": proposed_arguments,
                "revision": revision,
                "output_withheld": output_withheld,
                "trust": trust,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.call_error_out import CallErrorOut
        from ..models.revision_out import RevisionOut

        d = dict(src_dict)
        id = d.pop("id")

        call_id = d.pop("call_id")

        step = d.pop("step")

        tool = d.pop("tool")

        status = CallStatus(d.pop("status"))

        arguments = d.pop("arguments")

        args_hash = d.pop("args_hash")

        operation_id = d.pop("operation_id")

        attempts = d.pop("attempts")

        def _parse_error(data: object) -> CallErrorOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = CallErrorOut.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallErrorOut | None, data)

        error = _parse_error(d.pop("error"))

        output = d.pop("output")

        def _parse_source_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        source_id = _parse_source_id(d.pop("source_id"))

        def _parse_observed_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        observed_at = _parse_observed_at(d.pop("observed_at"))

        def _parse_source_version(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        source_version = _parse_source_version(d.pop("source_version"))

        def _parse_preview_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        preview_id = _parse_preview_id(d.pop("preview_id"))

        proposed_arguments = d.pop("proposed_arguments")

        def _parse_revision(data: object) -> None | RevisionOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                revision_type_0 = RevisionOut.from_dict(data)

                return revision_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RevisionOut, data)

        revision = _parse_revision(d.pop("revision"))

        output_withheld = d.pop("output_withheld")

        trust = cast(Literal["untrusted"], d.pop("trust"))
        if trust != "untrusted":
            raise ValueError(f"trust must match const 'untrusted', got '{trust}'")

        call_out = cls(
            id=id,
            call_id=call_id,
            step=step,
            tool=tool,
            status=status,
            arguments=arguments,
            args_hash=args_hash,
            operation_id=operation_id,
            attempts=attempts,
            error=error,
            output=output,
            source_id=source_id,
            observed_at=observed_at,
            source_version=source_version,
            preview_id=preview_id,
            proposed_arguments=proposed_arguments,
            revision=revision,
            output_withheld=output_withheld,
            trust=trust,
        )

        call_out.additional_properties = d
        return call_out

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
