// @ts-check
// One run's page: its status, its parent and child runs, its diagnosis, output with its
// citations, usage against limits, calls, and the timeline, live until the run finishes.

import { announce, columnHeads, consolePath, details, h, jsonBlock, link, replace, usd, when } from "../dom.js";
import { diagnosisView } from "../diagnosis.js";
import { guardrailsView, isGuardrailEvent } from "../guardrails.js";
import { attempt, clearProblem } from "../problems.js";
import { timeline } from "../timeline.js";
import { coalesce, debounce, drawnParts } from "../util.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").CallOut} CallOut */
/** @typedef {import("../schema.js").CallPage} CallPage */
/** @typedef {import("../schema.js").DiagnosisOut} DiagnosisOut */
/** @typedef {import("../schema.js").EventOut} EventOut */
/** @typedef {import("../schema.js").RunOut} RunOut */
/** @typedef {import("../schema.js").RunPage} RunPage */

/**
 * A run's children (`GET /v1/runs?parent_run_id=`), each a link to its own page.
 * @param {RunOut[]} children
 * @returns {HTMLElement}
 */
function childrenView(children) {
  if (!children.length) return h("p", { class: "hint" }, "No child runs.");
  return h(
    "ul",
    { class: "plain children", "aria-label": "Child runs" },
    children.map((c) =>
      h(
        "li",
        { "data-run": c.id },
        link(consolePath("runs", c.id), h("code", {}, c.id)),
        ` — ${c.agent}, `,
        h("span", { class: `status status-${c.status}` }, c.termination_reason || c.status),
      ),
    ),
  );
}

/**
 * @param {RunOut} run
 * @returns {HTMLTableElement}
 */
function usageView(run) {
  const { usage, limits } = run;
  /** @type {Array<[string, string, string]>} */
  const rows = [
    ["Steps", String(usage.steps), String(limits.max_steps)],
    [
      "Tokens (input + output)",
      `${usage.input_tokens + usage.output_tokens} (${usage.input_tokens} + ${usage.output_tokens})`,
      String(limits.max_tokens),
    ],
    ["Cost", usd(usage.cost_usd), usd(limits.max_cost_usd)],
    ["Tool calls", String(usage.tool_calls), String(limits.max_tool_calls)],
    ["Time", `deadline ${when(run.deadline_at)}`, `${limits.deadline_s} s`],
  ];
  return h(
    "table",
    { class: "grid usage", "aria-labelledby": "usage-title" },
    columnHeads(["Measure", "Used", "Limit"]),
    h(
      "tbody",
      {},
      rows.map(([name, used, limit]) =>
        h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, used), h("td", {}, limit)),
      ),
    ),
  );
}

/**
 * @param {RunOut} run
 * @returns {HTMLElement}
 */
function outputView(run) {
  if (!run.output) {
    return h(
      "p",
      { class: "hint" },
      run.status === "finished" ? "No output." : "No output yet: the run has not finished.",
    );
  }
  // The model's text as text: no Markdown, and links in it are not made clickable.
  const section = h("div", {}, h("p", { class: "output-text", id: "output-text" }, run.output.text));
  // A typed agent's answer as the document it was checked to be (its schema's fields).
  if (run.output.data !== null && run.output.data !== undefined) {
    section.append(
      h("h3", { id: "output-data-title" }, "Typed output"),
      h("div", { id: "output-data" }, jsonBlock(run.output.data, "Typed output")),
    );
  }
  if (run.output.citations.length) {
    section.append(
      h("h3", {}, "Citations"),
      h(
        "ul",
        { class: "citations", "aria-label": "Citations" },
        run.output.citations.map((c) =>
          h(
            "li",
            {},
            h("code", {}, c.source_id),
            ` — ${c.tool}`,
            c.source_version ? `, version ${c.source_version}` : "",
            c.observed_at ? `, observed ${when(c.observed_at)}` : "",
          ),
        ),
      ),
    );
  }
  return section;
}

/**
 * @param {CallOut[]} calls
 * @returns {HTMLElement}
 */
function callsView(calls) {
  if (!calls.length) return h("p", { class: "hint" }, "No calls yet.");
  return h(
    "table",
    { class: "grid calls", "aria-labelledby": "calls-title" },
    columnHeads(["Call", "Step", "Tool", "Status", "Error", "Source", "Trust", "Preview", "Arguments", "Output"]),
    h(
      "tbody",
      {},
      calls.map((c) =>
        h(
          "tr",
          { "data-call": c.call_id },
          h("td", {}, h("code", {}, c.call_id)),
          h("td", { class: "num" }, String(c.step)),
          h("td", {}, c.tool),
          h("td", {}, h("span", { class: `status status-${c.status}` }, c.status)),
          h(
            "td",
            {},
            c.error ? [h("code", {}, c.error.code), c.error.message ? `: ${c.error.message}` : ""] : "—",
          ),
          h("td", {}, c.source_id || "—"),
          // What a tool returned is data from outside, whatever it says (docs/trust.md).
          h("td", {}, h("span", { class: `trust trust-${c.trust}` }, c.trust)),
          h("td", {}, c.preview_id ? link(consolePath("previews", c.preview_id), "Preview") : "—"),
          h("td", {}, jsonBlock(c.arguments, `Arguments of ${c.call_id}`)),
          h("td", {}, c.output === null ? "—" : jsonBlock(c.output, `Output of ${c.call_id}`)),
        ),
      ),
    ),
  );
}

