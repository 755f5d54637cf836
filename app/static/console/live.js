// @ts-check
// Keeping a list current: the tenant's event stream (only the event types that change
// the list) triggers a re-fetch, and a re-fetch every 10 s covers a stream that is down.

import { debounce } from "./util.js";

const FALLBACK_MS = 10000;

/** @typedef {import("./schema.js").EventType} EventType */

/**
 * Calls `refresh()` on each event of `types` and every 10 s; `note` shows the state.
 * @param {import("./context.js").PageContext} ctx
 * @param {{types: readonly EventType[], refresh: () => unknown, note: HTMLElement}} options
 */
export function keepCurrent(ctx, { types, refresh, note }) {
  ctx.every(FALLBACK_MS, refresh);
  const soon = debounce(refresh, 100);
  note.textContent = "Connecting live updates…";
  ctx.follow(`/v1/events?types=${types.map(encodeURIComponent).join(",")}`, {
    onEvent: soon,
    onState: (state) => {
      if (state === "live") {
        note.textContent = "Live: updates as they happen.";
        soon(); // whatever happened before the stream opened
      } else if (state === "reconnecting") {
        note.textContent = "Reconnecting live updates…";
      } else {
        note.textContent = "Live updates unavailable; refreshing every 10 s.";
      }
    },
  });
}
