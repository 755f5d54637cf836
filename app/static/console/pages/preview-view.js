// @ts-check
// A preview as text: its facts (status, who asked, cost, hashes, the decision so far) and
// its impact, "What changes" as before → after.

import { columnHeads, consolePath, countdown, details, h, link, usd, when } from "../dom.js";

/** @typedef {import("../dom.js").Child} Child */
/** @typedef {import("../schema.js").PreviewOut} PreviewOut */
/** @typedef {import("../schema.js").ToolOut} ToolOut */
/** @typedef {{before: unknown, after: unknown}} Change */

/**
 * @param {unknown} value
 * @returns {value is Change}
 */
function isChange(value) {
  return value !== null && typeof value === "object" && "before" in value && "after" in value;
}

/**
 * A value of the impact as text (JSON for objects).
 * @param {unknown} value
 * @returns {string}
 */
function show(value) {
  if (value === null || value === undefined) return "—";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * The impact: a "What changes" table of before → after, and the rest as facts.
 * @param {Record<string, unknown>} impact
 * @returns {HTMLElement}
 */
export function impactView(impact) {
  const entries = Object.entries(impact || {});
  /** @type {Array<[string, Change]>} */
  const changes = [];
  /** @type {Array<[string, unknown]>} */
  const rest = [];
  for (const [k, v] of entries) {
    if (isChange(v)) changes.push([k, v]);
    else rest.push([k, v]);
  }
  const section = h("section", {}, h("h2", { id: "impact-title" }, "What changes"));
  if (changes.length) {
    section.append(
      h(
        "table",
        { class: "grid changes", "aria-labelledby": "impact-title" },
        columnHeads(["Field", "Before", "After"]),
        h(
          "tbody",
          {},
          changes.map(([k, v]) =>
            h(
              "tr",
              {},
              h("th", { scope: "row" }, k),
              h("td", { class: "before" }, show(v.before)),
              h("td", { class: "after" }, "→ ", show(v.after)),
            ),
          ),
        ),
      ),
    );
  } else {
    section.append(h("p", {}, "The tool did not describe the change as before → after."));
  }
  if (rest.length) section.append(details(rest.map(([k, v]) => [k, show(v)])));
  return section;
}

/**
 * A link to another preview (undefined, so left out, when there is none).
 * @param {string | null} id
 * @returns {HTMLAnchorElement | undefined}
 */
function previewLink(id) {
  return id ? link(consolePath("previews", id), id) : undefined;
}

/**
 * @param {PreviewOut} preview
 * @param {ToolOut | null} tool
 * @returns {string}
 */
function toolText(preview, tool) {
  if (!tool) return preview.tool;
  return `${preview.tool} (risk ${tool.risk}${tool.requires_approval ? ", approval required" : ""})`;
}

/**
 * How far a preview's quorum is ("1 of 2 approvals"); undefined for a preview that needs
 * one approver and has none, where "Decided by" says it all.
 * @param {PreviewOut} preview
 * @returns {string | undefined}
 */
export function approvalsCount(preview) {
  const { approvals, approvals_required: needed } = preview;
  if (needed <= 1 && !approvals.length) return undefined;
  return `${approvals.length} of ${needed} approval${needed === 1 ? "" : "s"}`;
}

/**
 * The approvals so far, with who and when ("1 of 2 approvals: alice at …").
 * @param {PreviewOut} preview
 * @returns {HTMLElement | undefined}
 */
function approvalsView(preview) {
  const count = approvalsCount(preview);
  if (!count) return undefined;
  const who = preview.approvals.map((a) => `${a.by} at ${when(a.at)}`).join(", ");
  return h("span", { id: "preview-approvals" }, who ? `${count}: ${who}` : count);
}

/**
 * @param {PreviewOut} preview
 * @param {ToolOut | null} tool
 * @returns {HTMLDListElement}
 */
export function factsView(preview, tool) {
  const expiry =
    preview.status === "pending"
      ? [
          h("time", { datetime: preview.expires_at }, when(preview.expires_at)),
          " (",
          h("time", { datetime: preview.expires_at, "data-countdown": "" }, countdown(preview.expires_at)),
          " left)",
        ]
      : h("time", { datetime: preview.expires_at }, when(preview.expires_at));
  return details([
    ["Status", h("strong", { class: `status status-${preview.status}`, id: "preview-status" }, preview.status)],
    ["Tool", toolText(preview, tool)],
    ["Who asked", preview.requested_by],
    ["Run", link(consolePath("runs", preview.run_id), h("code", {}, preview.run_id))],
    ["Call", `${preview.call_id} (step ${preview.step})`],
    ["Cost", usd(preview.cost_usd)],
    ["Resource version", preview.resource_version],
    ["Expires", expiry],
    ["Created", when(preview.created_at)],
    ["Content hash", h("code", { class: "hash", id: "content-hash" }, preview.content_hash)],
    ["Arguments hash", h("code", { class: "hash" }, preview.args_hash)],
    [
      "Revised by",
      preview.revised_by
        ? h("span", { id: "preview-revision" }, `${preview.revised_by}: ${preview.revision_reason}`)
        : undefined,
    ],
    ["Approvals", approvalsView(preview)],
    ["Decided by", preview.decided_by ? `${preview.decided_by} at ${when(preview.decided_at)}` : null],
    ["Reason", preview.reason === null ? undefined : h("span", { id: "preview-reason" }, preview.reason)],
    [
      "Committed by",
      preview.committed_by ? `${preview.committed_by} at ${when(preview.committed_at)}` : undefined,
    ],
    ["Supersedes", previewLink(preview.supersedes)],
    ["Superseded by", previewLink(preview.superseded_by)],
  ]);
}
