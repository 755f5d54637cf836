// @ts-check
// Generated from the OpenAPI document by `make openapi` (`python -m app console-schema`):
// do not edit. The API's enums as lists, and its schemas as JSDoc types.

/** @typedef {"pending" | "rejected" | "awaiting_approval" | "approved" | "executing" | "succeeded" | "failed" | "cancelled"} CallStatus */
/** @type {readonly CallStatus[]} */
export const CALL_STATUSES = Object.freeze([
  "pending",
  "rejected",
  "awaiting_approval",
  "approved",
  "executing",
  "succeeded",
  "failed",
  "cancelled",
]);

/** @typedef {"rate_limited" | "auth" | "unavailable" | "rejected" | "content_filtered" | "truncated" | "malformed_output" | "unknown_tool" | "invalid_arguments" | "permission_denied" | "budget_denied" | "approval_rejected" | "approval_expired" | "timeout" | "failed" | "invalid_output" | "outcome_unknown" | "repeated_call" | "ignored_feedback" | "no_progress" | "stopped_early" | "max_steps" | "deadline" | "budget" | "context_exhausted" | "cancelled" | "policy_denied" | "internal" | "needs_review" | "final"} DiagnosisCategory */
/** @type {readonly DiagnosisCategory[]} */
export const DIAGNOSIS_CATEGORIES = Object.freeze([
  "rate_limited",
  "auth",
  "unavailable",
  "rejected",
  "content_filtered",
  "truncated",
  "malformed_output",
  "unknown_tool",
  "invalid_arguments",
  "permission_denied",
  "budget_denied",
  "approval_rejected",
  "approval_expired",
  "timeout",
  "failed",
  "invalid_output",
  "outcome_unknown",
  "repeated_call",
  "ignored_feedback",
  "no_progress",
  "stopped_early",
  "max_steps",
  "deadline",
  "budget",
  "context_exhausted",
  "cancelled",
  "policy_denied",
  "internal",
  "needs_review",
  "final",
]);

/** @typedef {"run.created" | "run.claimed" | "run.cancel_requested" | "run.finished" | "turn.completed" | "turn.failed" | "final.rejected" | "step.failed" | "sources.assigned" | "call.proposed" | "call.rejected" | "call.awaiting_approval" | "call.approved" | "call.revised" | "call.rejected_by_approver" | "call.started" | "call.succeeded" | "call.failed" | "call.cancelled" | "preview.created" | "preview.approval_added" | "preview.approved" | "preview.rejected" | "preview.commit_requested" | "preview.committed" | "preview.superseded" | "preview.expired" | "guardrail.before_call" | "guardrail.after_call" | "guardrail.on_final"} EventType */
/** @type {readonly EventType[]} */
export const EVENT_TYPES = Object.freeze([
  "run.created",
  "run.claimed",
  "run.cancel_requested",
  "run.finished",
  "turn.completed",
  "turn.failed",
  "final.rejected",
  "step.failed",
  "sources.assigned",
  "call.proposed",
  "call.rejected",
  "call.awaiting_approval",
  "call.approved",
  "call.revised",
  "call.rejected_by_approver",
  "call.started",
  "call.succeeded",
  "call.failed",
  "call.cancelled",
  "preview.created",
  "preview.approval_added",
  "preview.approved",
  "preview.rejected",
  "preview.commit_requested",
  "preview.committed",
  "preview.superseded",
  "preview.expired",
  "guardrail.before_call",
  "guardrail.after_call",
  "guardrail.on_final",
]);

/** @typedef {"pending" | "approved" | "rejected" | "expired" | "superseded" | "committed"} PreviewStatus */
/** @type {readonly PreviewStatus[]} */
export const PREVIEW_STATUSES = Object.freeze([
  "pending",
  "approved",
  "rejected",
  "expired",
  "superseded",
  "committed",
]);

/** @typedef {"caller" | "approver" | "admin"} Role */
/** @type {readonly Role[]} */
export const ROLES = Object.freeze([
  "caller",
  "approver",
  "admin",
]);

/** @typedef {"queued" | "running" | "awaiting_approval" | "finished"} RunStatus */
/** @type {readonly RunStatus[]} */
export const RUN_STATUSES = Object.freeze([
  "queued",
  "running",
  "awaiting_approval",
  "finished",
]);

