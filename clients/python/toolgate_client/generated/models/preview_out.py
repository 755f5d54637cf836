from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.preview_status import PreviewStatus

if TYPE_CHECKING:
    from ..models.approval_out import ApprovalOut
    from ..models.preview_out_impact import PreviewOutImpact


T = TypeVar("T", bound="PreviewOut")


@_attrs_define
class PreviewOut:
    """A proposed call as an approver decides on it: immutable but for its status.

    Attributes:
        id (str):
        run_id (str):
        call_id (str):
        step (int):
        tool (str):
        arguments (Any):
        args_hash (str):
        content_hash (str): What `approve` must send back: over all of it.
        summary (str):
        impact (PreviewOutImpact):
        cost_usd (float):
        resource_version (None | str):
        status (PreviewStatus):
        requested_by (str): The run's creator.
        expires_at (datetime.datetime):
        created_at (datetime.datetime):
        approvals_required (int): Distinct approvers it needs, none of them the run's creator (quorum).
        approvals (list[ApprovalOut]): Who approved it so far, in order.
        revised_by (None | str): Made from this approver's revision of the call's arguments (else null).
        revision_reason (None | str):
        decided_by (None | str): Who decided it: the rejecter, the reviser, or the approver who completed its quorum.
        decided_at (datetime.datetime | None):
        reason (None | str):
        committed_by (None | str):
        committed_at (datetime.datetime | None):
        supersedes (None | str):
        superseded_by (None | str):
    """

    id: str
    run_id: str
    call_id: str
    step: int
    tool: str
    arguments: Any
    args_hash: str
    content_hash: str
    summary: str
    impact: PreviewOutImpact
    cost_usd: float
    resource_version: None | str
    status: PreviewStatus
    requested_by: str
    expires_at: datetime.datetime
    created_at: datetime.datetime
    approvals_required: int
    approvals: list[ApprovalOut]
    revised_by: None | str
    revision_reason: None | str
    decided_by: None | str
    decided_at: datetime.datetime | None
    reason: None | str
    committed_by: None | str
    committed_at: datetime.datetime | None
    supersedes: None | str
    superseded_by: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        run_id = self.run_id

        call_id = self.call_id

        step = self.step

        tool = self.tool

        arguments = self.arguments

        args_hash = self.args_hash

        content_hash = self.content_hash

        summary = self.summary

        impact = self.impact.to_dict()

        cost_usd = self.cost_usd

        resource_version: None | str
        resource_version = self.resource_version

        status = self.status.value

        requested_by = self.requested_by

        expires_at = self.expires_at.isoformat()

        created_at = self.created_at.isoformat()

        approvals_required = self.approvals_required

        approvals = []
        for approvals_item_data in self.approvals:
            approvals_item = approvals_item_data.to_dict()
            approvals.append(approvals_item)

        revised_by: None | str
        revised_by = self.revised_by

        revision_reason: None | str
        revision_reason = self.revision_reason

        decided_by: None | str
        decided_by = self.decided_by

        decided_at: None | str
        if isinstance(self.decided_at, datetime.datetime):
            decided_at = self.decided_at.isoformat()
        else:
            decided_at = self.decided_at

        reason: None | str
        reason = self.reason

        committed_by: None | str
        committed_by = self.committed_by

        committed_at: None | str
        if isinstance(self.committed_at, datetime.datetime):
            committed_at = self.committed_at.isoformat()
        else:
            committed_at = self.committed_at

        supersedes: None | str
        supersedes = self.supersedes

        superseded_by: None | str
        superseded_by = self.superseded_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "run_id": run_id,
                "call_id": call_id,
                "step": step,
                "tool": tool,
                "arguments": arguments,
                "args_hash": args_hash,
                "content_hash": content_hash,
                "summary": summary,
                "impact": impact,
                "cost_usd": cost_usd,
                "resource_version": resource_version,
                "status": status,
                "requested_by": requested_by,
                "expires_at": expires_at,
                "created_at": created_at,
                "approvals_required": approvals_required,
                "approvals": approvals,
                "revised_by": revised_by,
                "revision_reason": revision_reason,
                "decided_by": decided_by,
                "decided_at": decided_at,
                "reason": reason,
                "committed_by": committed_by,
                "committed_at": committed_at,
                "supersedes": supersedes,
                "superseded_by": superseded_by,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_out import ApprovalOut
        from ..models.preview_out_impact import PreviewOutImpact

        d = dict(src_dict)
        id = d.pop("id")

        run_id = d.pop("run_id")

        call_id = d.pop("call_id")

        step = d.pop("step")

        tool = d.pop("tool")

        arguments = d.pop("arguments")

        args_hash = d.pop("args_hash")

        content_hash = d.pop("content_hash")

        summary = d.pop("summary")

        impact = PreviewOutImpact.from_dict(d.pop("impact"))

        cost_usd = d.pop("cost_usd")

        def _parse_resource_version(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        resource_version = _parse_resource_version(d.pop("resource_version"))

        status = PreviewStatus(d.pop("status"))

        requested_by = d.pop("requested_by")

        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        approvals_required = d.pop("approvals_required")

        approvals = []
        _approvals = d.pop("approvals")
        for approvals_item_data in _approvals:
            approvals_item = ApprovalOut.from_dict(approvals_item_data)

            approvals.append(approvals_item)

        def _parse_revised_by(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        revised_by = _parse_revised_by(d.pop("revised_by"))

        def _parse_revision_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        revision_reason = _parse_revision_reason(d.pop("revision_reason"))

        def _parse_decided_by(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        decided_by = _parse_decided_by(d.pop("decided_by"))

        def _parse_decided_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decided_at_type_0 = datetime.datetime.fromisoformat(data)

                return decided_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        decided_at = _parse_decided_at(d.pop("decided_at"))

        def _parse_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        reason = _parse_reason(d.pop("reason"))

        def _parse_committed_by(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        committed_by = _parse_committed_by(d.pop("committed_by"))

        def _parse_committed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                committed_at_type_0 = datetime.datetime.fromisoformat(data)

                return committed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        committed_at = _parse_committed_at(d.pop("committed_at"))

        def _parse_supersedes(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        supersedes = _parse_supersedes(d.pop("supersedes"))

        def _parse_superseded_by(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        superseded_by = _parse_superseded_by(d.pop("superseded_by"))

        preview_out = cls(
            id=id,
            run_id=run_id,
            call_id=call_id,
            step=step,
            tool=tool,
            arguments=arguments,
            args_hash=args_hash,
            content_hash=content_hash,
            summary=summary,
            impact=impact,
            cost_usd=cost_usd,
            resource_version=resource_version,
            status=status,
            requested_by=requested_by,
            expires_at=expires_at,
            created_at=created_at,
            approvals_required=approvals_required,
            approvals=approvals,
            revised_by=revised_by,
            revision_reason=revision_reason,
            decided_by=decided_by,
            decided_at=decided_at,
            reason=reason,
            committed_by=committed_by,
            committed_at=committed_at,
            supersedes=supersedes,
            superseded_by=superseded_by,
        )

        preview_out.additional_properties = d
        return preview_out

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
