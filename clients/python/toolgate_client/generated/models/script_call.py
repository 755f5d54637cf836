from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.script_call_arguments_type_0 import ScriptCallArgumentsType0
    from ..models.script_error import ScriptError
    from ..models.script_final import ScriptFinal
    from ..models.script_tool_calls import ScriptToolCalls


T = TypeVar("T", bound="ScriptCall")


@_attrs_define
class ScriptCall:
    """
    Attributes:
        id (str):
        name (str):
        arguments (ScriptCallArgumentsType0 | str | Unset):
        script (list[ScriptError | ScriptFinal | ScriptToolCalls] | Unset): For a call to an `agent` tool whose agent is
            on a scripted model: the child run's script.
    """

    id: str
    name: str
    arguments: ScriptCallArgumentsType0 | str | Unset = UNSET
    script: list[ScriptError | ScriptFinal | ScriptToolCalls] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.script_call_arguments_type_0 import ScriptCallArgumentsType0
        from ..models.script_final import ScriptFinal
        from ..models.script_tool_calls import ScriptToolCalls

        id = self.id

        name = self.name

        arguments: dict[str, Any] | str | Unset
        if isinstance(self.arguments, Unset):
            arguments = UNSET
        elif isinstance(self.arguments, ScriptCallArgumentsType0):
            arguments = self.arguments.to_dict()
        else:
            arguments = self.arguments

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
                "id": id,
                "name": name,
            }
        )
        if arguments is not UNSET:
            field_dict["arguments"] = arguments
        if script is not UNSET:
            field_dict["script"] = script

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.script_call_arguments_type_0 import ScriptCallArgumentsType0
        from ..models.script_error import ScriptError
        from ..models.script_final import ScriptFinal
        from ..models.script_tool_calls import ScriptToolCalls

        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        def _parse_arguments(data: object) -> ScriptCallArgumentsType0 | str | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                arguments_type_0 = ScriptCallArgumentsType0.from_dict(data)

                return arguments_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ScriptCallArgumentsType0 | str | Unset, data)

        arguments = _parse_arguments(d.pop("arguments", UNSET))

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

        script_call = cls(
            id=id,
            name=name,
            arguments=arguments,
            script=script,
        )

        return script_call
