// @ts-check
// The tool registry: risk, approval and side-effect flags, enabled state; an admin can
// switch a tool off (and on again) for the tenant.

import { announce, columnHeads, h } from "../dom.js";
import { attempt, clearProblem } from "../problems.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").ToolOut} ToolOut */
/** @typedef {import("../schema.js").ToolPage} ToolPage */

const yes = (/** @type {boolean} */ flag) => (flag ? "yes" : "no");

/**
 * A tool's row, its cells empty until `paintRow`; with a switch for an admin, which calls
 * `toggle(name, off)`.
 * @param {ToolOut} tool
 * @param {((name: string, off: boolean) => void) | null} toggle null: no switch
 * @returns {HTMLTableRowElement}
 */
function toolRow(tool, toggle) {
  const cells = [
    h("td", {}, h("code", {}, tool.name)),
    h("td", {}, tool.description),
    h("td", {}),
    h("td", {}),
    h("td", {}),
    h("td", {}),
  ];
  if (toggle) {
    const button = h("button", { type: "button", class: "secondary" });
    button.addEventListener("click", () => toggle(tool.name, button.dataset.off === "1"));
    cells.push(h("td", {}, button));
  }
  return h("tr", { "data-tool": tool.name }, cells);
}

/**
 * Shows `tool`'s state in its row, in place (a focused switch keeps its focus).
 * @param {HTMLTableRowElement} tr
 * @param {ToolOut} tool
 */
function paintRow(tr, tool) {
  const [, , risk, approval, effects, enabled] = /** @type {HTMLElement[]} */ ([...tr.children]);
  risk.className = `risk risk-${tool.risk}`;
  risk.textContent = tool.risk;
  approval.textContent = yes(tool.requires_approval);
  effects.textContent = yes(tool.side_effects);
  enabled.replaceChildren(h("span", { class: tool.enabled ? "on" : "off" }, yes(tool.enabled)));
  const button = tr.querySelector("button");
  if (button) {
    const verb = tool.enabled ? "Disable" : "Enable";
    button.textContent = verb;
    button.dataset.off = tool.enabled ? "1" : "0";
    button.setAttribute("aria-label", `${verb} ${tool.name}`);
  }
}

/**
 * @param {PageContext} ctx
 * @param {boolean} isAdmin
 * @param {HTMLElement} slot
 * @param {HTMLElement} tbody
 */
function showPage(ctx, isAdmin, slot, tbody) {
  const columns = ["Tool", "Description", "Risk", "Needs approval", "Side effects", "Enabled"];
  if (isAdmin) columns.push("Switch");
  ctx.main.append(
    h("h1", { id: "tools-title", tabindex: "-1" }, "Tools"),
    h(
      "p",
      { class: "lede" },
      isAdmin
        ? "Every registered tool. Disabling a tool switches it off for your tenant: new runs do not get it, and running runs have new proposals of it rejected."
        : "Every registered tool. Only an admin key can switch tools off and on.",
    ),
    slot,
    h(
      "table",
      { class: "grid", "aria-labelledby": "tools-title" },
      columnHeads(columns),
      tbody,
    ),
  );
}

/** @param {PageContext} ctx */
export async function toolsPage(ctx) {
  const isAdmin = ctx.me.roles.includes("admin");
  const slot = h("div", { class: "alerts" });
  const tbody = h("tbody");
  showPage(ctx, isAdmin, slot, tbody);

  /** @type {Map<string, HTMLTableRowElement>} */
  const rows = new Map();
  // Each row and its switch are made once and updated in place, so a focused button keeps
  // its focus when it changes from Disable to Enable.
  /**
   * @param {ToolOut} tool
   * @returns {HTMLTableRowElement}
   */
  function paint(tool) {
    const tr = rows.get(tool.name) || toolRow(tool, isAdmin ? toggle : null);
    rows.set(tool.name, tr);
    paintRow(tr, tool);
    return tr;
  }

  let busy = false;
  /**
   * Switches the tool `name` off (`off`) or on again.
   * @param {string} name
   * @param {boolean} off
   */
  async function toggle(name, off) {
    if (busy) return;
    busy = true;
    clearProblem(slot);
    const verb = off ? "disable" : "enable";
    await attempt(
      slot,
      async () => {
        const tool = /** @type {ToolOut} */ (
          await ctx.api(`/v1/tools/${encodeURIComponent(name)}/${verb}`, { method: "POST" })
        );
        paint(tool);
        announce(`${tool.name} ${tool.enabled ? "enabled" : "disabled"} for your tenant.`);
      },
      { action: "switch", me: ctx.me },
      { onSignIn: ctx.signOut },
    );
    busy = false;
  }

  const page = /** @type {ToolPage} */ (await ctx.api("/v1/tools?limit=200"));
  tbody.replaceChildren(...page.items.map(paint));
}
