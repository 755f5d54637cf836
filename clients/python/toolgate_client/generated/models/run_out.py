from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_out_consistency import RunOutConsistency
from ..models.run_status import RunStatus
from ..models.termination_reason import TerminationReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.limits_out import LimitsOut
    from ..models.pending_approval import PendingApproval
    from ..models.reserved_out import ReservedOut
    from ..models.run_error import RunError
    from ..models.run_out_metadata_type_0 import RunOutMetadataType0
    from ..models.run_output import RunOutput
    from ..models.usage_out import UsageOut


T = TypeVar("T", bound="RunOut")


@_attrs_define
class RunOut:
    """
    Attributes:
        id (str):
        agent (str):
        input_ (str): What the run was asked (the request's `input`, or the continued run's), with secrets redacted as
            in every text the API shows.
        status (RunStatus):
        root_run_id (str): The run at the top of its tree (itself when it has no parent).
        tools (list[str]):
        limits (LimitsOut):
        usage (UsageOut):
        reserved (ReservedOut):
        pending_approvals (list[PendingApproval]):
        consistency (RunOutConsistency):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        deadline_at (datetime.datetime):
        version (int):
        termination_reason (None | TerminationReason | Unset):
        output (None | RunOutput | Unset):
        error (None | RunError | Unset):
        parent_run_id (None | str | Unset):
        metadata (None | RunOutMetadataType0 | Unset):
        as_of (datetime.datetime | None | Unset): What a `snapshot` run's reads are pinned to: its `created_at`; null
            for a `latest` run.
        config_hash (None | str | Unset): The config version the run was created with and keeps until it ends (SHA-256
            of its agent and its tools' declarations); null for a run created before versions were kept.
        continued_from (None | str | Unset): The finished run this one continues (`continue_from`); null otherwise.
    """

    id: str
    agent: str
    input_: str
    status: RunStatus
    root_run_id: str
    tools: list[str]
    limits: LimitsOut
    usage: UsageOut
    reserved: ReservedOut
    pending_approvals: list[PendingApproval]
    consistency: RunOutConsistency
    created_at: datetime.datetime
    updated_at: datetime.datetime
    deadline_at: datetime.datetime
    version: int
    termination_reason: None | TerminationReason | Unset = UNSET
    output: None | RunOutput | Unset = UNSET
    error: None | RunError | Unset = UNSET
    parent_run_id: None | str | Unset = UNSET
    metadata: None | RunOutMetadataType0 | Unset = UNSET
    as_of: datetime.datetime | None | Unset = UNSET
    config_hash: None | str | Unset = UNSET
    continued_from: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_error import RunError
        from ..models.run_out_metadata_type_0 import RunOutMetadataType0
        from ..models.run_output import RunOutput

        id = self.id

        agent = self.agent

        input_ = self.input_

        status = self.status.value

        root_run_id = self.root_run_id

        tools = self.tools

        limits = self.limits.to_dict()

        usage = self.usage.to_dict()

        reserved = self.reserved.to_dict()

        pending_approvals = []
        for pending_approvals_item_data in self.pending_approvals:
            pending_approvals_item = pending_approvals_item_data.to_dict()
            pending_approvals.append(pending_approvals_item)

        consistency = self.consistency.value

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        deadline_at = self.deadline_at.isoformat()

        version = self.version

        termination_reason: None | str | Unset
        if isinstance(self.termination_reason, Unset):
            termination_reason = UNSET
        elif isinstance(self.termination_reason, TerminationReason):
            termination_reason = self.termination_reason.value
        else:
            termination_reason = self.termination_reason

        output: dict[str, Any] | None | Unset
        if isinstance(self.output, Unset):
            output = UNSET
        elif isinstance(self.output, RunOutput):
            output = self.output.to_dict()
        else:
            output = self.output

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, RunError):
            error = self.error.to_dict()
        else:
            error = self.error

        parent_run_id: None | str | Unset
        if isinstance(self.parent_run_id, Unset):
            parent_run_id = UNSET
        else:
            parent_run_id = self.parent_run_id

        metadata: dict[str, Any] | None | Unset
        if isinstance(self.metadata, Unset):
            metadata = UNSET
        elif isinstance(self.metadata, RunOutMetadataType0):
            metadata = self.metadata.to_dict()
        else:
            metadata = self.metadata

        as_of: None | str | Unset
        if isinstance(self.as_of, Unset):
            as_of = UNSET
        elif isinstance(self.as_of, datetime.datetime):
            as_of = self.as_of.isoformat()
        else:
            as_of = self.as_of

        config_hash: None | str | Unset
        if isinstance(self.config_hash, Unset):
            config_hash = UNSET
        else:
            config_hash = self.config_hash

        continued_from: None | str | Unset
        if isinstance(self.continued_from, Unset):
            continued_from = UNSET
        else:
            continued_from = self.continued_from

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "agent": agent,
                "input": input_,
                "status": status,
                "root_run_id": root_run_id,
                "tools": tools,
                "limits": limits,
                "usage": usage,
                "reserved": reserved,
                "pending_approvals": pending_approvals,
                "consistency": consistency,
                "created_at": created_at,
                "updated_at": updated_at,
                "deadline_at": deadline_at,
                "version": version,
            }
        )
        if termination_reason is not UNSET:
            field_dict["termination_reason"] = termination_reason
        if output is not UNSET:
            field_dict["output"] = output
        if error is not UNSET:
            field_dict["error"] = error
        if parent_run_id is not UNSET:
            field_dict["parent_run_id"] = parent_run_id
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if as_of is not UNSET:
            field_dict["as_of"] = as_of
        if config_hash is not UNSET:
            field_dict["config_hash"] = config_hash
        if continued_from is not UNSET:
            field_dict["continued_from"] = continued_from

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.limits_out import LimitsOut
        from ..models.pending_approval import PendingApproval
        from ..models.reserved_out import ReservedOut
        from ..models.run_error import RunError
        from ..models.run_out_metadata_type_0 import RunOutMetadataType0
        from ..models.run_output import RunOutput
        from ..models.usage_out import UsageOut

        d = dict(src_dict)
        id = d.pop("id")

        agent = d.pop("agent")

        input_ = d.pop("input")

        status = RunStatus(d.pop("status"))

        root_run_id = d.pop("root_run_id")

        tools = cast(list[str], d.pop("tools"))

        limits = LimitsOut.from_dict(d.pop("limits"))

        usage = UsageOut.from_dict(d.pop("usage"))

        reserved = ReservedOut.from_dict(d.pop("reserved"))

        pending_approvals = []
        _pending_approvals = d.pop("pending_approvals")
        for pending_approvals_item_data in _pending_approvals:
            pending_approvals_item = PendingApproval.from_dict(
                pending_approvals_item_data
            )

            pending_approvals.append(pending_approvals_item)

        consistency = RunOutConsistency(d.pop("consistency"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        deadline_at = datetime.datetime.fromisoformat(d.pop("deadline_at"))

        version = d.pop("version")

        def _parse_termination_reason(data: object) -> None | TerminationReason | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                termination_reason_type_0 = TerminationReason(data)

                return termination_reason_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TerminationReason | Unset, data)

        termination_reason = _parse_termination_reason(
            d.pop("termination_reason", UNSET)
        )

        def _parse_output(data: object) -> None | RunOutput | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                output_type_0 = RunOutput.from_dict(data)

                return output_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunOutput | Unset, data)

        output = _parse_output(d.pop("output", UNSET))

        def _parse_error(data: object) -> None | RunError | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = RunError.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunError | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_parent_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        parent_run_id = _parse_parent_run_id(d.pop("parent_run_id", UNSET))

        def _parse_metadata(data: object) -> None | RunOutMetadataType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metadata_type_0 = RunOutMetadataType0.from_dict(data)

                return metadata_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunOutMetadataType0 | Unset, data)

        metadata = _parse_metadata(d.pop("metadata", UNSET))

        def _parse_as_of(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                as_of_type_0 = datetime.datetime.fromisoformat(data)

                return as_of_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        as_of = _parse_as_of(d.pop("as_of", UNSET))

        def _parse_config_hash(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        config_hash = _parse_config_hash(d.pop("config_hash", UNSET))

        def _parse_continued_from(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        continued_from = _parse_continued_from(d.pop("continued_from", UNSET))

        run_out = cls(
            id=id,
            agent=agent,
            input_=input_,
            status=status,
            root_run_id=root_run_id,
            tools=tools,
            limits=limits,
            usage=usage,
            reserved=reserved,
            pending_approvals=pending_approvals,
            consistency=consistency,
            created_at=created_at,
            updated_at=updated_at,
            deadline_at=deadline_at,
            version=version,
            termination_reason=termination_reason,
            output=output,
            error=error,
            parent_run_id=parent_run_id,
            metadata=metadata,
            as_of=as_of,
            config_hash=config_hash,
            continued_from=continued_from,
        )

        run_out.additional_properties = d
        return run_out

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