/** @typedef {"final" | "max_steps" | "deadline" | "budget" | "cancelled" | "policy_denied" | "tool_failed" | "model_failed" | "context_exhausted"} TerminationReason */
/** @type {readonly TerminationReason[]} */
export const TERMINATION_REASONS = Object.freeze([
  "final",
  "max_steps",
  "deadline",
  "budget",
  "cancelled",
  "policy_denied",
  "tool_failed",
  "model_failed",
  "context_exhausted",
]);

/**
 * @typedef {object} AcceptIn
 * @property {string} declaration_hash
 */

/**
 * @typedef {object} AdvanceIn
 * @property {number} [wait_s]
 */

/**
 * @typedef {object} AgentOut
 * @property {string} name
 * @property {string} model
 * @property {string} instructions
 * @property {Array<string>} tools
 * @property {LimitsOut} limits
 */

/**
 * @typedef {object} AgentPage
 * @property {Array<AgentOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} ApprovalOut
 * @property {string} by
 * @property {string} at
 */

/**
 * @typedef {object} ApproveIn
 * @property {string} content_hash
 */

/**
 * @typedef {object} AuditEntryOut
 * @property {number} seq
 * @property {string} at
 * @property {string} actor
 * @property {string} action
 * @property {string} target
 * @property {Record<string, unknown>} data
 * @property {string} prev_hash
 * @property {string} hash
 */

/**
 * @typedef {object} AuditPage
 * @property {Array<AuditEntryOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} CallErrorOut
 * @property {string} code
 * @property {boolean} retryable
 * @property {string | null} message
 */

/**
 * @typedef {object} CallOut
 * @property {string} id
 * @property {string} call_id
 * @property {number} step
 * @property {string} tool
 * @property {CallStatus} status
 * @property {unknown} arguments
 * @property {string} args_hash
 * @property {string} operation_id
 * @property {number} attempts
 * @property {CallErrorOut | null} error
 * @property {unknown} output
 * @property {string | null} source_id
 * @property {string | null} observed_at
 * @property {string | null} source_version
 * @property {string | null} preview_id
 * @property {unknown} proposed_arguments
 * @property {RevisionOut | null} revision
 * @property {boolean} output_withheld
 * @property {"untrusted"} trust
 */

/**
 * @typedef {object} CallPage
 * @property {Array<CallOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} Citation
 * @property {string} source_id
 * @property {string} tool
 * @property {string | null} observed_at
 * @property {string | null} source_version
 */

/**
 * @typedef {object} CommitIn
 * @property {number} [wait_s]
 */

/**
 * @typedef {object} CommitOut
 * @property {PreviewOut} preview
 * @property {CallOut} call
 * @property {RunOut} run
 */

/**
 * @typedef {object} CreateKeyIn
 * @property {string} name
 * @property {Array<Role>} roles
 * @property {Array<string>} scopes
 * @property {string} [subject]
 */

/**
 * @typedef {object} CreateRunIn
 * @property {string} agent
 * @property {string} [input]
 * @property {Array<string>} [tools]
 * @property {LimitsIn} [limits]
 * @property {string} [parent_run_id]
 * @property {Record<string, unknown>} [metadata]
 * @property {"latest" | "snapshot"} [consistency]
 * @property {Array<string>} [data_policy]
 * @property {string} [continue_from]
 * @property {number} [wait_s]
 * @property {Array<ScriptToolCalls | ScriptFinal | ScriptError>} [script]
 */

/**
 * @typedef {object} CreateWebhookIn
 * @property {string} url
 * @property {Array<EventType>} events
 */

/**
 * @typedef {object} DeliveryAttemptOut
 * @property {string} at
 * @property {number | null} status_code
 * @property {number | null} latency_ms
 * @property {string | null} error
 * @property {boolean} counted
 */

/**
 * @typedef {object} DeliveryOut
 * @property {string} id
 * @property {string} run_id
 * @property {number} seq
 * @property {EventType} type
 * @property {"pending" | "succeeded" | "failed" | "abandoned"} status
 * @property {Array<DeliveryAttemptOut>} attempts
 * @property {string | null} next_attempt_at
 * @property {string} created_at
 * @property {string | null} finished_at
 */

/**
 * @typedef {object} DeliveryPage
 * @property {Array<DeliveryOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} DiagnosisOut
 * @property {FindingOut | null} first_deviation
 * @property {FindingOut | null} root_cause
 * @property {FindingOut | null} terminal_cause
 */

