from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.create_run_in_consistency import CreateRunInConsistency
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_run_in_metadata import CreateRunInMetadata
    from ..models.limits_in import LimitsIn
    from ..models.script_error import ScriptError
    from ..models.script_final import ScriptFinal
    from ..models.script_tool_calls import ScriptToolCalls


T = TypeVar("T", bound="CreateRunIn")


@_attrs_define
class CreateRunIn:
    """
    Attributes:
        agent (str):
        input_ (str | Unset): The task. Required, unless the run continues another (`continue_from`): then it defaults
            to that run's input (without either: `422` on `input`).
        tools (list[str] | Unset):
        limits (LimitsIn | Unset):
        parent_run_id (str | Unset): Makes a child run of this run (same tenant, else `404`): its deadline and its
            token, cost and tool-call budgets are clamped to what the parent has left and reserved on the parent until the
            child finishes; a finished parent, or one with nothing left of a budget, is `409 invalid-state`.
        metadata (CreateRunInMetadata | Unset): At most 4 KiB as JSON.
        consistency (CreateRunInConsistency | Unset): `latest` (the default): every read sees the data as it is then.
            `snapshot`: the run's reads are pinned to its creation (`as_of`); its writes still check the current data at
            commit.
        data_policy (list[str] | Unset): Tags every model route this run uses must carry (besides its agent's); a router
            only chooses among candidates that carry them.
        continue_from (str | Unset): A finished run of the tenant (e.g. one that ended `context_exhausted`) to continue:
            the new run starts from its recorded state — its input, a summary of each of its calls, the effects it committed
            and the calls that awaited approval — under the new run's agent and limits. Unknown: `404`; not finished: `409`.
        wait_s (float | Unset):  Default: 10.0.
        script (list[ScriptError | ScriptFinal | ScriptToolCalls] | Unset):
    """

    agent: str
    input_: str | Unset = UNSET
    tools: list[str] | Unset = UNSET
    limits: LimitsIn | Unset = UNSET
    parent_run_id: str | Unset = UNSET
    metadata: CreateRunInMetadata | Unset = UNSET
    consistency: CreateRunInConsistency | Unset = UNSET
    data_policy: list[str] | Unset = UNSET
    continue_from: str | Unset = UNSET
    wait_s: float | Unset = 10.0
    script: list[ScriptError | ScriptFinal | ScriptToolCalls] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.script_final import ScriptFinal
        from ..models.script_tool_calls import ScriptToolCalls

        agent = self.agent

        input_ = self.input_

        tools: list[str] | Unset = UNSET
        if not isinstance(self.tools, Unset):
            tools = self.tools

        limits: dict[str, Any] | Unset = UNSET
        if not isinstance(self.limits, Unset):
            limits = self.limits.to_dict()

        parent_run_id = self.parent_run_id

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        consistency: str | Unset = UNSET
        if not isinstance(self.consistency, Unset):
            consistency = self.consistency.value

        data_policy: list[str] | Unset = UNSET
        if not isinstance(self.data_policy, Unset):
            data_policy = self.data_policy

        continue_from = self.continue_from

        wait_s = self.wait_s

        script: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.script, Unset):
            script = []
            for script_item_data in self.script:
                script_item: dict[str, Any]
                if isinstance(script_item_data, ScriptToolCalls) or isinstance(
                    script_item_data, ScriptFinal
                ):
                    script_item = script_item_data.to_dict()
                else:
                    script_item = script_item_data.to_dict()

                script.append(script_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
            }
        )
        if input_ is not UNSET:
            field_dict["input"] = input_
        if tools is not UNSET:
            field_dict["tools"] = tools
        if limits is not UNSET:
            field_dict["limits"] = limits
        if parent_run_id is not UNSET:
            field_dict["parent_run_id"] = parent_run_id
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if consistency is not UNSET:
            field_dict["consistency"] = consistency
        if data_policy is not UNSET:
            field_dict["data_policy"] = data_policy
        if continue_from is not UNSET:
            field_dict["continue_from"] = continue_from
        if wait_s is not UNSET:
            field_dict["wait_s"] = wait_s
        if script is not UNSET:
            field_dict["script"] = script

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.create_run_in_metadata import CreateRunInMetadata
        from ..models.limits_in import LimitsIn
        from ..models.script_error import ScriptError
        from ..models.script_final import ScriptFinal
        from ..models.script_tool_calls import ScriptToolCalls

        d = dict(src_dict)
        agent = d.pop("agent")

        input_ = d.pop("input", UNSET)

        tools = cast(list[str], d.pop("tools", UNSET))

        _limits = d.pop("limits", UNSET)
        limits: LimitsIn | Unset
        if isinstance(_limits, Unset):
            limits = UNSET
        else:
            limits = LimitsIn.from_dict(_limits)

        parent_run_id = d.pop("parent_run_id", UNSET)

        _metadata = d.pop("metadata", UNSET)
        metadata: CreateRunInMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = CreateRunInMetadata.from_dict(_metadata)

        _consistency = d.pop("consistency", UNSET)
        consistency: CreateRunInConsistency | Unset
        if isinstance(_consistency, Unset):
            consistency = UNSET
        else:
            consistency = CreateRunInConsistency(_consistency)

        data_policy = cast(list[str], d.pop("data_policy", UNSET))

        continue_from = d.pop("continue_from", UNSET)

        wait_s = d.pop("wait_s", UNSET)

        _script = d.pop("script", UNSET)
        script: list[ScriptError | ScriptFinal | ScriptToolCalls] | Unset = UNSET
        if _script is not UNSET:
            script = []
            for script_item_data in _script:

                def _parse_script_item(
                    data: object,
                ) -> ScriptError | ScriptFinal | ScriptToolCalls:
                    try:
                        if not isinstance(data, dict):
                            raise TypeError()
                        script_item_type_0 = ScriptToolCalls.from_dict(data)

                        return script_item_type_0
                    except (TypeError, ValueError, AttributeError, KeyError):
                        pass
                    try:
                        if not isinstance(data, dict):
                            raise TypeError()
                        script_item_type_1 = ScriptFinal.from_dict(data)

                        return script_item_type_1
                    except (TypeError, ValueError, AttributeError, KeyError):
                        pass
                    if not isinstance(data, dict):
                        raise TypeError()
                    script_item_type_2 = ScriptError.from_dict(data)

                    return script_item_type_2

                script_item = _parse_script_item(script_item_data)

                script.append(script_item)

        create_run_in = cls(
            agent=agent,
            input_=input_,
            tools=tools,
            limits=limits,
            parent_run_id=parent_run_id,
            metadata=metadata,
            consistency=consistency,
            data_policy=data_policy,
            continue_from=continue_from,
            wait_s=wait_s,
            script=script,
        )

        return create_run_in
