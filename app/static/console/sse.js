// @ts-check
// Server-Sent Events over fetch: EventSource cannot send an Authorization header, so the
// stream is read from `response.body` and parsed here. Reconnects after an error or the
// end of the stream with `Last-Event-ID`, with a backoff; a refusal (e.g. 429 when the
// service's stream limit is reached) or an answer that is not a stream backs off longer,
// while the caller's own polling carries on.

import { authHeaders, credentials, signedIn } from "./api.js";

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 15000;
const REFUSED_BACKOFF_MS = 30000;

/** @typedef {{id: string | null, event: string, data: string}} Frame */
/**
 * An event of the stream: its id, its type and its data parsed as JSON (null when not).
 * @typedef {{id: string | null, type: string, payload: unknown}} StreamEvent
 */
/** @typedef {"live" | "reconnecting" | "unavailable" | "ended"} StreamState */
/**
 * @typedef {object} FollowOptions
 * @property {(event: StreamEvent) => void} onEvent
 * @property {(state: StreamState, status?: number) => void} [onState]
 * @property {string | null} [lastEventId] where to resume
 * @property {string | null} [endOn] an event type after which the stream is done
 */
/** @typedef {{close(): void}} Stream */
/**
 * How one connection went: it ended, the service refused it (with how long to wait), or
 * it broke.
 * @typedef {{ended: boolean} | {refused: number, waitMs: number | null} | {error: unknown}} Outcome
 */

/**
 * Parses SSE text into frames {id, event, data}; returns the unparsed rest.
 * @param {string} buffer
 * @param {(frame: Frame) => void} onFrame
 * @returns {string}
 */
export function parseFrames(buffer, onFrame) {
  // A "\r" at the very end may be the first half of a "\r\n": it waits for the next chunk.
  const held = buffer.endsWith("\r") ? "\r" : "";
  const text = (held ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, "\n");
  const blocks = text.split("\n\n");
  const rest = blocks.pop() + held;
  for (const block of blocks) {
    /** @type {string | null} */
    let id = null;
    let event = "message";
    /** @type {string[]} */
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "id") id = value;
      else if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (id !== null || data.length) onFrame({ id, event, data: data.join("\n") });
  }
  return rest;
}

/**
 * @param {number} ms
 * @param {AbortSignal} signal ends the wait early
 * @returns {Promise<void>}
 */
const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/**
 * A followed stream, between and during its connections.
 * @typedef {object} Following
 * @property {string} url
 * @property {AbortSignal} signal aborted by `close()`
 * @property {string | null} last the id of the last event seen: where to resume
 * @property {number} backoff how long to wait before reconnecting after an error
 * @property {(event: StreamEvent) => void} onEvent
 * @property {(state: StreamState, status?: number) => void} onState
 * @property {string | null} endOn
 */

/**
 * One connection to the stream, read until it ends.
 * @param {Following} f
 * @returns {Promise<Outcome>}
 */
async function connect(f) {
  const headers = authHeaders({ Accept: "text/event-stream" });
  if (f.last !== null && f.last !== undefined && f.last !== "") {
    headers["Last-Event-ID"] = String(f.last);
  }
  const response = await fetch(f.url, {
    headers,
    signal: f.signal,
    cache: "no-store",
    credentials: credentials(),
  });
  if (response.status === 204) {
    // A finished run asked for what comes after its last event: nothing ever will.
    return { ended: true };
  }
  const type = response.headers.get("Content-Type") || "";
  if (!response.ok || !type.startsWith("text/event-stream") || !response.body) {
    response.body?.cancel().catch(() => {});
    const retryAfter = Number(response.headers.get("Retry-After"));
    return {
      refused: response.status,
      waitMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null,
    };
  }
  f.onState("live");
  f.backoff = MIN_BACKOFF_MS;
  return { ended: await read(response.body, f) };
}

/**
 * Reads the stream's frames as they come: true when `endOn` came (the stream is done),
 * false when the service closed it.
 * @param {ReadableStream<Uint8Array>} body
 * @param {Following} f
 * @returns {Promise<boolean>}
 */
async function read(body, f) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let ended = false;
  while (!ended) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    buffer = parseFrames(buffer, (frame) => {
      if (dispatch(frame, f)) ended = true;
    });
  }
  if (ended) reader.cancel().catch(() => {});
  return ended;
}

/**
 * Hands a frame with data to `onEvent` (its data parsed as JSON); true when it is the
 * stream's last (`endOn`).
 * @param {Frame} frame
 * @param {Following} f
 * @returns {boolean}
 */
function dispatch(frame, f) {
  if (frame.id !== null) f.last = frame.id;
  if (!frame.data) return false;
  /** @type {unknown} */
  let payload = null;
  try {
    payload = JSON.parse(frame.data);
  } catch {
    payload = null;
  }
  try {
    f.onEvent({ id: frame.id, type: frame.event, payload });
  } catch (error) {
    console.warn("an event handler failed", error); // the stream goes on
  }
  return Boolean(f.endOn && frame.event === f.endOn);
}

/**
 * After a connection: says the stream's state, and how long to wait before the next one
 * (null: the stream is done).
 * @param {Outcome} outcome
 * @param {Following} f
 * @returns {number | null}
 */
function pause(outcome, f) {
  if ("ended" in outcome && outcome.ended) {
    f.onState("ended");
    return null;
  }
  if ("refused" in outcome) {
    f.onState("unavailable", outcome.refused);
    // Not for this key, or no such stream here: polling is all there is.
    if ([401, 403, 404].includes(outcome.refused)) return REFUSED_BACKOFF_MS * 2;
    return Math.max(outcome.waitMs || 0, REFUSED_BACKOFF_MS);
  }
  f.onState("reconnecting");
  const wait = f.backoff;
  f.backoff = Math.min(f.backoff * 2, MAX_BACKOFF_MS);
  return wait;
}

/**
 * Follows the stream at `url`. Options:
 *  - onEvent({id, type, payload}) for each frame with data (payload: parsed JSON or null);
 *  - onState("live" | "reconnecting" | "unavailable" | "ended", detail);
 *  - lastEventId: where to resume; endOn: an event type after which the stream is done.
 * Returns {close()}.
 * @param {string} url
 * @param {FollowOptions} options
 * @returns {Stream}
 */
export function follow(url, { onEvent, onState = () => {}, lastEventId = null, endOn = null }) {
  const stop = new AbortController();
  /** @type {Following} */
  const f = {
    url,
    signal: stop.signal,
    last: lastEventId,
    backoff: MIN_BACKOFF_MS,
    onEvent,
    onState,
    endOn,
  };
  (async () => {
    while (!stop.signal.aborted) {
      if (!signedIn()) return;
      /** @type {Outcome} */
      let outcome;
      try {
        outcome = await connect(f);
      } catch (error) {
        if (stop.signal.aborted) return;
        outcome = { error };
      }
      if (stop.signal.aborted) return;
      const waitMs = pause(outcome, f);
      if (waitMs === null) return;
      await sleep(waitMs, stop.signal);
    }
  })();

  return {
    close() {
      stop.abort();
    },
  };
}
