// The approval queue: previews of the tenant by status (pending by default), newest
// first, kept current over the tenant's event stream, with a live expiry countdown.

import { consolePath, countdown, h, labelledSelect, link, usd, when } from "../dom.js";
import { keepCurrent } from "../live.js";
import { clearProblem, showProblem } from "../problems.js";
import { coalesce, isAbort } from "../util.js";

export const PREVIEW_STATUSES = [
  "pending",
  "approved",
  "rejected",
  "expired",
  "superseded",
  "committed",
];
const COLUMNS = ["Tool", "Summary", "Who asked", "Run", "Cost", "Risk", "Expires in"];
const TYPES = [
  "preview.created",
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

/** Updates every countdown (`time[data-countdown]`) under `root`. */
export function tickCountdowns(root) {
  const now = Date.now();
  for (const el of root.querySelectorAll("time[data-countdown]")) {
    el.textContent = countdown(el.getAttribute("datetime"), now);
  }
}

function riskText(tool) {
  if (!tool) return "—";
  return tool.requires_approval ? `${tool.risk} · approval required` : tool.risk;
}

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
    h("td", {}, link(consolePath("previews", preview.id), preview.summary)),
    h("td", {}, preview.requested_by),
    h("td", {}, link(consolePath("runs", preview.run_id), h("code", {}, preview.run_id))),
    h("td", { class: "num" }, usd(preview.cost_usd)),
    h("td", { class: `risk risk-${tools[preview.tool]?.risk || "unknown"}` }, riskText(tools[preview.tool])),
    h("td", {}, expiry),
  );
  return tr;
}

export async function queuePage(ctx) {
  const query = new URLSearchParams(location.search);
  let status = PREVIEW_STATUSES.includes(query.get("status")) ? query.get("status") : "pending";
  const rows = new Map();
  let refresh = () => {};
  const slot = h("div", { class: "alerts" });
  const note = h("p", { class: "live" });
  const tbody = h("tbody");
  const empty = h(
    "tr",
    { class: "empty" },
    h("td", { colspan: COLUMNS.length }, "No previews with this status."),
  );
  const table = h(
    "table",
    { class: "grid", "aria-labelledby": "queue-title" },
    h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", { scope: "col" }, c)))),
    tbody,
  );
  const filter = labelledSelect(
    "queue-status",
    "Status",
    PREVIEW_STATUSES.map((s) => [s, s]),
    status,
    (value) => {
      status = value;
      history.replaceState(null, "", value === "pending" ? "/console" : `/console?status=${value}`);
      rows.clear();
      tbody.replaceChildren();
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
    table,
  );
  tbody.append(empty);

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

  let tools = {};
  try {
    const page = await ctx.api("/v1/tools?limit=200");
    tools = Object.fromEntries(page.items.map((t) => [t.name, t]));
  } catch (error) {
    if (isAbort(error)) return;
    // The risk column shows "—"; the queue itself still works.
  }

  refresh = coalesce(async () => {
    let page;
    try {
      page = await ctx.api(`/v1/approvals?status=${encodeURIComponent(status)}&limit=100`);
    } catch (error) {
      if (!isAbort(error)) showProblem(slot, error, { action: "load", me: ctx.me }, { onSignIn: ctx.signOut });
      return;
    }
    clearProblem(slot);
    const wanted = page.items.map((p) => {
      const key = `${p.id}:${p.status}`;
      if (!rows.has(key)) rows.set(key, row(p, tools));
      return [key, rows.get(key)];
    });
    const keep = new Set(wanted.map(([key]) => key));
    for (const [key, tr] of rows) {
      if (!keep.has(key)) {
        tr.remove();
        rows.delete(key);
      }
    }
    // Moves only what is out of place, so a focused link keeps its focus.
    wanted.forEach(([, tr], i) => {
      if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
    });
    if (wanted.length) empty.remove();
    else tbody.append(empty);
    tickCountdowns(tbody);
  });

  await refresh();
  ctx.every(1000, () => tickCountdowns(tbody));
  keepCurrent(ctx, { types: TYPES, refresh, note });
}
