/**
 * The errors this client throws: one class per problem type the service answers (RFC 9457
 * `code`), so a caller catches `VersionConflict` rather than reading status codes.
 */
import type { Run } from "./types.js";
/** The base of every error of this client's own. */
export declare class ToolgateError extends Error {
    constructor(message: string, options?: {
        cause?: unknown;
    });
}
/** One invalid field of a `validation-error`. */
export interface FieldError {
    path: string;
    message: string;
}
/** A problem document as it came (members beyond RFC 9457's included). */
export type Problem = Record<string, unknown>;
/**
 * A problem answer (`application/problem+json`). `problem` is the whole body, members
 * beyond RFC 9457's included (`new_preview_id`, ...).
 */
export declare class ProblemError extends ToolgateError {
    /** The problem code this class stands for ("" for the base class). */
    static readonly code: string;
    readonly status: number;
    /** The problem's code (its slug), e.g. `not-found`; "" when the body named none. */
    readonly code: string;
    readonly title: string;
    readonly detail: string;
    readonly instance: string | undefined;
    readonly traceId: string | undefined;
    /** `validation-error`: one item per invalid field (else empty). */
    readonly errors: FieldError[];
    /** The server's `Retry-After`, in seconds, when it named one. */
    readonly retryAfterS: number | undefined;
    readonly problem: Problem;
    constructor(status: number, problem: Problem, retryAfterS?: number);
}
export declare class BadRequest extends ProblemError {
    static readonly code = "bad-request";
}
export declare class IdempotencyKeyMissing extends ProblemError {
    static readonly code = "idempotency-key-missing";
}
export declare class Unauthenticated extends ProblemError {
    static readonly code = "unauthenticated";
}
export declare class Forbidden extends ProblemError {
    static readonly code = "forbidden";
}
export declare class NotFound extends ProblemError {
    static readonly code = "not-found";
}
export declare class MethodNotAllowed extends ProblemError {
    static readonly code = "method-not-allowed";
}
export declare class InvalidState extends ProblemError {
    static readonly code = "invalid-state";
}
export declare class IdempotencyKeyInFlight extends ProblemError {
    static readonly code = "idempotency-key-in-flight";
}
export declare class PreviewMismatch extends ProblemError {
    static readonly code = "preview-mismatch";
}
export declare class PreviewNotApproved extends ProblemError {
    static readonly code = "preview-not-approved";
}
/** The resource changed since the preview: a new preview awaits approval. */
export declare class VersionConflict extends ProblemError {
    static readonly code = "version-conflict";
    /** The preview made afresh for the call, to be approved in its turn. */
    get newPreviewId(): string | undefined;
}
export declare class PreviewExpired extends ProblemError {
    static readonly code = "preview-expired";
}
export declare class PayloadTooLarge extends ProblemError {
    static readonly code = "payload-too-large";
}
export declare class UnsupportedMediaType extends ProblemError {
    static readonly code = "unsupported-media-type";
}
/** Some fields are invalid: `errors` names each one. */
export declare class ValidationError extends ProblemError {
    static readonly code = "validation-error";
}
export declare class IdempotencyKeyReused extends ProblemError {
    static readonly code = "idempotency-key-reused";
}
export declare class RateLimited extends ProblemError {
    static readonly code = "rate-limited";
}
export declare class QuotaExceeded extends ProblemError {
    static readonly code = "quota-exceeded";
}
export declare class InternalError extends ProblemError {
    static readonly code = "internal";
}
export declare class Unavailable extends ProblemError {
    static readonly code = "unavailable";
}
/** A class of `ProblemError`, as `PROBLEM_CLASSES` holds them. */
export type ProblemClass = new (status: number, problem: Problem, retryAfterS?: number) => ProblemError;
declare const classes: readonly [typeof BadRequest, typeof IdempotencyKeyMissing, typeof Unauthenticated, typeof Forbidden, typeof NotFound, typeof MethodNotAllowed, typeof InvalidState, typeof IdempotencyKeyInFlight, typeof PreviewMismatch, typeof PreviewNotApproved, typeof VersionConflict, typeof PreviewExpired, typeof PayloadTooLarge, typeof UnsupportedMediaType, typeof ValidationError, typeof IdempotencyKeyReused, typeof RateLimited, typeof QuotaExceeded, typeof InternalError, typeof Unavailable];
/** The problem codes the service answers. */
export type ProblemCode = (typeof classes)[number]["code"];
/** The class of each problem code; an unknown code (a newer server) is a `ProblemError`. */
export declare const PROBLEM_CLASSES: Readonly<Record<ProblemCode, ProblemClass>>;
/** A webhook whose signature or timestamp does not verify: do not act on it. */
export declare class WebhookVerificationError extends ToolgateError {
}
/**
 * An event stream could not be followed: `maxAttempts` failures in a row (an open that
 * failed, or a connection that ended within 5 s without an event). `lastEventId` is the
 * last event handed out: follow again from there (`after`).
 */
export declare class StreamBroken extends ToolgateError {
    readonly lastEventId: string | undefined;
    constructor(lastEventId: string | undefined, options?: {
        cause?: unknown;
    });
}
/** The run was still queued or running when the wait's own timeout ended. */
export declare class WaitTimeout extends ToolgateError {
    readonly run: Run;
    constructor(run: Run);
}
/** `Retry-After` in seconds: delay-seconds or an HTTP date; undefined when absent or odd. */
export declare function retryAfterS(headers: Headers, now?: number): number | undefined;
/**
 * The error a non-2xx answer stands for, from its status, headers and body (parsed JSON,
 * or text when it was not JSON). A body that is not a problem (a proxy's page) still gives
 * a `ProblemError` with the status.
 */
export declare function problemOf(response: Response, body: unknown): ProblemError;
export {};
//# sourceMappingURL=errors.d.ts.map