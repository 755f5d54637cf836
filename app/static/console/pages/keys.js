// @ts-check
// The tenant's API keys, for an admin: the list (never a key, only its prefix), a form
// that makes a key and shows it once, and revocation (asked twice, in the row itself).

import { getKey } from "../api.js";
import { announce, columnHeads, h, when } from "../dom.js";
import { attempt, clearProblem } from "../problems.js";
import { keyForm } from "./key-form.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").KeyOut} KeyOut */
/** @typedef {import("../schema.js").KeyPage} KeyPage */
/** @typedef {import("../schema.js").ToolPage} ToolPage */

const COLUMNS = ["Name", "Prefix", "Subject", "Roles", "Scopes", "Created", "Last used", ""];

/**
 * Whether `item` is the key this console signed in with (by its prefix: the key itself
 * is never listed).
 * @param {KeyOut} item
 * @returns {boolean}
 */
function inUse(item) {
  const key = getKey();
  return Boolean(item.prefix && key && key.startsWith(item.prefix));
}

/**
 * The scopes the signed-in key may give: every scope a tool declares, narrowed to the
 * key's own when it holds only some.
 * @param {PageContext} ctx
 * @returns {Promise<string[]>}
 */
async function givableScopes(ctx) {
  const tools = /** @type {ToolPage} */ (await ctx.api("/v1/tools?limit=200"));
  const declared = new Set(tools.items.flatMap((t) => t.permissions));
  const held = ctx.me.scopes;
  return [...declared].filter((s) => held === null || held.includes(s)).sort();
}

/**
 * @param {string} kind its class
 * @param {string} label its accessible name
 * @param {string} text
 * @returns {HTMLButtonElement}
 */
function button(kind, label, text) {
  return h("button", { type: "button", class: kind, "aria-label": label }, text);
}

/** @param {PageContext} ctx */
export async function keysPage(ctx) {
  ctx.main.append(h("h1", { id: "keys-title", tabindex: "-1" }, "API keys"));
  if (!ctx.me.roles.includes("admin")) {
    ctx.main.append(h("p", { class: "lede" }, "Only an admin key can see and manage API keys."));
    return;
  }
  const slot = h("div", { class: "alerts" });
  const tbody = h("tbody");
  const showRevoked = h("input", { id: "show-revoked", type: "checkbox" });
  ctx.main.append(
    h(
      "p",
      { class: "lede" },
      "The API keys of your tenant. A key is shown once, when it is made; here only its first characters. Revoking a key refuses it at once everywhere.",
    ),
    keyForm(ctx, await givableScopes(ctx), () => load()),
    h("h2", { id: "list-title" }, "Keys"),
    h(
      "p",
      { class: "toolbar" },
      h(
        "span",
        { class: "choice" },
        showRevoked,
        h("label", { for: "show-revoked" }, "Show revoked keys"),
      ),
    ),
    slot,
    h("table", { class: "grid", "aria-labelledby": "list-title" }, columnHeads(COLUMNS), tbody),
  );

  /**
   * The row's last cell: Revoke, then Revoke now / Keep (no dialog: asked in place).
   * @param {KeyOut} item
   * @returns {HTMLTableCellElement}
   */
  function actions(item) {
    const cell = h("td", {});
    if (item.revoked_at) {
      cell.append(`revoked ${when(item.revoked_at)}`);
      return cell;
    }
    const ask = button("secondary", `Revoke ${item.name}`, "Revoke");
    ask.addEventListener("click", () => {
      const sure = button("danger", `Revoke ${item.name} now`, "Revoke now");
      const keep = button("secondary", `Keep ${item.name}`, "Keep");
      sure.addEventListener("click", () => revoke(item));
      keep.addEventListener("click", () => {
        cell.replaceChildren(ask);
        ask.focus();
      });
      const warning = inUse(item) ? "This is the key you are signed in with. " : "";
      cell.replaceChildren(warning, sure, " ", keep);
      sure.focus();
    });
    cell.append(ask);
    return cell;
  }

  /**
   * @param {KeyOut} item
   * @returns {HTMLTableRowElement}
   */
  function row(item) {
    const own = inUse(item);
    const name = own ? [item.name, h("span", { class: "hint" }, " (this key)")] : item.name;
    return h(
      "tr",
      { "data-key": item.id },
      h("td", {}, name),
      h("td", {}, item.prefix ? h("code", {}, `${item.prefix}…`) : "—"),
      h("td", {}, item.subject),
      h("td", {}, item.roles.join(", ")),
      h("td", {}, item.scopes === null ? "every scope" : item.scopes.join(", ") || "none"),
      h("td", {}, when(item.created_at), item.created_by ? ` by ${item.created_by}` : " (CLI)"),
      h("td", {}, item.last_used_at ? when(item.last_used_at) : "never"),
      actions(item),
    );
  }

  /** @param {KeyOut} item */
  async function revoke(item) {
    clearProblem(slot);
    const own = inUse(item);
    const result = await attempt(
      slot,
      () => ctx.api(`/v1/keys/${encodeURIComponent(item.id)}`, { method: "DELETE" }),
      { action: "revoke-key", me: ctx.me },
      { onSignIn: ctx.signOut },
    );
    if (!result.ok) return;
    announce(`The key ${item.name} is revoked.`);
    if (own) ctx.signOut(); // this console's key no longer opens anything
    else await load();
  }

  async function load() {
    const query = showRevoked.checked ? "?revoked=true&limit=200" : "?limit=200";
    /** @type {KeyOut[]} */
    const items = [];
    /** @type {string | null} */
    let cursor = null;
    do {
      const more = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const page = /** @type {KeyPage} */ (await ctx.api(`/v1/keys${query}${more}`));
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    tbody.replaceChildren(
      ...(items.length
        ? items.map(row)
        : [h("tr", {}, h("td", { colspan: String(COLUMNS.length) }, "No keys."))]),
    );
  }

  showRevoked.addEventListener("change", () => {
    attempt(slot, load, { action: "load", me: ctx.me }, { onSignIn: ctx.signOut });
  });
  await load();
}
