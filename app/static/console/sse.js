// Server-Sent Events over fetch: EventSource cannot send an Authorization header, so the
// stream is read from `response.body` and parsed here. Reconnects after an error or the
// end of the stream with `Last-Event-ID`, with a backoff; a refusal (e.g. 429 when the
// service's stream limit is reached) or an answer that is not a stream backs off longer,
// while the caller's own polling carries on.

import { authHeaders, getKey } from "./api.js";

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 15000;
const REFUSED_BACKOFF_MS = 30000;

/** Parses SSE text into frames {id, event, data}; returns the unparsed rest. */
export function parseFrames(buffer, onFrame) {
  // A "\r" at the very end may be the first half of a "\r\n": it waits for the next chunk.
  const held = buffer.endsWith("\r") ? "\r" : "";
  const text = (held ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, "\n");
  const blocks = text.split("\n\n");
  const rest = blocks.pop() + held;
  for (const block of blocks) {
    let id = null;
    let event = "message";
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
 * Follows the stream at `url`. Options:
 *  - onEvent({id, type, payload}) for each frame with data (payload: parsed JSON or null);
 *  - onState("live" | "reconnecting" | "unavailable" | "ended", detail);
 *  - lastEventId: where to resume; endOn: an event type after which the stream is done.
 * Returns {close()}.
 */
export function follow(url, { onEvent, onState = () => {}, lastEventId = null, endOn = null }) {
  const stop = new AbortController();
  let last = lastEventId;
  let backoff = MIN_BACKOFF_MS;

  async function once() {
    const headers = authHeaders({ Accept: "text/event-stream" });
    if (last !== null && last !== undefined && last !== "") headers["Last-Event-ID"] = String(last);
    const response = await fetch(url, {
      headers,
      signal: stop.signal,
      cache: "no-store",
      credentials: "omit",
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
    onState("live");
    backoff = MIN_BACKOFF_MS;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let ended = false;
    while (!ended) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      buffer = parseFrames(buffer, (frame) => {
        if (frame.id !== null) last = frame.id;
        if (!frame.data) return;
        let payload = null;
        try {
          payload = JSON.parse(frame.data);
        } catch {
          payload = null;
        }
        try {
          onEvent({ id: frame.id, type: frame.event, payload });
        } catch (error) {
          console.warn("an event handler failed", error); // the stream goes on
        }
        if (endOn && frame.event === endOn) ended = true;
      });
    }
    if (ended) reader.cancel().catch(() => {});
    return { ended };
  }

  (async () => {
    while (!stop.signal.aborted) {
      if (!getKey()) return;
      let outcome;
      try {
        outcome = await once();
      } catch (error) {
        if (stop.signal.aborted) return;
        outcome = { error };
      }
      if (stop.signal.aborted) return;
      if (outcome.ended) {
        onState("ended");
        return;
      }
      if (outcome.refused === 401 || outcome.refused === 403 || outcome.refused === 404) {
        // Not for this key, or no such stream here: polling is all there is.
        onState("unavailable", outcome.refused);
        await sleep(REFUSED_BACKOFF_MS * 2, stop.signal);
        continue;
      }
      if (outcome.refused !== undefined) {
        onState("unavailable", outcome.refused);
        await sleep(Math.max(outcome.waitMs || 0, REFUSED_BACKOFF_MS), stop.signal);
        continue;
      }
      onState("reconnecting");
      await sleep(backoff, stop.signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  })();

  return {
    close() {
      stop.abort();
    },
  };
}
