// The tool registry: risk, approval and side-effect flags, enabled state; an admin can
// switch a tool off (and on again) for the tenant.

import { announce, h } from "../dom.js";
import { clearProblem, showProblem } from "../problems.js";
import { isAbort } from "../util.js";

const yes = (flag) => (flag ? "yes" : "no");

export async function toolsPage(ctx) {
  const isAdmin = ctx.me.roles.includes("admin");
  const slot = h("div", { class: "alerts" });
  const tbody = h("tbody");
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
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
      tbody,
    ),
  );

  const rows = new Map();
  // Each row and its switch are made once and updated in place, so a focused button keeps
  // its focus when it changes from Disable to Enable.
  function paint(tool) {
    let tr = rows.get(tool.name);
    if (!tr) {
      const cells = [
        h("td", {}, h("code", {}, tool.name)),
        h("td", {}, tool.description),
        h("td", {}),
        h("td", {}),
        h("td", {}),
        h("td", {}),
      ];
      if (isAdmin) {
        const button = h("button", { type: "button", class: "secondary" });
        button.addEventListener("click", () => toggle(tool.name, button.dataset.off === "1"));
        cells.push(h("td", {}, button));
      }
      tr = h("tr", { "data-tool": tool.name }, cells);
      rows.set(tool.name, tr);
    }
    const [, , risk, approval, effects, enabled] = tr.children;
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
    return tr;
  }

  let busy = false;
  async function toggle(name, off) {
    if (busy) return;
    busy = true;
    clearProblem(slot);
    try {
      const tool = await ctx.api(`/v1/tools/${encodeURIComponent(name)}/${off ? "disable" : "enable"}`, {
        method: "POST",
      });
      paint(tool);
      announce(`${tool.name} ${tool.enabled ? "enabled" : "disabled"} for your tenant.`);
    } catch (error) {
      if (!isAbort(error)) showProblem(slot, error, { action: "switch", me: ctx.me }, { onSignIn: ctx.signOut });
    } finally {
      busy = false;
    }
  }

  const page = await ctx.api("/v1/tools?limit=200");
  tbody.replaceChildren(...page.items.map(paint));
}
