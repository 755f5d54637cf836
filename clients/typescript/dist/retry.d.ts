/**
 * The retry policy, as a `fetch` that openapi-fetch calls: an answer that asks to be tried
 * again (`409 idempotency-key-in-flight`, `429`, `502`, `503`, `504`) or a network error (a
 * body cut short too) is retried, but only for a request that is safe to repeat: an
 * idempotent method, or one that carries an `Idempotency-Key` (the server answers a repeat
 * with the first answer). The wait is the server's `Retry-After` plus up to 20% jitter, else
 * an exponential backoff with jitter; at most `maxAttempts` attempts, no wait longer than
 * `maxDelayMs` (a `Retry-After` beyond it is not waited: its answer is returned, and thrown
 * with `retryAfterS`).
 *
 * `409 idempotency-key-in-flight` is counted apart: it says the first request with the key
 * is still being worked on (a create or commit may hold its key for up to its `wait_s`, at
 * most 30 s), not that anything failed. Within `inFlightMs` of the first attempt such
 * answers take no attempt, so that a retry after a dropped connection waits for the first
 * request's answer (replayed) instead of giving up after a few seconds.
 */
export interface RetryOptions {
    /** Attempts in all, the first included (default 5; 1 turns retries off). */
    maxAttempts?: number;
    /** The longest wait between two attempts, in ms (default 30 000). */
    maxDelayMs?: number;
    /** The first backoff without `Retry-After`, in ms, doubled each time (default 500). */
    baseDelayMs?: number;
    /**
     * How long after the first attempt a `409 idempotency-key-in-flight` is waited out
     * without taking an attempt, in ms (default 45 000: the service holds a key for at most
     * 30 s of `wait_s`, plus the request's own time).
     */
    inFlightMs?: number;
}
/** `fetch` as openapi-fetch calls it: the request, and its `requestInitExt` (Node's). */
export type Fetch = (request: Request, init?: RequestInit) => Promise<Response>;
export interface RetryPolicy {
    maxAttempts: number;
    maxDelayMs: number;
    baseDelayMs: number;
    inFlightMs: number;
}
export declare function retryPolicy(options?: RetryOptions): RetryPolicy;
/** Whether `request` may be sent again: an idempotent method, or an `Idempotency-Key`. */
export declare function repeatable(request: Request): boolean;
/** The wait after `failures` failed attempts (1, 2, ...) when no `Retry-After` says. */
export declare function backoffMs(failures: number, policy: RetryPolicy): number;
/** `Retry-After` (seconds) as a wait: plus up to 20% jitter, within `maxDelayMs`. */
export declare function retryAfterMs(seconds: number, policy: RetryPolicy): number;
/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export declare function sleep(ms: number, signal?: AbortSignal | null): Promise<void>;
/** Whether an error thrown by `fetch` is the network's (not an abort): fetch's TypeError. */
export declare function isNetworkError(error: unknown): boolean;
/**
 * `fetch` with the retry policy; each attempt sends a clone of the request (the original
 * stays unread, so there is always one more to send) and the caller's `init` as given.
 */
export declare function retryingFetch(fetch: Fetch, options?: RetryOptions): Fetch;
//# sourceMappingURL=retry.d.ts.map