/**
 * @typedef {object} EventOut
 * @property {number} seq
 * @property {EventType} type
 * @property {string} at
 * @property {Record<string, unknown>} data
 */

/**
 * @typedef {object} EventPage
 * @property {Array<EventOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} FindingOut
 * @property {number} seq
 * @property {DiagnosisCategory} category
 * @property {string} explanation
 */

/**
 * @typedef {object} KeyCreatedOut
 * @property {string} id
 * @property {string | null} key
 * @property {string} prefix
 * @property {string} name
 * @property {string} subject
 * @property {Array<string>} roles
 * @property {Array<string> | null} scopes
 * @property {string} created_at
 */

/**
 * @typedef {object} KeyOut
 * @property {string} id
 * @property {string} name
 * @property {string | null} prefix
 * @property {string} subject
 * @property {Array<string>} roles
 * @property {Array<string> | null} scopes
 * @property {string} created_at
 * @property {string | null} created_by
 * @property {string | null} last_used_at
 * @property {string | null} revoked_at
 */

/**
 * @typedef {object} KeyPage
 * @property {Array<KeyOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} LimitsIn
 * @property {number} [max_steps]
 * @property {number} [deadline_s]
 * @property {number} [max_tokens]
 * @property {number} [max_cost_usd]
 * @property {number} [max_tool_calls]
 */

/**
 * @typedef {object} LimitsOut
 * @property {number} max_steps
 * @property {number} deadline_s
 * @property {number} max_tokens
 * @property {number} max_cost_usd
 * @property {number} max_tool_calls
 */

/**
 * @typedef {object} MeOut
 * @property {string} tenant
 * @property {string} subject
 * @property {Array<string>} roles
 * @property {Array<string> | null} scopes
 */

/**
 * @typedef {object} PendingApproval
 * @property {string} preview_id
 * @property {string} call_id
 * @property {string} tool
 * @property {string} summary
 * @property {string} expires_at
 */

/**
 * @typedef {object} PendingDeclarationOut
 * @property {string} declaration_hash
 * @property {string | null} description
 * @property {unknown} input_schema
 * @property {unknown} output_schema
 * @property {Record<string, unknown> | null} annotations
 * @property {Array<string>} held_for
 * @property {string | null} seen_at
 */

/**
 * @typedef {object} PreviewOut
 * @property {string} id
 * @property {string} run_id
 * @property {string} call_id
 * @property {number} step
 * @property {string} tool
 * @property {unknown} arguments
 * @property {string} args_hash
 * @property {string} content_hash
 * @property {string} summary
 * @property {Record<string, unknown>} impact
 * @property {number} cost_usd
 * @property {string | null} resource_version
 * @property {PreviewStatus} status
 * @property {string} requested_by
 * @property {string} expires_at
 * @property {string} created_at
 * @property {number} approvals_required
 * @property {Array<ApprovalOut>} approvals
 * @property {string | null} revised_by
 * @property {string | null} revision_reason
 * @property {string | null} decided_by
 * @property {string | null} decided_at
 * @property {string | null} reason
 * @property {string | null} committed_by
 * @property {string | null} committed_at
 * @property {string | null} supersedes
 * @property {string | null} superseded_by
 */

/**
 * @typedef {object} PreviewPage
 * @property {Array<PreviewOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} ProblemTypeOut
 * @property {string} type
 * @property {string} code
 * @property {number} status
 * @property {string} title
 * @property {string} meaning
 * @property {string} action
 */

/**
 * @typedef {object} ReadyOut
 * @property {"ready"} status
 * @property {string} revision
 */

/**
 * @typedef {object} RejectIn
 * @property {string} reason
 */

/**
 * @typedef {object} ReservedOut
 * @property {number} tokens
 * @property {number} cost_usd
 * @property {number} tool_calls
 */

/**
 * @typedef {object} ReviseIn
 * @property {Record<string, unknown>} arguments
 * @property {string} reason
 */

/**
 * @typedef {object} ReviseOut
 * @property {PreviewOut} preview
 */

/**
 * @typedef {object} RevisionOut
 * @property {string} by
 * @property {string} reason
 * @property {string} at
 */

/**
 * @typedef {object} RunError
 * @property {string} code
 * @property {string} message
 */

