/**
 * The errors this client throws: one class per problem type the service answers (RFC 9457
 * `code`), so a caller catches `VersionConflict` rather than reading status codes.
 */

import type { Run } from "./types.js";

/** The base of every error of this client's own. */
export class ToolgateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
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
export class ProblemError extends ToolgateError {
  /** The problem code this class stands for ("" for the base class). */
  static readonly code: string = "";

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

  constructor(status: number, problem: Problem, retryAfterS?: number) {
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

function fieldErrors(value: unknown): FieldError[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null)
    .map((e) => ({ path: String(e["path"] ?? ""), message: String(e["message"] ?? "") }));
}

export class BadRequest extends ProblemError {
  static override readonly code = "bad-request";
}
export class IdempotencyKeyMissing extends ProblemError {
  static override readonly code = "idempotency-key-missing";
}
export class Unauthenticated extends ProblemError {
  static override readonly code = "unauthenticated";
}
export class Forbidden extends ProblemError {
  static override readonly code = "forbidden";
}
export class NotFound extends ProblemError {
  static override readonly code = "not-found";
}
export class MethodNotAllowed extends ProblemError {
  static override readonly code = "method-not-allowed";
}
export class InvalidState extends ProblemError {
  static override readonly code = "invalid-state";
}
export class IdempotencyKeyInFlight extends ProblemError {
  static override readonly code = "idempotency-key-in-flight";
}
export class PreviewMismatch extends ProblemError {
  static override readonly code = "preview-mismatch";
}
export class PreviewNotApproved extends ProblemError {
  static override readonly code = "preview-not-approved";
}
/** The resource changed since the preview: a new preview awaits approval. */
export class VersionConflict extends ProblemError {
  static override readonly code = "version-conflict";

  /** The preview made afresh for the call, to be approved in its turn. */
  get newPreviewId(): string | undefined {
    const id = this.problem["new_preview_id"];
    return typeof id === "string" ? id : undefined;
  }
}
export class PreviewExpired extends ProblemError {
  static override readonly code = "preview-expired";
}
export class PayloadTooLarge extends ProblemError {
  static override readonly code = "payload-too-large";
}
export class UnsupportedMediaType extends ProblemError {
  static override readonly code = "unsupported-media-type";
}
/** Some fields are invalid: `errors` names each one. */
export class ValidationError extends ProblemError {
  static override readonly code = "validation-error";
}
export class IdempotencyKeyReused extends ProblemError {
  static override readonly code = "idempotency-key-reused";
}
export class RateLimited extends ProblemError {
  static override readonly code = "rate-limited";
}
export class QuotaExceeded extends ProblemError {
  static override readonly code = "quota-exceeded";
}
export class InternalError extends ProblemError {
  static override readonly code = "internal";
}
export class Unavailable extends ProblemError {
  static override readonly code = "unavailable";
}

/** A class of `ProblemError`, as `PROBLEM_CLASSES` holds them. */
export type ProblemClass = new (
  status: number,
  problem: Problem,
  retryAfterS?: number,
) => ProblemError;

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
] as const;

/** The problem codes the service answers. */
export type ProblemCode = (typeof classes)[number]["code"];

/** The class of each problem code; an unknown code (a newer server) is a `ProblemError`. */
export const PROBLEM_CLASSES: Readonly<Record<ProblemCode, ProblemClass>> = Object.freeze(
  Object.fromEntries(classes.map((cls) => [cls.code, cls])) as unknown as Record<
    ProblemCode,
    ProblemClass
  >,
);

/** A webhook whose signature or timestamp does not verify: do not act on it. */
export class WebhookVerificationError extends ToolgateError {}

/**
 * An event stream could not be followed: `maxAttempts` failures in a row (an open that
 * failed, or a connection that ended within 5 s without an event). `lastEventId` is the
 * last event handed out: follow again from there (`after`).
 */
export class StreamBroken extends ToolgateError {
  readonly lastEventId: string | undefined;

  constructor(lastEventId: string | undefined, options?: { cause?: unknown }) {
    super(
      `the event stream kept failing; the last event seen was ${lastEventId ?? "none"}`,
      options,
    );
    this.lastEventId = lastEventId;
  }
}

/** The run was still queued or running when the wait's own timeout ended. */
export class WaitTimeout extends ToolgateError {
  readonly run: Run;

  constructor(run: Run) {
    super(`run ${run.id} is still ${run.status} after the wait's timeout`);
    this.run = run;
  }
}

/** `Retry-After` in seconds: delay-seconds or an HTTP date; undefined when absent or odd. */
export function retryAfterS(headers: Headers, now: number = Date.now()): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const when = Date.parse(value);
  if (Number.isNaN(when)) return undefined;
  return Math.max(0, (when - now) / 1000);
}

/**
 * The error a non-2xx answer stands for, from its status, headers and body (parsed JSON,
 * or text when it was not JSON). A body that is not a problem (a proxy's page) still gives
 * a `ProblemError` with the status.
 */
export function problemOf(response: Response, body: unknown): ProblemError {
  const problem: Problem =
    typeof body === "object" && body !== null && !Array.isArray(body)
      ? (body as Problem)
      : {
          status: response.status,
          title: response.statusText,
          detail: typeof body === "string" ? body.slice(0, 500) : "",
        };
  const code = typeof problem["code"] === "string" ? problem["code"] : "";
  const cls: ProblemClass = Object.hasOwn(PROBLEM_CLASSES, code)
    ? PROBLEM_CLASSES[code as ProblemCode]
    : ProblemError;
  return new cls(response.status, problem, retryAfterS(response.headers));
}
