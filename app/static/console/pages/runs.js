// @ts-check
// Runs: the list, filtered by status and agent (the filters are in the address), its
// first page kept current; "Load more" follows the cursor.

import { columnHeads, consolePath, h, labelledSelect, link, usd, when } from "../dom.js";
import { keepCurrent } from "../live.js";
import { attempt, clearProblem } from "../problems.js";
import { RUN_STATUSES } from "../schema.js";
import { coalesce, isOneOf, optional } from "../util.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").AgentPage} AgentPage */
/** @typedef {import("../schema.js").EventType} EventType */
/** @typedef {import("../schema.js").RunOut} RunOut */
/** @typedef {import("../schema.js").RunPage} RunPage */
/** @typedef {{status: string, agent: string}} RunFilters */

/** @type {EventType[]} */
const LIST_TYPES = ["run.created", "run.finished", "call.awaiting_approval", "call.approved"];
const COLUMNS = ["Run", "Agent", "Status", "Termination", "Steps", "Cost", "Created"];

/**
 * @param {RunOut} run
 * @returns {HTMLTableRowElement}
 */
function runRow(run) {
  return h(
    "tr",
    { "data-run": run.id },
    h("td", {}, link(consolePath("runs", run.id), h("code", {}, run.id))),
    h("td", {}, run.agent),
    h("td", {}, h("span", { class: `status status-${run.status}` }, run.status)),
    h("td", {}, run.termination_reason || "—"),
    h("td", { class: "num" }, String(run.usage.steps)),
    h("td", { class: "num" }, usd(run.usage.cost_usd)),
    h("td", {}, when(run.created_at)),
  );
}

/**
 * The filters' query string ("?status=…&agent=…", or "" for none).
 * @param {RunFilters} filters
 * @param {Record<string, string>} [extra]
 * @returns {URLSearchParams}
 */
function filterParams(filters, extra = {}) {
  const params = new URLSearchParams(extra);
  if (filters.status) params.set("status", filters.status);
  if (filters.agent) params.set("agent", filters.agent);
  return params;
}

/**
 * The runs table, its "Load more" button, and `load(append)`, which reads the first page
 * (or, appending, the next one) of the runs that match `filters`.
 * @param {PageContext} ctx
 * @param {HTMLElement} slot
 * @param {RunFilters} filters
 */
function runsTable(ctx, slot, filters) {
  const tbody = h("tbody");
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  const table = h(
    "table",
    { class: "grid", "aria-labelledby": "runs-title" },
    columnHeads(COLUMNS),
    tbody,
  );
  /** @type {string | null} */
  let cursor = null;
  /** @param {boolean} append */
  const load = async (append) => {
    const params = filterParams(filters, { limit: "50" });
    if (append && cursor) params.set("cursor", cursor);
    const context = { action: /** @type {const} */ ("load"), me: ctx.me };
    table.setAttribute("aria-busy", "true");
    const read = await attempt(slot, () => ctx.api(`/v1/runs?${params}`), context, {
      onSignIn: ctx.signOut,
    }).finally(() => table.removeAttribute("aria-busy"));
    if (!read.ok) return;
    const page = /** @type {RunPage} */ (read.value);
    clearProblem(slot);
    const rows = page.items.map(runRow);
    if (!rows.length && !append) {
      rows.push(h("tr", { class: "empty" }, h("td", { colspan: COLUMNS.length }, "No runs match.")));
    }
    if (append) tbody.append(...rows);
    // An unchanged page keeps its rows: a row swapped between a press and its release
    // loses the click (the filters and live updates reload the page often).
    else if (!sameRows(tbody, rows)) tbody.replaceChildren(...rows);
    cursor = page.next_cursor;
    more.hidden = !cursor;
  };
  return { table, more, load };
}

/**
 * @param {HTMLElement} tbody
 * @param {HTMLElement[]} rows
 */
function sameRows(tbody, rows) {
  const shown = tbody.children;
  return shown.length === rows.length && rows.every((row, i) => row.isEqualNode(shown[i]));
}

/**
 * A filter: "any", or one of `values`.
 * @param {string} id
 * @param {string} label
 * @param {readonly string[]} values
 * @param {string} selected
 * @param {(value: string) => void} onChange
 */
function filterSelect(id, label, values, selected, onChange) {
  /** @type {Array<[string, string]>} */
  const options = [["", "any"], ...values.map((v) => /** @type {[string, string]} */ ([v, v]))];
  return labelledSelect(id, label, options, selected, onChange);
}

/** @param {PageContext} ctx */
export async function runsPage(ctx) {
  const query = new URLSearchParams(location.search);
  const asked = query.get("status");
  /** @type {RunFilters} */
  const filters = {
    status: isOneOf(RUN_STATUSES, asked) ? asked : "",
    agent: query.get("agent") || "",
  };
  const slot = h("div", { class: "alerts" });
  const note = h("p", { class: "live" });
  const agents = await optional(
    async () => /** @type {AgentPage} */ (await ctx.api("/v1/agents?limit=200")).items.map((a) => a.name),
    /** @type {string[]} */ ([]),
  );
  if (filters.agent && !agents.includes(filters.agent)) agents.push(filters.agent);

  const runs = runsTable(ctx, slot, filters);
  let extraPages = false;
  const refresh = coalesce(() => runs.load(false));
  /** @param {keyof RunFilters} name */
  const onFilter = (name) => (/** @type {string} */ value) => {
    filters[name] = value;
    extraPages = false;
    const search = filterParams(filters).toString();
    history.replaceState(null, "", `/console/runs${search ? `?${search}` : ""}`);
    refresh();
  };
  runs.more.addEventListener("click", () => {
    extraPages = true;
    runs.load(true);
  });

  ctx.main.append(
    h("h1", { id: "runs-title", tabindex: "-1" }, "Runs"),
    h(
      "div",
      { class: "toolbar" },
      filterSelect("runs-status", "Status", RUN_STATUSES, filters.status, onFilter("status")),
      filterSelect("runs-agent", "Agent", agents, filters.agent, onFilter("agent")),
      note,
    ),
    slot,
    runs.table,
    runs.more,
  );
  // Keeps the first page current (not while the user has loaded more pages).
  await refresh();
  keepCurrent(ctx, {
    types: LIST_TYPES,
    refresh: () => {
      if (!extraPages) refresh();
    },
    note,
  });
}
