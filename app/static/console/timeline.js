// A run's timeline: the events so far (the JSON pages), then live over the run's event
// stream until `run.finished`; while the stream is not live, new events are polled.

import { all } from "./api.js";
import { h, when } from "./dom.js";
import { isAbort } from "./util.js";

const POLL_MS = 2000;

function describe(data) {
  return Object.entries(data || {})
    .map(([k, v]) => `${k}: ${v !== null && typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" · ");
}

function item(event) {
  const li = h(
    "li",
    { class: "event", "data-seq": event.seq, "data-type": event.type },
    h("span", { class: "seq" }, `#${event.seq}`),
    " ",
    h("strong", { class: "type" }, event.type),
    " ",
    h("time", { datetime: event.at }, when(event.at)),
  );
  const text = describe(event.data);
  if (text) li.append(h("div", { class: "event-data" }, text));
  return li;
}

/**
 * Appends a "Timeline" section for run `runId` to `parent`. `onEvent(event)` is called
 * for each new event (not for those loaded first); `done` is true when the run has
 * finished already (no stream then). Returns a promise of the events loaded first.
 */
export async function timeline(ctx, parent, runId, { onEvent = () => {}, done = false } = {}) {
  const headingId = `timeline-${Math.random().toString(36).slice(2)}`;
  const status = h("p", { class: "live" }, done ? "" : "Connecting live updates…");
  const list = h("ol", { class: "timeline", "aria-labelledby": headingId });
  parent.append(
    h("section", {}, h("h2", { id: headingId }, "Timeline"), status, list),
  );
  const seen = new Set();
  let lastSeq = 0;
  let finished = done;
  let live = false;
  const base = `/v1/runs/${encodeURIComponent(runId)}/events`;

  function add(event, fresh) {
    if (!event || typeof event.seq !== "number" || seen.has(event.seq)) return;
    seen.add(event.seq);
    // In order of seq, whatever order they arrive in (almost always: at the end).
    const after =
      event.seq > lastSeq
        ? null
        : [...list.children].find((li) => Number(li.dataset.seq) > event.seq);
    lastSeq = Math.max(lastSeq, event.seq);
    list.insertBefore(item(event), after || null);
    if (event.type === "run.finished") {
      finished = true;
      status.textContent = "The run has finished.";
    }
    if (fresh) onEvent(event);
  }

  const first = await all(`${base}?limit=200`, { signal: ctx.signal, max: 5000 });
  for (const event of first) add(event, false);
  if (finished) {
    status.textContent = "The run has finished.";
    return first;
  }

  ctx.follow(base, {
    lastEventId: String(lastSeq),
    endOn: "run.finished",
    onEvent: ({ payload }) => add(payload, true),
    onState: (state) => {
      live = state === "live";
      if (finished) return;
      status.textContent =
        state === "live"
          ? "Live."
          : state === "reconnecting"
            ? "Reconnecting…"
            : `Live updates unavailable; checking every ${POLL_MS / 1000} s.`;
    },
  });

  let polling = false;
  ctx.every(POLL_MS, async () => {
    if (finished || live || polling) return;
    polling = true;
    try {
      const items = await all(`${base}?after=${lastSeq}&limit=200`, { signal: ctx.signal });
      for (const event of items) add(event, true);
    } catch (error) {
      if (!isAbort(error)) status.textContent = "Could not refresh the timeline; retrying.";
    } finally {
      polling = false;
    }
  });
  return first;
}
