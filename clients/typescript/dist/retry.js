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
import { retryAfterS } from "./errors.js";
export function retryPolicy(options = {}) {
    return {
        maxAttempts: Math.max(1, Math.floor(options.maxAttempts ?? 5)),
        maxDelayMs: Math.max(0, options.maxDelayMs ?? 30_000),
        baseDelayMs: Math.max(0, options.baseDelayMs ?? 500),
        inFlightMs: Math.max(0, options.inFlightMs ?? 45_000),
    };
}
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
/** Whether `request` may be sent again: an idempotent method, or an `Idempotency-Key`. */
export function repeatable(request) {
    return (IDEMPOTENT_METHODS.has(request.method.toUpperCase()) || request.headers.has("idempotency-key"));
}
/** The wait after `failures` failed attempts (1, 2, ...) when no `Retry-After` says. */
export function backoffMs(failures, policy) {
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failures - 1));
    return ceiling / 2 + Math.random() * (ceiling / 2);
}
/** `Retry-After` (seconds) as a wait: plus up to 20% jitter, within `maxDelayMs`. */
export function retryAfterMs(seconds, policy) {
    return Math.min(policy.maxDelayMs, seconds * 1000 * (1 + Math.random() * 0.2));
}
/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted) {
            reject(signal.reason);
            return;
        }
        const onAbort = () => {
            clearTimeout(timer);
            reject(signal?.reason);
        };
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
    });
}
/** Whether an error thrown by `fetch` is the network's (not an abort): fetch's TypeError. */
export function isNetworkError(error) {
    return error instanceof TypeError;
}
/** Why `response` should be tried again, if it should: the server is busy, or the key's
 * first request is still in flight (a 409's body is read from a clone). */
async function retryReason(response) {
    if (RETRIED_STATUSES.has(response.status))
        return "busy";
    if (response.status !== 409)
        return undefined;
    try {
        const body = await response.clone().json();
        const inFlight = typeof body === "object" &&
            body !== null &&
            body.code === "idempotency-key-in-flight";
        return inFlight ? "in-flight" : undefined;
    }
    catch {
        return undefined;
    }
}
const EVENT_STREAM = "text/event-stream";
/**
 * The answer with its body read, so that a connection dropped in the middle of it is a
 * network error of the attempt (retried), not of the caller's read; an event stream (asked
 * for or answered) is left to be read as it comes.
 */
async function whole(request, response) {
    const streamed = request.headers.get("accept")?.includes(EVENT_STREAM) ||
        response.headers.get("content-type")?.includes(EVENT_STREAM);
    if (response.body === null || streamed)
        return response;
    const body = await response.arrayBuffer();
    const empty = response.status === 204 || response.status === 205 || response.status === 304;
    return new Response(empty ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
    });
}
/**
 * `fetch` with the retry policy; each attempt sends a clone of the request (the original
 * stays unread, so there is always one more to send) and the caller's `init` as given.
 */
export function retryingFetch(fetch, options = {}) {
    const policy = retryPolicy(options);
    return async (request, init) => {
        if (policy.maxAttempts === 1 || !repeatable(request))
            return fetch(request, init);
        const started = Date.now();
        let spent = 0; // the attempts that count toward maxAttempts
        for (;;) {
            let response;
            try {
                response = await whole(request, await fetch(request.clone(), init));
            }
            catch (error) {
                spent += 1;
                if (spent >= policy.maxAttempts || !isNetworkError(error) || request.signal?.aborted)
                    throw error;
                await sleep(backoffMs(spent, policy), request.signal);
                continue;
            }
            const reason = await retryReason(response);
            if (reason === undefined)
                return response;
            // The key's first request still at work is no failure: waiting it out takes no attempt.
            if (reason === "busy" || Date.now() - started >= policy.inFlightMs) {
                spent += 1;
                if (spent >= policy.maxAttempts)
                    return response;
            }
            const after = retryAfterS(response.headers);
            if (after !== undefined && after * 1000 > policy.maxDelayMs)
                return response;
            let wait = after !== undefined ? retryAfterMs(after, policy) : backoffMs(Math.max(1, spent), policy);
            // Waiting out a key in flight takes no attempt: never a tight loop on `Retry-After: 0`.
            if (reason === "in-flight")
                wait = Math.max(wait, policy.baseDelayMs);
            await response.body?.cancel().catch(() => undefined);
            await sleep(wait, request.signal);
        }
    };
}
//# sourceMappingURL=retry.js.map