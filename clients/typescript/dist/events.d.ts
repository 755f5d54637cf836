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
import { type RetryPolicy } from "./retry.js";
import { type SseEvent } from "./sse.js";
/**
 * Opens the stream: after `lastEventId` when given (else from where the stream begins),
 * answering its body, or `undefined` when the server says there is nothing more (`204`).
 */
export type OpenStream = (lastEventId: string | undefined, signal: AbortSignal) => Promise<ReadableStream<Uint8Array> | undefined>;
export interface FollowOptions {
    signal?: AbortSignal | undefined;
    /** The stream is over after the event for which this answers true (`run.finished`). */
    isLast?: ((event: SseEvent) => boolean) | undefined;
    policy: RetryPolicy;
    /** Silence after which a connection is taken for dead, in ms (default 60 000). */
    idleMs?: number | undefined;
    /** How long a connection must stay open to be healthy without an event, in ms (default 5 000). */
    steadyMs?: number | undefined;
}
/**
 * An event stream's answer as `follow` opens it: its body, `undefined` for a `204` (a
 * finished run's stream asked for after its last event: nothing more), or the problem
 * thrown.
 */
export declare function streamBody(answer: Promise<{
    data?: unknown;
    error?: unknown;
    response: Response;
}>): Promise<ReadableStream<Uint8Array> | undefined>;
/**
 * Every event of the stream, in order, each once; over after the event `isLast` picks or
 * when the server answers `204`; ended (quietly) when `signal` aborts. Without `isLast`
 * the stream is never over: an end is taken as a drop.
 */
export declare function follow(open: OpenStream, options: FollowOptions): AsyncGenerator<SseEvent, void, undefined>;
//# sourceMappingURL=events.d.ts.map