/**
 * @param {RunOut} run
 * @returns {HTMLDListElement}
 */
function factsView(run) {
  return details([
    ["Agent", run.agent],
    [
      "Parent run",
      run.parent_run_id
        ? link(
            consolePath("runs", run.parent_run_id),
            h("code", { id: "parent-run" }, run.parent_run_id),
          )
        : undefined,
    ],
    [
      "Continued from",
      // A run that continues a finished one (continue_from): a way back to it.
      run.continued_from
        ? link(consolePath("runs", run.continued_from), h("code", {}, run.continued_from))
        : undefined,
    ],
    ["Status", h("strong", { class: `status status-${run.status}`, id: "run-status" }, run.status)],
    ["Termination reason", run.termination_reason],
    ["Error", run.error ? `${run.error.code}: ${run.error.message}` : undefined],
    [
      "Waiting for approval",
      run.pending_approvals.length
        ? h(
            "ul",
            { class: "plain" },
            run.pending_approvals.map((p) =>
              h("li", {}, link(consolePath("previews", p.preview_id), p.summary), ` (${p.tool})`),
            ),
          )
        : undefined,
    ],
    ["Tools", run.tools.join(", ") || "—"],
    [
      "Reserved for children",
      run.reserved.tokens || run.reserved.tool_calls
        ? `${run.reserved.tokens} tokens, ${usd(run.reserved.cost_usd)}, ` +
          `${run.reserved.tool_calls} tool calls`
        : undefined,
    ],
    ["Created", when(run.created_at)],
    ["Updated", when(run.updated_at)],
    ["Deadline", when(run.deadline_at)],
  ]);
}

/**
 * @param {PageContext} ctx
 * @param {string} id
 */
export async function runPage(ctx, id) {
  const path = `/v1/runs/${encodeURIComponent(id)}`;
  const slot = h("div", { class: "alerts" });
  const facts = h("div", {});
  const diagnosis = h("div", {}, h("p", { class: "hint" }, "Loading…"));
  const output = h("div", {});
  const usage = h("div", {});
  const calls = h("div", {});
  const kids = h("div", {}, h("p", { class: "hint" }, "Loading…"));
  const guards = h("div", {}, h("p", { class: "hint" }, "Loading…"));
  ctx.main.append(
    h("h1", { tabindex: "-1" }, "Run ", h("code", {}, id)),
    slot,
    facts,
    h("section", {}, h("h2", { id: "diagnosis-title" }, "Diagnosis"), diagnosis),
    h("section", {}, h("h2", {}, "Output"), output),
    h("section", {}, h("h2", { id: "usage-title" }, "Usage against limits"), usage),
    h("section", {}, h("h2", { id: "calls-title" }, "Calls"), calls),
    h("section", {}, h("h2", { id: "children-title" }, "Child runs"), kids),
    h("section", {}, h("h2", { id: "guardrails-title" }, "Guardrails"), guards),
  );
  let run = /** @type {RunOut} */ (await ctx.api(path));
  let lastStatus = run.status;

  const changed = drawnParts(); // what did not change is left as it is
  /**
   * @param {CallOut[] | null} callItems
   * @param {DiagnosisOut | null} [found]
   */
  const paint = (callItems, found = null) => {
    if (changed("run", run)) {
      replace(facts, factsView(run));
      replace(output, outputView(run));
      replace(usage, usageView(run));
    }
    if (callItems && changed("calls", callItems)) replace(calls, callsView(callItems));
    if (found && changed("diagnosis", found)) replace(diagnosis, diagnosisView(found));
  };
  const read = async () => {
    const [fresh, page, found, children] = await Promise.all([
      ctx.api(path),
      ctx.api(`${path}/calls?limit=200`),
      ctx.api(`${path}/diagnosis`),
      ctx.api(`/v1/runs?parent_run_id=${encodeURIComponent(id)}&limit=200`),
    ]);
    run = /** @type {RunOut} */ (fresh);
    paint(/** @type {CallPage} */ (page).items, /** @type {DiagnosisOut} */ (found));
    const childItems = /** @type {RunPage} */ (children).items;
    if (changed("children", childItems)) replace(kids, childrenView(childItems));
    clearProblem(slot);
    if (run.status !== lastStatus) {
      lastStatus = run.status;
      announce(
        run.status === "finished"
          ? `The run finished: ${run.termination_reason}.`
          : `The run is ${run.status}.`,
      );
    }
  };
  const refresh = coalesce(() =>
    attempt(slot, read, { action: "load", me: ctx.me }, { onSignIn: ctx.signOut }),
  );
  paint(null);
  await refresh();
  const soon = debounce(refresh, 150);
  /** @type {EventOut[]} */
  const guarded = [];
  const first = await timeline(ctx, ctx.main, id, {
    done: run.status === "finished",
    onEvent: (event) => {
      if (isGuardrailEvent(event)) {
        guarded.push(event);
        replace(guards, guardrailsView(guarded));
      }
      return event.type === "run.finished" ? refresh() : soon();
    },
  });
  guarded.unshift(...first.filter(isGuardrailEvent));
  replace(guards, guardrailsView(guarded));
}
