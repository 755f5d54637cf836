/** The service's shapes under short names (all generated from the OpenAPI document). */
import type { components, operations, paths } from "./schema.js";
export type { components, operations, paths };
type Schemas = components["schemas"];
export type Run = Schemas["RunOut"];
export type CreateRun = Schemas["CreateRunIn"];
export type RunStatus = Schemas["RunStatus"];
export type Call = Schemas["CallOut"];
export type RunEvent = Schemas["EventOut"];
export type EventType = Schemas["EventType"];
/** A run's event as the tenant-wide feed shows it: `id` is the feed's cursor. */
export type TenantEvent = Schemas["TenantEventOut"];
export type Preview = Schemas["PreviewOut"];
export type PreviewStatus = Schemas["PreviewStatus"];
export type PendingApproval = Schemas["PendingApproval"];
export type Commit = Schemas["CommitOut"];
export type Webhook = Schemas["WebhookOut"];
/** A webhook endpoint as registered or rotated: with its signing secret, shown only then. */
export type WebhookWithSecret = Schemas["WebhookSecretOut"];
export type CreateWebhook = Schemas["CreateWebhookIn"];
export type Delivery = Schemas["DeliveryOut"];
/** What a webhook delivers: `{id, run_id, seq, type, at, data}`, as the tenant feed shows it. */
export type WebhookEvent = TenantEvent;
export type ListRunsQuery = Omit<NonNullable<operations["list_runs"]["parameters"]["query"]>, "cursor">;
//# sourceMappingURL=types.d.ts.map