// @ts-check
// A run's guardrail events (`guardrail.before_call`, `guardrail.after_call`,
// `guardrail.on_final`): which guardrail acted, where, on which call, and what it did.

import { columnHeads, h } from "./dom.js";

/** @typedef {import("./schema.js").EventOut} EventOut */

const PREFIX = "guardrail.";
/** What the event says besides its point, call, guardrail and action. */
const ABOUT = new Set(["step", "call_id", "guardrail", "action"]);

/**
 * @param {EventOut} event
 * @returns {boolean}
 */
export function isGuardrailEvent(event) {
  return typeof event.type === "string" && event.type.startsWith(PREFIX);
}

/**
 * @param {Record<string, unknown>} data
 * @returns {string}
 */
function detail(data) {
  return Object.entries(data)
    .filter(([k]) => !ABOUT.has(k))
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(", ") : String(v)}`)
    .join(" · ");
}

/**
 * The guardrail events as a table (or a line saying there are none).
 * @param {EventOut[]} events
 * @returns {HTMLElement}
 */
export function guardrailsView(events) {
  if (!events.length) return h("p", { class: "hint" }, "No guardrail acted on this run.");
  return h(
    "table",
    { class: "grid guardrails", "aria-labelledby": "guardrails-title" },
    columnHeads(["Event", "Point", "Call", "Guardrail", "Action", "Details"]),
    h(
      "tbody",
      {},
      events.map((event) => {
        const data = /** @type {Record<string, unknown>} */ (event.data || {});
        const action = String(data.action ?? "");
        return h(
          "tr",
          { "data-seq": event.seq },
          h("td", { class: "num" }, `#${event.seq}`),
          h("td", {}, event.type.slice(PREFIX.length)),
          h("td", {}, data.call_id ? h("code", {}, String(data.call_id)) : "final answer"),
          h("td", {}, String(data.guardrail ?? "")),
          h("td", {}, h("span", { class: `guard guard-${action}` }, action)),
          h("td", {}, detail(data) || "—"),
        );
      }),
    ),
  );
}
