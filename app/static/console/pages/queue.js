// @ts-check
// The approval queue: previews of the tenant by status (pending by default), newest
// first, kept current over the tenant's event stream, with a live expiry countdown.

import { columnHeads, consolePath, countdown, h, labelledSelect, link, usd, when } from "../dom.js";
import { keepCurrent } from "../live.js";
import { attempt, clearProblem } from "../problems.js";
import { PREVIEW_STATUSES } from "../schema.js";
import { coalesce, isOneOf, optional } from "../util.js";
import { approvalsCount } from "./preview-view.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").EventType} EventType */
/** @typedef {import("../schema.js").PreviewOut} PreviewOut */
/** @typedef {import("../schema.js").PreviewPage} PreviewPage */
/** @typedef {import("../schema.js").PreviewStatus} PreviewStatus */
/** @typedef {import("../schema.js").ToolOut} ToolOut */
/** @typedef {import("../schema.js").ToolPage} ToolPage */
/** @typedef {Record<string, ToolOut>} ToolsByName */

const COLUMNS = ["Tool", "Summary", "Who asked", "Run", "Cost", "Risk", "Expires in"];
/** @type {EventType[]} */
const TYPES = [
  "preview.created",
  "preview.approval_added",
  "preview.approved",
  "preview.rejected",
  "preview.committed",
  "preview.superseded",
  "preview.expired",
  "call.awaiting_approval",
  "call.approved",
  "call.rejected_by_approver",
  "run.finished",
];

/**
 * Updates every countdown (`time[data-countdown]`) under `root`.
 * @param {ParentNode} root
 */
export function tickCountdowns(root) {
  const now = Date.now();
  for (const el of root.querySelectorAll("time[data-countdown]")) {
    el.textContent = countdown(el.getAttribute("datetime") || "", now);
  }
}

/**
 * @param {ToolOut | undefined} tool
 * @returns {string}
 */
function riskText(tool) {
  if (!tool) return "—";
  return tool.requires_approval ? `${tool.risk} · approval required` : tool.risk;
}

/**
 * A quorum's progress beside the summary (nothing for a single approver's preview).
 * @param {PreviewOut} preview
 * @returns {HTMLElement | undefined}
 */
function quorum(preview) {
  const count = preview.status === "pending" ? approvalsCount(preview) : undefined;
  return count ? h("span", { class: "hint quorum" }, ` (${count})`) : undefined;
}

/**
 * @param {PreviewOut} preview
 * @param {ToolsByName} tools
 * @returns {HTMLTableRowElement}
 */
function row(preview, tools) {
  const expiry =
    preview.status === "pending"
      ? h(
          "time",
          { datetime: preview.expires_at, "data-countdown": "", title: when(preview.expires_at) },
          countdown(preview.expires_at),
        )
      : h("span", {}, preview.status);
  const tr = h(
    "tr",
    { "data-preview": preview.id },
    h("td", {}, preview.tool),
    h("td", {}, link(consolePath("previews", preview.id), preview.summary), quorum(preview)),
    h("td", {}, preview.requested_by),
    h("td", {}, link(consolePath("runs", preview.run_id), h("code", {}, preview.run_id))),
    h("td", { class: "num" }, usd(preview.cost_usd)),
    h("td", { class: `risk risk-${tools[preview.tool]?.risk || "unknown"}` }, riskText(tools[preview.tool])),
    h("td", {}, expiry),
  );
  return tr;
}

/**
 * The queue's table: one row per preview, each made once (by id and status) and moved
 * only when out of place, so a focused link keeps its focus.
 */
function queueTable() {
  /** @type {Map<string, HTMLTableRowElement>} */
  const rows = new Map();
  const tbody = h("tbody");
  const empty = h(
    "tr",
    { class: "empty" },
    h("td", { colspan: COLUMNS.length }, "No previews with this status."),
  );
  const table = h(
    "table",
    { class: "grid", "aria-labelledby": "queue-title" },
    columnHeads(COLUMNS),
    tbody,
  );
  tbody.append(empty);
  return {
    table,
    tbody,
    clear() {
      rows.clear();
      tbody.replaceChildren();
    },
    /**
     * @param {PreviewOut[]} items
     * @param {ToolsByName} tools
     */
    show(items, tools) {
      /** @type {Array<[string, HTMLTableRowElement]>} */
      const wanted = items.map((p) => {
        const key = `${p.id}:${p.status}:${p.approvals.length}`;
        const tr = rows.get(key) || row(p, tools);
        rows.set(key, tr);
        return [key, tr];
      });
      const keep = new Set(wanted.map(([key]) => key));
      for (const [key, tr] of rows) {
        if (!keep.has(key)) {
          tr.remove();
          rows.delete(key);
        }
      }
      wanted.forEach(([, tr], i) => {
        if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
      });
      if (wanted.length) empty.remove();
      else tbody.append(empty);
      tickCountdowns(tbody);
    },
  };
}

/**
 * The tools by name, for the risk column ("—" when they cannot be read: the queue itself
 * still works).
 * @param {PageContext} ctx
 * @returns {Promise<ToolsByName>}
 */
async function toolsByName(ctx) {
  return optional(async () => {
    const page = /** @type {ToolPage} */ (await ctx.api("/v1/tools?limit=200"));
    return Object.fromEntries(page.items.map((t) => [t.name, t]));
  }, {});
}

/** @param {PageContext} ctx */
export async function queuePage(ctx) {
  const asked = new URLSearchParams(location.search).get("status");
  /** @type {PreviewStatus} */
  let status = isOneOf(PREVIEW_STATUSES, asked) ? asked : "pending";
  let refresh = () => {};
  const slot = h("div", { class: "alerts" });
  const note = h("p", { class: "live" });
  const queue = queueTable();
  const filter = labelledSelect(
    "queue-status",
    "Status",
    PREVIEW_STATUSES.map((s) => [s, s]),
    status,
    (value) => {
      if (!isOneOf(PREVIEW_STATUSES, value)) return;
      status = value;
      history.replaceState(null, "", value === "pending" ? "/console" : `/console?status=${value}`);
      queue.clear();
      refresh();
    },
  );
  ctx.main.append(
    h("h1", { id: "queue-title", tabindex: "-1" }, "Approval queue"),
    h(
      "p",
      { class: "lede" },
      "Calls waiting for a decision, newest first. Open one to review what it would change.",
    ),
    h("div", { class: "toolbar" }, filter, note),
    slot,
    queue.table,
  );

  if (!ctx.me.roles.includes("approver")) {
    note.textContent = "";
    slot.append(
      h(
        "p",
        { class: "notice" },
        "Your key does not have the approver role, so it cannot see the approval queue. Open a preview from its run instead (Runs).",
      ),
    );
    return;
  }

  const tools = await toolsByName(ctx);
  refresh = coalesce(async () => {
    const path = `/v1/approvals?status=${encodeURIComponent(status)}&limit=100`;
    const context = { action: /** @type {const} */ ("load"), me: ctx.me };
    const read = await attempt(slot, () => ctx.api(path), context, { onSignIn: ctx.signOut });
    if (!read.ok) return;
    clearProblem(slot);
    queue.show(/** @type {PreviewPage} */ (read.value).items, tools);
  });

  await refresh();
  ctx.every(1000, () => tickCountdowns(queue.tbody));
  keepCurrent(ctx, { types: TYPES, refresh, note });
}
