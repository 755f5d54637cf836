// @ts-check
// One preview: what the call would change, and the decision on it (Approve with the
// content hash shown, Reject with a reason, Commit with an Idempotency-Key), with the
// run's timeline so far. The view is in preview-view.js, the decision in
// preview-decision.js.

import { h, jsonBlock, replace } from "../dom.js";
import { attempt } from "../problems.js";
import { timeline } from "../timeline.js";
import { coalesce, drawnParts, optional } from "../util.js";
import { decisionControls, wireDecision } from "./preview-decision.js";
import { reviseControls, wireRevise } from "./preview-revise.js";
import { factsView, impactView } from "./preview-view.js";
import { tickCountdowns } from "./queue.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").PreviewOut} PreviewOut */
/** @typedef {import("../schema.js").ToolOut} ToolOut */
/** @typedef {import("../schema.js").ToolPage} ToolPage */
/** @typedef {import("../schema.js").RunOut} RunOut */
/** @typedef {import("../schema.js").CallOut} CallOut */
/** @typedef {import("../schema.js").CallPage} CallPage */
/** @typedef {import("../schema.js").TenantEventPage} TenantEventPage */

/** The page's parts that show the preview, each filled anew when it changes. */
function previewParts() {
  const args = h("section", {}, h("h2", {}, "Arguments"));
  const argsBody = h("div", {});
  args.append(argsBody);
  return {
    slot: h("div", { class: "alerts" }),
    result: h("p", { class: "result", role: "status", "aria-live": "polite" }),
    summary: h("p", { class: "summary" }),
    facts: h("div", {}),
    impact: h("div", {}),
    args,
    argsBody,
  };
}

/**
 * The registered tool `name` (for its risk), or null when the tools cannot be read.
 * @param {PageContext} ctx
 * @param {string} name
 * @returns {Promise<ToolOut | null>}
 */
function toolNamed(ctx, name) {
  return optional(async () => {
    const tools = /** @type {ToolPage} */ (await ctx.api("/v1/tools?limit=200"));
    return tools.items.find((t) => t.name === name) || null;
  }, null);
}

/**
 * What the model wrote beside the preview's call (its stated reason), from its turn's
 * `turn.completed`; null when it wrote nothing or the events cannot be read.
 * @param {PageContext} ctx
 * @param {PreviewOut} preview
 * @returns {Promise<string | null>}
 */
function modelSaid(ctx, preview) {
  return optional(async () => {
    const query = `run_id=${encodeURIComponent(preview.run_id)}&types=turn.completed&limit=200`;
    const page = /** @type {TenantEventPage} */ (await ctx.api(`/v1/events?${query}`));
    const turn = page.items.find((e) => e.data?.step === preview.step);
    const text = turn?.data?.text;
    return typeof text === "string" && text ? text : null;
  }, null);
}

/**
 * Why the call is asked: what the run was asked, by which agent, and the calls it made
 * before this one; nothing when the run cannot be read.
 * @param {PageContext} ctx
 * @param {PreviewOut} preview
 */
async function askedView(ctx, preview) {
  const runPath = `/v1/runs/${encodeURIComponent(preview.run_id)}`;
  const run = await optional(async () => /** @type {RunOut} */ (await ctx.api(runPath)), null);
  if (run === null) return h("div", {});
  const calls = await optional(
    async () => /** @type {CallPage} */ (await ctx.api(`${runPath}/calls`)).items,
    /** @type {CallOut[]} */ ([]),
  );
  const before = calls.filter((c) => c.step < preview.step);
  const said = await modelSaid(ctx, preview);
  const section = h(
    "section",
    { class: "asked" },
    h("h2", {}, "Asked"),
    h("p", {}, `The agent ${run.agent} was asked:`),
    h("blockquote", { id: "run-input" }, run.input),
  );
  if (said) {
    section.append(
      h("p", {}, `Beside this call (step ${preview.step}), the model said:`),
      h("blockquote", { id: "model-said" }, said),
    );
  }
  if (before.length) {
    section.append(
      h("p", {}, "The calls that led here:"),
      h(
        "ol",
        { class: "led-here" },
        ...before.map((c) =>
          h("li", {}, `step ${c.step}: ${c.tool} — ${c.status}${c.error ? ` (${c.error.code})` : ""}`),
        ),
      ),
    );
  }
  return section;
}

/**
 * @param {PageContext} ctx
 * @param {string} id
 */
export async function previewPage(ctx, id) {
  const path = `/v1/previews/${encodeURIComponent(id)}`;
  const parts = previewParts();
  ctx.main.append(h("h1", { tabindex: "-1" }, "Preview"), parts.summary, parts.slot);

  let preview = /** @type {PreviewOut} */ (await ctx.api(path));
  const tool = await toolNamed(ctx, preview.tool);
  const decision = decisionControls(ctx.me);
  const mayRevise = ctx.me.roles.includes("approver");
  const revise = reviseControls(preview, tool);

  // An unchanged preview is left as it is (other events than its own reload it).
  const changed = drawnParts();
  function paint() {
    if (changed("preview", preview)) {
      replace(parts.summary, preview.summary);
      replace(parts.facts, factsView(preview, tool));
      replace(parts.impact, impactView(preview.impact));
      replace(parts.argsBody, jsonBlock(preview.arguments, "Arguments"));
    }
    decision.paint(preview);
    revise.paint(preview);
  }
  /** @param {boolean} report whether a failure shows its problem */
  async function fetchAndPaint(report) {
    const context = { action: /** @type {const} */ ("load"), preview, me: ctx.me };
    await attempt(
      report ? parts.slot : null,
      async () => {
        preview = /** @type {PreviewOut} */ (await ctx.api(path));
        paint();
      },
      context,
    );
  }
  const reload = coalesce(() => fetchAndPaint(true));

  /** @type {import("./preview-decision.js").PreviewPage} */
  const page = {
    ctx,
    path,
    slot: parts.slot,
    result: parts.result,
    current: () => preview,
    show: (fresh) => {
      preview = fresh;
      paint();
    },
    reread: () => fetchAndPaint(false),
  };
  const act = wireDecision(page, decision);
  if (mayRevise) {
    wireRevise(page, revise, act);
    decision.section.append(revise.section);
  }
  const asked = await askedView(ctx, preview);
  ctx.main.append(parts.result, asked, parts.facts, parts.impact, parts.args, decision.section);
  paint();
  ctx.every(1000, () => tickCountdowns(parts.facts));
  await timeline(ctx, ctx.main, preview.run_id, {
    onEvent: (event) => {
      if (event.type.startsWith("preview.") || event.type === "run.finished") reload();
    },
  });
}
