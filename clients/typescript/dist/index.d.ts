/**
 * `@toolgate/client`: Toolgate's client for Node 18+ and browsers.
 *
 * ```ts
 * import { Toolgate, verifyWebhook } from "@toolgate/client";
 * const tg = new Toolgate({ baseUrl: "http://localhost:8000", apiKey: process.env.TOOLGATE_KEY });
 * const run = await tg.runs.createAndWait({ agent: "tech-radar", input: "Which database?" });
 * ```
 */
export { Toolgate } from "./client.js";
export type { RawClient, ToolgateOptions } from "./transport.js";
export { Runs, isMoving } from "./runs.js";
export type { KeyOptions, RunEventsOptions, WaitOptions } from "./runs.js";
export { Approvals } from "./approvals.js";
export { Events } from "./feed.js";
export type { TenantEventsOptions } from "./feed.js";
export { Webhooks } from "./endpoints.js";
export { verifyWebhook } from "./webhooks.js";
export type { VerifyOptions } from "./webhooks.js";
export { BadRequest, Forbidden, IdempotencyKeyInFlight, IdempotencyKeyMissing, IdempotencyKeyReused, InternalError, InvalidState, MethodNotAllowed, NotFound, PayloadTooLarge, PreviewExpired, PreviewMismatch, PreviewNotApproved, PROBLEM_CLASSES, ProblemError, QuotaExceeded, RateLimited, StreamBroken, ToolgateError, Unauthenticated, Unavailable, UnsupportedMediaType, ValidationError, VersionConflict, WaitTimeout, WebhookVerificationError, problemOf, retryAfterS, } from "./errors.js";
export type { FieldError, Problem, ProblemClass, ProblemCode } from "./errors.js";
export { retryingFetch } from "./retry.js";
export type { Fetch, RetryOptions } from "./retry.js";
export { SseParser } from "./sse.js";
export type { SseEvent } from "./sse.js";
export { newIdempotencyKey } from "./crypto.js";
export type * from "./types.js";
//# sourceMappingURL=index.d.ts.map