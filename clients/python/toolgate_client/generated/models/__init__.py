"""Contains all the data models used in inputs/outputs"""

from .accept_in import AcceptIn
from .advance_in import AdvanceIn
from .agent_out import AgentOut
from .agent_page import AgentPage
from .approval_out import ApprovalOut
from .approve_in import ApproveIn
from .audit_entry_out import AuditEntryOut
from .audit_entry_out_data import AuditEntryOutData
from .audit_page import AuditPage
from .call_error_out import CallErrorOut
from .call_out import CallOut
from .call_page import CallPage
from .call_status import CallStatus
from .citation import Citation
from .commit_in import CommitIn
from .commit_out import CommitOut
from .create_key_in import CreateKeyIn
from .create_run_in import CreateRunIn
from .create_run_in_consistency import CreateRunInConsistency
from .create_run_in_metadata import CreateRunInMetadata
from .create_webhook_in import CreateWebhookIn
from .delivery_attempt_out import DeliveryAttemptOut
from .delivery_out import DeliveryOut
from .delivery_out_status import DeliveryOutStatus
from .delivery_page import DeliveryPage
from .diagnosis_category import DiagnosisCategory
from .diagnosis_out import DiagnosisOut
from .event_out import EventOut
from .event_out_data import EventOutData
from .event_page import EventPage
from .event_type import EventType
from .field_error_out import FieldErrorOut
from .finding_out import FindingOut
from .healthz_response_healthz import HealthzResponseHealthz
from .key_created_out import KeyCreatedOut
from .key_out import KeyOut
from .key_page import KeyPage
from .limits_in import LimitsIn
from .limits_out import LimitsOut
from .me_out import MeOut
from .pending_approval import PendingApproval
from .pending_declaration_out import PendingDeclarationOut
from .pending_declaration_out_annotations_type_0 import (
    PendingDeclarationOutAnnotationsType0,
)
from .preview_out import PreviewOut
from .preview_out_impact import PreviewOutImpact
from .preview_page import PreviewPage
from .preview_status import PreviewStatus
from .problem import Problem
from .problem_type_out import ProblemTypeOut
from .ready_out import ReadyOut
from .reject_in import RejectIn
from .reserved_out import ReservedOut
from .revise_in import ReviseIn
from .revise_in_arguments import ReviseInArguments
from .revise_out import ReviseOut
from .revision_out import RevisionOut
from .role import Role
from .run_error import RunError
from .run_out import RunOut
from .run_out_consistency import RunOutConsistency
from .run_out_metadata_type_0 import RunOutMetadataType0
from .run_output import RunOutput
from .run_page import RunPage
from .run_status import RunStatus
from .script_call import ScriptCall
from .script_call_arguments_type_0 import ScriptCallArgumentsType0
from .script_error import ScriptError
from .script_final import ScriptFinal
from .script_tool_calls import ScriptToolCalls
from .tenant_event_out import TenantEventOut
from .tenant_event_out_data import TenantEventOutData
from .tenant_event_page import TenantEventPage
from .termination_reason import TerminationReason
from .tool_out import ToolOut
from .tool_out_input_schema import ToolOutInputSchema
from .tool_out_output_schema_type_0 import ToolOutOutputSchemaType0
from .tool_page import ToolPage
from .usage import Usage
from .usage_out import UsageOut
from .webhook_out import WebhookOut
from .webhook_page import WebhookPage
from .webhook_secret_out import WebhookSecretOut

__all__ = (
    "AcceptIn",
    "AdvanceIn",
    "AgentOut",
    "AgentPage",
    "ApprovalOut",
    "ApproveIn",
    "AuditEntryOut",
    "AuditEntryOutData",
    "AuditPage",
    "CallErrorOut",
    "CallOut",
    "CallPage",
    "CallStatus",
    "Citation",
    "CommitIn",
    "CommitOut",
    "CreateKeyIn",
    "CreateRunIn",
    "CreateRunInConsistency",
    "CreateRunInMetadata",
    "CreateWebhookIn",
    "DeliveryAttemptOut",
    "DeliveryOut",
    "DeliveryOutStatus",
    "DeliveryPage",
    "DiagnosisCategory",
    "DiagnosisOut",
    "EventOut",
    "EventOutData",
    "EventPage",
    "EventType",
    "FieldErrorOut",
    "FindingOut",
    "HealthzResponseHealthz",
    "KeyCreatedOut",
    "KeyOut",
    "KeyPage",
    "LimitsIn",
    "LimitsOut",
    "MeOut",
    "PendingApproval",
    "PendingDeclarationOut",
    "PendingDeclarationOutAnnotationsType0",
    "PreviewOut",
    "PreviewOutImpact",
    "PreviewPage",
    "PreviewStatus",
    "Problem",
    "ProblemTypeOut",
    "ReadyOut",
    "RejectIn",
    "ReservedOut",
    "ReviseIn",
    "ReviseInArguments",
    "ReviseOut",
    "RevisionOut",
    "Role",
    "RunError",
    "RunOut",
    "RunOutConsistency",
    "RunOutMetadataType0",
    "RunOutput",
    "RunPage",
    "RunStatus",
    "ScriptCall",
    "ScriptCallArgumentsType0",
    "ScriptError",
    "ScriptFinal",
    "ScriptToolCalls",
    "TenantEventOut",
    "TenantEventOutData",
    "TenantEventPage",
    "TerminationReason",
    "ToolOut",
    "ToolOutInputSchema",
    "ToolOutOutputSchemaType0",
    "ToolPage",
    "Usage",
    "UsageOut",
    "WebhookOut",
    "WebhookPage",
    "WebhookSecretOut",
)
