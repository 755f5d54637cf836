/**
 * The errors this client throws: one class per problem type the service answers (RFC 9457
 * `code`), so a caller catches `VersionConflict` rather than reading status codes.
 */
/** The base of every error of this client's own. */
export class ToolgateError extends Error {
    constructor(message, options) {
        super(message, options);
        this.name = new.target.name;
    }
}
/**
 * A problem answer (`application/problem+json`). `problem` is the whole body, members
 * beyond RFC 9457's included (`new_preview_id`, ...).
 */
export class ProblemError extends ToolgateError {
    /** The problem code this class stands for ("" for the base class). */
    static code = "";
    status;
    /** The problem's code (its slug), e.g. `not-found`; "" when the body named none. */
    code;
    title;
    detail;
    instance;
    traceId;
    /** `validation-error`: one item per invalid field (else empty). */
    errors;
    /** The server's `Retry-After`, in seconds, when it named one. */
    retryAfterS;
    problem;
    constructor(status, problem, retryAfterS) {
        const code = typeof problem["code"] === "string" ? problem["code"] : "";
        const title = typeof problem["title"] === "string" ? problem["title"] : "";
        const detail = typeof problem["detail"] === "string" ? problem["detail"] : "";
        super(`${status} ${code || title}: ${detail}`);
        this.status = status;
        this.code = code;
        this.title = title;
        this.detail = detail;
        this.instance = typeof problem["instance"] === "string" ? problem["instance"] : undefined;
        this.traceId = typeof problem["trace_id"] === "string" ? problem["trace_id"] : undefined;
        this.errors = fieldErrors(problem["errors"]);
        this.retryAfterS = retryAfterS;
        this.problem = problem;
    }
}
function fieldErrors(value) {
    if (!Array.isArray(value))
        return [];
    return value
        .filter((e) => typeof e === "object" && e !== null)
        .map((e) => ({ path: String(e["path"] ?? ""), message: String(e["message"] ?? "") }));
}
export class BadRequest extends ProblemError {
    static code = "bad-request";
}
export class IdempotencyKeyMissing extends ProblemError {
    static code = "idempotency-key-missing";
}
export class Unauthenticated extends ProblemError {
    static code = "unauthenticated";
}
export class Forbidden extends ProblemError {
    static code = "forbidden";
}
export class NotFound extends ProblemError {
    static code = "not-found";
}
export class MethodNotAllowed extends ProblemError {
    static code = "method-not-allowed";
}
export class InvalidState extends ProblemError {
    static code = "invalid-state";
}
export class IdempotencyKeyInFlight extends ProblemError {
    static code = "idempotency-key-in-flight";
}
export class PreviewMismatch extends ProblemError {
    static code = "preview-mismatch";
}
export class PreviewNotApproved extends ProblemError {
    static code = "preview-not-approved";
}
/** The resource changed since the preview: a new preview awaits approval. */
export class VersionConflict extends ProblemError {
    static code = "version-conflict";
    /** The preview made afresh for the call, to be approved in its turn. */
    get newPreviewId() {
        const id = this.problem["new_preview_id"];
        return typeof id === "string" ? id : undefined;
    }
}
export class PreviewExpired extends ProblemError {
    static code = "preview-expired";
}
export class PayloadTooLarge extends ProblemError {
    static code = "payload-too-large";
}
export class UnsupportedMediaType extends ProblemError {
    static code = "unsupported-media-type";
}
/** Some fields are invalid: `errors` names each one. */
export class ValidationError extends ProblemError {
    static code = "validation-error";
}
export class IdempotencyKeyReused extends ProblemError {
    static code = "idempotency-key-reused";
}
export class RateLimited extends ProblemError {
    static code = "rate-limited";
}
export class QuotaExceeded extends ProblemError {
    static code = "quota-exceeded";
}
export class InternalError extends ProblemError {
    static code = "internal";
}
export class Unavailable extends ProblemError {
    static code = "unavailable";
}
const classes = [
    BadRequest,
    IdempotencyKeyMissing,
    Unauthenticated,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    InvalidState,
    IdempotencyKeyInFlight,
    PreviewMismatch,
    PreviewNotApproved,
    VersionConflict,
    PreviewExpired,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationError,
    IdempotencyKeyReused,
    RateLimited,
    QuotaExceeded,
    InternalError,
    Unavailable,
];
/** The class of each problem code; an unknown code (a newer server) is a `ProblemError`. */
export const PROBLEM_CLASSES = Object.freeze(Object.fromEntries(classes.map((cls) => [cls.code, cls])));
/** A webhook whose signature or timestamp does not verify: do not act on it. */
export class WebhookVerificationError extends ToolgateError {
}
/**
 * An event stream could not be followed: `maxAttempts` failures in a row (an open that
 * failed, or a connection that ended within 5 s without an event). `lastEventId` is the
 * last event handed out: follow again from there (`after`).
 */
export class StreamBroken extends ToolgateError {
    lastEventId;
    constructor(lastEventId, options) {
        super(`the event stream kept failing; the last event seen was ${lastEventId ?? "none"}`, options);
        this.lastEventId = lastEventId;
    }
}
/** The run was still queued or running when the wait's own timeout ended. */
export class WaitTimeout extends ToolgateError {
    run;
    constructor(run) {
        super(`run ${run.id} is still ${run.status} after the wait's timeout`);
        this.run = run;
    }
}
/** `Retry-After` in seconds: delay-seconds or an HTTP date; undefined when absent or odd. */
export function retryAfterS(headers, now = Date.now()) {
    const value = headers.get("retry-after")?.trim();
    if (!value)
        return undefined;
    if (/^\d+(\.\d+)?$/.test(value))
        return Number(value);
    const when = Date.parse(value);
    if (Number.isNaN(when))
        return undefined;
    return Math.max(0, (when - now) / 1000);
}
/**
 * The error a non-2xx answer stands for, from its status, headers and body (parsed JSON,
 * or text when it was not JSON). A body that is not a problem (a proxy's page) still gives
 * a `ProblemError` with the status.
 */
export function problemOf(response, body) {
    const problem = typeof body === "object" && body !== null && !Array.isArray(body)
        ? body
        : {
            status: response.status,
            title: response.statusText,
            detail: typeof body === "string" ? body.slice(0, 500) : "",
        };
    const code = typeof problem["code"] === "string" ? problem["code"] : "";
    const cls = Object.hasOwn(PROBLEM_CLASSES, code)
        ? PROBLEM_CLASSES[code]
        : ProblemError;
    return new cls(response.status, problem, retryAfterS(response.headers));
}
//# sourceMappingURL=errors.js.map