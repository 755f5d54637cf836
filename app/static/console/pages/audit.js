// @ts-check
// The tenant's audit chain, for an admin: every decision on a preview and every operator
// action, oldest first, who did what to what and when, each entry's details and hashes
// one click away; more entries on demand. `python -m app audit verify` checks the chain.

import { columnHeads, consolePath, h, link, when } from "../dom.js";
import { attempt, clearProblem } from "../problems.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").AuditEntryOut} AuditEntryOut */
/** @typedef {import("../schema.js").AuditPage} AuditPage */

const COLUMNS = ["#", "When", "Who", "Action", "Target", "Details"];
const PREVIEW_ACTIONS = new Set(["approve", "reject", "revise", "commit", "refuse_commit"]);

/**
 * The entry's target, a link when it is a preview.
 * @param {AuditEntryOut} entry
 * @returns {HTMLElement | string}
 */
function target(entry) {
  if (PREVIEW_ACTIONS.has(entry.action)) {
    return link(consolePath("previews", entry.target), h("code", {}, entry.target));
  }
  return h("code", {}, entry.target);
}

/**
 * @param {AuditEntryOut} entry
 * @returns {HTMLTableRowElement}
 */
function row(entry) {
  const data = JSON.stringify(entry.data, null, 2);
  return h(
    "tr",
    { "data-seq": String(entry.seq), "data-action": entry.action },
    h("td", { class: "num" }, String(entry.seq)),
    h("td", {}, h("time", { datetime: entry.at }, when(entry.at))),
    h("td", {}, entry.actor),
    h("td", { class: "action" }, entry.action),
    h("td", {}, target(entry)),
    h(
      "td",
      {},
      h(
        "details",
        {},
        h("summary", {}, "Details"),
        h("pre", { class: "json" }, data),
        h("p", { class: "hash" }, "hash ", h("code", {}, entry.hash)),
        h("p", { class: "hash" }, "previous ", h("code", {}, entry.prev_hash)),
      ),
    ),
  );
}

/** @param {PageContext} ctx */
export async function auditPage(ctx) {
  ctx.main.append(h("h1", { id: "audit-title", tabindex: "-1" }, "Audit"));
  if (!ctx.me.roles.includes("admin")) {
    ctx.main.append(h("p", { class: "lede" }, "Only an admin key can read the audit chain."));
    return;
  }
  const slot = h("div", { class: "alerts" });
  const tbody = h("tbody");
  const more = h("button", { type: "button", id: "audit-more" }, "Show more");
  const empty = h("p", { class: "hint" }, "Nothing has been recorded yet.");
  ctx.main.append(
    h(
      "p",
      { class: "lede" },
      "Every decision on a preview and every operator action, oldest first. Each entry is " +
        "hashed over the one before: `python -m app audit verify` finds one changed, removed " +
        "or moved.",
    ),
    slot,
    h("table", { class: "grid", "aria-labelledby": "audit-title" }, columnHeads(COLUMNS), tbody),
    empty,
    more,
  );
  /** @type {string | null} */
  let cursor = null;
  async function load() {
    clearProblem(slot);
    await attempt(slot, async () => {
      const query = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const page = /** @type {AuditPage} */ (await ctx.api(`/v1/audit?limit=100${query}`));
      tbody.append(...page.items.map(row));
      cursor = page.next_cursor;
      more.hidden = cursor === null;
      empty.hidden = tbody.children.length > 0;
    }, { action: "load", me: ctx.me });
  }
  more.addEventListener("click", () => load());
  await load();
}
