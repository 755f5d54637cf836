// @ts-check
// A run's diagnosis (`GET /v1/runs/{id}/diagnosis`): the first deviation, the root cause
// and the terminal cause, each a category of the API's taxonomy, a line of explanation
// and the timeline's event it points at.

import { columnHeads, h } from "./dom.js";

/** @typedef {import("./schema.js").DiagnosisOut} DiagnosisOut */
/** @typedef {import("./schema.js").FindingOut} FindingOut */

/**
 * What each row shows; `none` is said when the answer is null.
 * @type {ReadonlyArray<{key: "first_deviation" | "root_cause" | "terminal_cause", label: string, none: (d: DiagnosisOut) => string}>}
 */
const ROWS = [
  { key: "first_deviation", label: "First deviation", none: () => "No anomaly." },
  {
    key: "root_cause",
    label: "Root cause",
    none: (d) => (d.first_deviation ? "None: the run recovered from every anomaly." : "No anomaly."),
  },
  { key: "terminal_cause", label: "Terminal cause", none: () => "The run has not finished." },
];

/**
 * A link to the event in the timeline below (its item's id is `event-<seq>`).
 * @param {number} seq
 * @returns {HTMLAnchorElement}
 */
function eventLink(seq) {
  return h("a", { href: `#event-${seq}`, "aria-label": `Event ${seq} in the timeline` }, `#${seq}`);
}

/**
 * @param {string} label
 * @param {FindingOut | null} finding
 * @param {string} none
 * @returns {HTMLTableRowElement}
 */
function row(label, finding, none) {
  const head = h("th", { scope: "row" }, label);
  if (!finding) return h("tr", {}, head, h("td", { colspan: 3, class: "hint" }, none));
  return h(
    "tr",
    { "data-category": finding.category },
    head,
    h("td", {}, h("code", { class: `category category-${finding.category}` }, finding.category)),
    h("td", {}, finding.explanation),
    h("td", { class: "num" }, eventLink(finding.seq)),
  );
}

/**
 * The diagnosis as a table of three rows.
 * @param {DiagnosisOut} diagnosis
 * @returns {HTMLTableElement}
 */
export function diagnosisView(diagnosis) {
  return h(
    "table",
    { class: "grid diagnosis", "aria-labelledby": "diagnosis-title" },
    columnHeads(["Answer", "Category", "Explanation", "Event"]),
    h(
      "tbody",
      {},
      ROWS.map(({ key, label, none }) => row(label, diagnosis[key], none(diagnosis))),
    ),
  );
}
