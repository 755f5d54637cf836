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
import { backoffMs, isNetworkError, sleep, type RetryPolicy } from "./retry.js";
import { SseParser, type SseEvent } from "./sse.js";

/**
 * Opens the stream: after `lastEventId` when given (else from where the stream begins),
 * answering its body, or `undefined` when the server says there is nothing more (`204`).
 */
export type OpenStream = (
  lastEventId: string | undefined,
  signal: AbortSignal,
) => Promise<ReadableStream<Uint8Array> | undefined>;

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

class Silent extends Error {}

/**
 * An event stream's answer as `follow` opens it: its body, `undefined` for a `204` (a
 * finished run's stream asked for after its last event: nothing more), or the problem
 * thrown.
 */
export async function streamBody(
  answer: Promise<{ data?: unknown; error?: unknown; response: Response }>,
): Promise<ReadableStream<Uint8Array> | undefined> {
  const { data, error, response } = await answer;
  if (!response.ok) throw problemOf(response, error);
  return response.status === 204 || !data ? undefined : (data as ReadableStream<Uint8Array>);
}

/** The next chunk, or `Silent` after `idleMs` without one. */
async function read(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleMs: number,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Silent()), idleMs);
  });
  try {
    return await Promise.race([reader.read(), silence]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where a stream stands between its connections. */
interface Position {
  lastEventId: string | undefined;
  retryMs: number | undefined;
}

/** How a connection ended: `over` (the last event, or an abort), `healthy` (it brought an
 * event or stayed open `steadyMs`), and the network error or silence that ended it. */
interface Ended {
  over: boolean;
  healthy: boolean;
  cause?: unknown;
}

/** One connection's events, in order; what it leaves behind goes into `at`. */
async function* connection(
  body: ReadableStream<Uint8Array>,
  at: Position,
  options: FollowOptions,
  signal: AbortSignal,
): AsyncGenerator<SseEvent, Ended, undefined> {
  const opened = Date.now();
  const parser = new SseParser();
  const reader = body.getReader();
  // Ends a read in progress, whatever the fetch does with the signal.
  const stop = () => reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  let healthy = false;
  let cause: unknown;
  try {
    for (;;) {
      const { value, done } = await read(reader, options.idleMs ?? 60_000);
      if (signal.aborted) return { over: true, healthy };
      if (done) break;
      for (const event of parser.push(value)) {
        healthy = true;
        if (event.id) at.lastEventId = event.id;
        yield event;
        if (options.isLast?.(event)) return { over: true, healthy };
      }
      // An event without data moves the last event ID too.
      if (parser.lastEventId) at.lastEventId = parser.lastEventId;
    }
  } catch (error) {
    if (signal.aborted) return { over: true, healthy };
    if (!(error instanceof Silent) && !isNetworkError(error)) throw error;
    cause = error;
  } finally {
    signal.removeEventListener("abort", stop);
    stop();
    at.retryMs = parser.retryMs ?? at.retryMs;
  }
  healthy ||= Date.now() - opened >= (options.steadyMs ?? 5_000);
  return { over: false, healthy, cause };
}

/** The wait before the next connection, after `failures` failures in a row. */
function pauseMs(failures: number, at: Position, policy: RetryPolicy): number {
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
export async function* follow(
  open: OpenStream,
  options: FollowOptions,
): AsyncGenerator<SseEvent, void, undefined> {
  // One controller for every connection: the caller's abort ends whichever is open.
  const controller = new AbortController();
  const outer = options.signal;
  const abort = () => controller.abort(outer?.reason);
  if (outer?.aborted) return;
  outer?.addEventListener("abort", abort, { once: true });
  const at: Position = { lastEventId: undefined, retryMs: undefined };
  let failures = 0; // failed opens and connections that ended before they were healthy
  try {
    for (;;) {
      let ended: Ended;
      try {
        const body = await open(at.lastEventId, controller.signal);
        if (body === undefined) return;
        ended = yield* connection(body, at, options, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) return;
        if (!isNetworkError(error)) throw error;
        ended = { over: false, healthy: false, cause: error };
      }
      if (ended.over) return;
      failures = ended.healthy ? 0 : failures + 1;
      if (failures >= options.policy.maxAttempts)
        throw new StreamBroken(at.lastEventId, { cause: ended.cause });
      try {
        await sleep(pauseMs(failures, at, options.policy), controller.signal);
      } catch {
        return; // aborted
      }
    }
  } finally {
    outer?.removeEventListener("abort", abort);
  }
}
