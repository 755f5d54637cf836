// @ts-check
// A run's timeline: the events so far (the JSON pages), then live over the run's event
// stream until `run.finished`; while the stream is not live, new events are polled.

import { all } from "./api.js";
import { h, when } from "./dom.js";
import { isAbort } from "./util.js";

/** @typedef {import("./schema.js").EventOut} EventOut */

const POLL_MS = 2000;

/**
 * An event's data in one line: "key: value · key: value".
 * @param {Record<string, unknown>} data
 * @returns {string}
 */
function describe(data) {
  return Object.entries(data || {})
    .map(([k, v]) => `${k}: ${v !== null && typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" · ");
}

/** What happened to a call, by its event's type. */
const CALL_VERBS = /** @type {Record<string, string>} */ ({
  "call.proposed": "was proposed",
  "call.rejected": "was refused",
  "call.awaiting_approval": "waits for an approval",
  "call.approved": "was approved",
  "call.revised": "had its arguments revised",
  "call.rejected_by_approver": "was rejected by an approver",
  "call.started": "was sent",
  "call.succeeded": "succeeded",
  "call.failed": "failed",
  "call.cancelled": "was cancelled",
});

/** @param {unknown} value */
const text = (value) => (value === null || value === undefined ? "" : String(value));

/** @param {string} words a model's, cut for a sentence */
const clip = (words) => (words.length > 200 ? `${words.slice(0, 200)}…` : words);

/**
 * The event as a sentence for people, from the fields it carries; "" when there is none
 * to say (the raw event is there).
 * @param {EventOut} event
 * @returns {string}
 */
export function sentence(event) {
  const data = /** @type {Record<string, unknown>} */ (event.data || {});
  const code = text(data.code) || text(/** @type {any} */ (data.error)?.code);
  const because = code ? `: ${code}` : "";
  if (event.type in CALL_VERBS) {
    const tool = text(data.tool) ? ` (${text(data.tool)})` : "";
    const by = text(data.by) ? ` by ${text(data.by)}` : "";
    const why = event.type === "call.revised" ? ` (${text(data.reason)})` : "";
    return `Call ${text(data.call_id)}${tool} ${CALL_VERBS[event.type]}${by}${because}${why}.`;
  }
  switch (event.type) {
    case "run.created":
      return "The run was created.";
    case "run.claimed":
      return "A server process took the run up.";
    case "run.cancel_requested":
      return "A cancel was asked for.";
    case "turn.completed":
      if (data.kind === "final") return `Step ${text(data.step)}: the model gave its answer.`;
      return data.text
        ? `Step ${text(data.step)}: the model proposed calls, saying: “${clip(text(data.text))}”`
        : `Step ${text(data.step)}: the model proposed calls.`;
    case "turn.failed":
      return `Step ${text(data.step)}: the model call failed${because}.`;
    case "final.rejected":
      return `Step ${text(data.step)}: the final answer was refused${because}.`;
    case "preview.approval_added":
      return `${text(data.by)} approved the call ${text(data.call_id)}: ${text(data.approvals)} of ${text(data.approvals_required)} approvals.`;
    case "run.finished":
      return `The run finished: ${text(data.termination_reason)}${code ? ` (${code})` : ""}.`;
    default:
      return "";
  }
}

/**
 * @param {EventOut} event
 * @returns {HTMLLIElement}
 */
function item(event) {
  const li = h(
    "li",
    { class: "event", id: `event-${event.seq}`, "data-seq": event.seq, "data-type": event.type },
    h("span", { class: "seq" }, `#${event.seq}`),
    " ",
    h("strong", { class: "type" }, event.type),
    " ",
    h("time", { datetime: event.at }, when(event.at)),
  );
  const said = sentence(event);
  if (said) li.append(h("div", { class: "event-sentence" }, said));
  const raw = describe(event.data);
  if (raw) {
    // The raw event one click away, for whoever needs its ids and hashes.
    li.append(h("details", {}, h("summary", {}, "Raw event"), h("div", { class: "event-data" }, raw)));
  }
  return li;
}

/**
 * The timeline's list: each event once, in order of seq.
 * @typedef {object} Events
 * @property {HTMLElement} status the line that says whether the timeline is live
 * @property {(event: EventOut | null | undefined, fresh: boolean) => void} add
 * @property {() => number} lastSeq
 * @property {() => boolean} finished `run.finished` is in the list (or was at the start)
 * @property {boolean} live the stream is live (no polling then)
 */