/**
 * @typedef {object} RunOut
 * @property {string} id
 * @property {string} agent
 * @property {string} input
 * @property {RunStatus} status
 * @property {TerminationReason | null} [termination_reason]
 * @property {RunOutput | null} [output]
 * @property {RunError | null} [error]
 * @property {string | null} [parent_run_id]
 * @property {string} root_run_id
 * @property {Record<string, unknown> | null} [metadata]
 * @property {Array<string>} tools
 * @property {LimitsOut} limits
 * @property {UsageOut} usage
 * @property {ReservedOut} reserved
 * @property {Array<PendingApproval>} pending_approvals
 * @property {"latest" | "snapshot"} consistency
 * @property {string | null} [as_of]
 * @property {string} created_at
 * @property {string} updated_at
 * @property {string} deadline_at
 * @property {number} version
 * @property {string | null} [config_hash]
 * @property {string | null} [continued_from]
 */

/**
 * @typedef {object} RunOutput
 * @property {string} text
 * @property {Array<Citation>} citations
 * @property {unknown} [data]
 */

/**
 * @typedef {object} RunPage
 * @property {Array<RunOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} ScriptCall
 * @property {string} id
 * @property {string} name
 * @property {Record<string, unknown> | string} [arguments]
 * @property {Array<ScriptToolCalls | ScriptFinal | ScriptError>} [script]
 */

/**
 * @typedef {object} ScriptError
 * @property {"error"} type
 * @property {string} code
 * @property {boolean} [retryable]
 * @property {string} [message]
 * @property {Usage} [usage]
 * @property {number} [delay_ms]
 */

/**
 * @typedef {object} ScriptFinal
 * @property {"final"} type
 * @property {unknown} [data]
 * @property {string} [text]
 * @property {Usage} [usage]
 * @property {number} [delay_ms]
 */

/**
 * @typedef {object} ScriptToolCalls
 * @property {"tool_calls"} type
 * @property {Array<ScriptCall>} calls
 * @property {string} [text]
 * @property {Usage} [usage]
 * @property {number} [delay_ms]
 */

/**
 * @typedef {object} TenantEventOut
 * @property {number} seq
 * @property {EventType} type
 * @property {string} at
 * @property {Record<string, unknown>} data
 * @property {string} id
 * @property {string} run_id
 */

/**
 * @typedef {object} TenantEventPage
 * @property {Array<TenantEventOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} ToolOut
 * @property {string} name
 * @property {string} description
 * @property {Record<string, unknown>} input_schema
 * @property {Record<string, unknown> | null} output_schema
 * @property {string} risk
 * @property {boolean} requires_approval
 * @property {boolean} side_effects
 * @property {boolean} idempotent
 * @property {Array<string>} permissions
 * @property {number} timeout_s
 * @property {string | null} concurrency_group
 * @property {number | null} max_concurrency
 * @property {number} cost_usd
 * @property {boolean} enabled
 * @property {PendingDeclarationOut | null} pending_declaration
 */

/**
 * @typedef {object} ToolPage
 * @property {Array<ToolOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} Usage
 * @property {number} [input_tokens]
 * @property {number} [output_tokens]
 */

/**
 * @typedef {object} UsageOut
 * @property {number} steps
 * @property {number} input_tokens
 * @property {number} output_tokens
 * @property {number} cost_usd
 * @property {number} tool_calls
 */

/**
 * @typedef {object} WebhookOut
 * @property {string} id
 * @property {string} url
 * @property {Array<EventType>} events
 * @property {string} created_at
 * @property {string} created_by
 * @property {string | null} disabled_at
 * @property {string | null} disabled_reason
 * @property {string | null} previous_secret_expires_at
 */

/**
 * @typedef {object} WebhookPage
 * @property {Array<WebhookOut>} items
 * @property {string | null} next_cursor
 */

/**
 * @typedef {object} WebhookSecretOut
 * @property {string} id
 * @property {string} url
 * @property {Array<EventType>} events
 * @property {string} created_at
 * @property {string} created_by
 * @property {string | null} disabled_at
 * @property {string | null} disabled_reason
 * @property {string | null} previous_secret_expires_at
 * @property {string | null} secret
 */

/**
 * @typedef {object} FieldErrorOut
 * @property {string} path
 * @property {string} message
 */

/**
 * @typedef {object} Problem
 * @property {string} type
 * @property {string} title
 * @property {number} status
 * @property {string} detail
 * @property {string} instance
 * @property {string} code
 * @property {string} trace_id
 * @property {Array<FieldErrorOut>} [errors]
 */
