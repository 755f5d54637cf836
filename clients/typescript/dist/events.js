/**
 * An event stream read over `fetch` and followed through dropped connections. The service
 * gives every event an `id:` and resumes a stream from `Last-Event-ID` without a gap or a
 * repeat, so the follower keeps the id of the last complete event and, after a network
 * error, a minute of silence (the server pings every 15 s) or an early end, opens the
 * stream again from there. An event cut off in the middle is never handed out.
 *
 * Opening goes through the retry policy like any GET (`429`/`503` with `Retry-After`);
 * a problem answer is thrown as its class. A connection that was healthy (it brought an
 * event, or stayed open `steadyMs`, 5 s by default) may end at any time: a load balancer's
 * cap on a connection's age, a server restarting; a quiet stream sends only pings for
 * long. So only failures count: an open that failed, and a connection that ended or broke
 * before it was healthy. Between connections it waits: after a healthy one a moment, then
 * the server's `retry:` or a doubling backoff, jittered; after `maxAttempts` failures in a
 * row, `StreamBroken` says where it stopped. (The Python client counts the same way.)
 */
import { problemOf, StreamBroken } from "./errors.js";
import { backoffMs, isNetworkError, sleep } from "./retry.js";
import { SseParser } from "./sse.js";
class Silent extends Error {
}
/**
 * An event stream's answer as `follow` opens it: its body, `undefined` for a `204` (a
 * finished run's stream asked for after its last event: nothing more), or the problem
 * thrown.
 */
export async function streamBody(answer) {
    const { data, error, response } = await answer;
    if (!response.ok)
        throw problemOf(response, error);
    return response.status === 204 || !data ? undefined : data;
}
/** The next chunk, or `Silent` after `idleMs` without one. */
async function read(reader, idleMs) {
    let timer;
    const silence = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Silent()), idleMs);
    });
    try {
        return await Promise.race([reader.read(), silence]);
    }
    finally {
        clearTimeout(timer);
    }
}
/** One connection's events, in order; what it leaves behind goes into `at`. */
async function* connection(body, at, options, signal) {
    const opened = Date.now();
    const parser = new SseParser();
    const reader = body.getReader();
    // Ends a read in progress, whatever the fetch does with the signal.
    const stop = () => reader.cancel().catch(() => undefined);
    signal.addEventListener("abort", stop, { once: true });
    let healthy = false;
    let cause;
    try {
        for (;;) {
            const { value, done } = await read(reader, options.idleMs ?? 60_000);
            if (signal.aborted)
                return { over: true, healthy };
            if (done)
                break;
            for (const event of parser.push(value)) {
                healthy = true;
                if (event.id)
                    at.lastEventId = event.id;
                yield event;
                if (options.isLast?.(event))
                    return { over: true, healthy };
            }
            // An event without data moves the last event ID too.
            if (parser.lastEventId)
                at.lastEventId = parser.lastEventId;
        }
    }
    catch (error) {
        if (signal.aborted)
            return { over: true, healthy };
        if (!(error instanceof Silent) && !isNetworkError(error))
            throw error;
        cause = error;
    }
    finally {
        signal.removeEventListener("abort", stop);
        stop();
        at.retryMs = parser.retryMs ?? at.retryMs;
    }
    healthy ||= Date.now() - opened >= (options.steadyMs ?? 5_000);
    return { over: false, healthy, cause };
}
/** The wait before the next connection, after `failures` failures in a row. */
function pauseMs(failures, at, policy) {
    if (at.retryMs !== undefined)
        return Math.min(policy.maxDelayMs, at.retryMs * (1 + Math.random() * 0.2));
    // A drop: open again at once, or nearly; then back off.
    return failures <= 1 ? Math.random() * 100 : backoffMs(failures - 1, policy);
}
/**
 * Every event of the stream, in order, each once; over after the event `isLast` picks or
 * when the server answers `204`; ended (quietly) when `signal` aborts. Without `isLast`
 * the stream is never over: an end is taken as a drop.
 */
export async function* follow(open, options) {
    // One controller for every connection: the caller's abort ends whichever is open.
    const controller = new AbortController();
    const outer = options.signal;
    const abort = () => controller.abort(outer?.reason);
    if (outer?.aborted)
        return;
    outer?.addEventListener("abort", abort, { once: true });
    const at = { lastEventId: undefined, retryMs: undefined };
    let failures = 0; // failed opens and connections that ended before they were healthy
    try {
        for (;;) {
            let ended;
            try {
                const body = await open(at.lastEventId, controller.signal);
                if (body === undefined)
                    return;
                ended = yield* connection(body, at, options, controller.signal);
            }
            catch (error) {
                if (controller.signal.aborted)
                    return;
                if (!isNetworkError(error))
                    throw error;
                ended = { over: false, healthy: false, cause: error };
            }
            if (ended.over)
                return;
            failures = ended.healthy ? 0 : failures + 1;
            if (failures >= options.policy.maxAttempts)
                throw new StreamBroken(at.lastEventId, { cause: ended.cause });
            try {
                await sleep(pauseMs(failures, at, options.policy), controller.signal);
            }
            catch {
                return; // aborted
            }
        }
    }
    finally {
        outer?.removeEventListener("abort", abort);
    }
}
//# sourceMappingURL=events.js.map