/**
 * Appends the "Timeline" section to `parent`; `onEvent` is called for each fresh event.
 * @param {HTMLElement} parent
 * @param {(event: EventOut) => void} onEvent
 * @param {boolean} done the run has finished already
 * @returns {Events}
 */
function eventList(parent, onEvent, done) {
  const headingId = `timeline-${Math.random().toString(36).slice(2)}`;
  const status = h("p", { class: "live" }, done ? "" : "Connecting live updates…");
  const list = h("ol", { class: "timeline", "aria-labelledby": headingId });
  parent.append(h("section", {}, h("h2", { id: headingId }, "Timeline"), status, list));
  /** @type {Set<number>} */
  const seen = new Set();
  let lastSeq = 0;
  let finished = done;
  return {
    status,
    live: false,
    lastSeq: () => lastSeq,
    finished: () => finished,
    add(event, fresh) {
      if (!event || typeof event.seq !== "number" || seen.has(event.seq)) return;
      const seq = event.seq;
      seen.add(seq);
      // In order of seq, whatever order they arrive in (almost always: at the end).
      const after =
        seq > lastSeq
          ? null
          : [...list.children].find((li) => li instanceof HTMLElement && Number(li.dataset.seq) > seq);
      lastSeq = Math.max(lastSeq, seq);
      list.insertBefore(item(event), after || null);
      if (event.type === "run.finished") {
        finished = true;
        status.textContent = "The run has finished.";
      }
      if (fresh) onEvent(event);
    },
  };
}

/**
 * Follows the run's event stream from the last event listed, until `run.finished`.
 * @param {import("./context.js").PageContext} ctx
 * @param {string} base the run's events address
 * @param {Events} events
 */
function followLive(ctx, base, events) {
  ctx.follow(base, {
    lastEventId: String(events.lastSeq()),
    endOn: "run.finished",
    onEvent: ({ payload }) => events.add(/** @type {EventOut | null} */ (payload), true),
    onState: (state) => {
      events.live = state === "live";
      if (events.finished()) return;
      events.status.textContent =
        state === "live"
          ? "Live."
          : state === "reconnecting"
            ? "Reconnecting…"
            : `Live updates unavailable; checking every ${POLL_MS / 1000} s.`;
    },
  });
}

/**
 * Checks for new events every 2 s while the stream is not live.
 * @param {import("./context.js").PageContext} ctx
 * @param {string} base the run's events address
 * @param {Events} events
 */
function pollWhileDown(ctx, base, events) {
  let polling = false;
  ctx.every(POLL_MS, async () => {
    if (events.finished() || events.live || polling) return;
    polling = true;
    try {
      const after = events.lastSeq();
      /** @type {EventOut[]} */
      const items = await all(`${base}?after=${after}&limit=200`, { signal: ctx.signal });
      for (const event of items) events.add(event, true);
    } catch (error) {
      if (!isAbort(error)) events.status.textContent = "Could not refresh the timeline; retrying.";
    } finally {
      polling = false;
    }
  });
}

/**
 * Appends a "Timeline" section for run `runId` to `parent`. `onEvent(event)` is called
 * for each new event (not for those loaded first); `done` is true when the run has
 * finished already (no stream then). Returns a promise of the events loaded first.
 * @param {import("./context.js").PageContext} ctx
 * @param {HTMLElement} parent
 * @param {string} runId
 * @param {{onEvent?: (event: EventOut) => void, done?: boolean}} [options]
 * @returns {Promise<EventOut[]>}
 */
export async function timeline(ctx, parent, runId, { onEvent = () => {}, done = false } = {}) {
  const events = eventList(parent, onEvent, done);
  const base = `/v1/runs/${encodeURIComponent(runId)}/events`;
  /** @type {EventOut[]} */
  const first = await all(`${base}?limit=200`, { signal: ctx.signal, max: 5000 });
  for (const event of first) events.add(event, false);
  if (events.finished()) {
    events.status.textContent = "The run has finished.";
    return first;
  }
  followLive(ctx, base, events);
  pollWhileDown(ctx, base, events);
  return first;
}
