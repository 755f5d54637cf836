// One preview: what the call would change, and the decision on it (Approve with the
// content hash shown, Reject with a reason, Commit with an Idempotency-Key), with the
// run's timeline so far.

import { newIdempotencyKey } from "../api.js";
import {
  consolePath,
  countdown,
  details,
  h,
  jsonBlock,
  link,
  replace,
  usd,
  when,
} from "../dom.js";
import { clearProblem, showMessage, showProblem } from "../problems.js";
import { timeline } from "../timeline.js";
import { coalesce, isAbort } from "../util.js";
import { tickCountdowns } from "./queue.js";

const REASON_MAX = 500;

function isChange(value) {
  return value !== null && typeof value === "object" && "before" in value && "after" in value;
}

function show(value) {
  if (value === null || value === undefined) return "—";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** The impact: a "What changes" table of before → after, and the rest as facts. */
function impactView(impact) {
  const entries = Object.entries(impact || {});
  const changes = entries.filter(([, v]) => isChange(v));
  const rest = entries.filter(([, v]) => !isChange(v));
  const section = h("section", {}, h("h2", { id: "impact-title" }, "What changes"));
  if (changes.length) {
    section.append(
      h(
        "table",
        { class: "grid changes", "aria-labelledby": "impact-title" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Field"),
            h("th", { scope: "col" }, "Before"),
            h("th", { scope: "col" }, "After"),
          ),
        ),
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

function factsView(preview, tool) {
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
    ["Tool", tool ? `${preview.tool} (risk ${tool.risk}${tool.requires_approval ? ", approval required" : ""})` : preview.tool],
    ["Who asked", preview.requested_by],
    ["Run", link(consolePath("runs", preview.run_id), h("code", {}, preview.run_id))],
    ["Call", `${preview.call_id} (step ${preview.step})`],
    ["Cost", usd(preview.cost_usd)],
    ["Resource version", preview.resource_version],
    ["Expires", expiry],
    ["Created", when(preview.created_at)],
    ["Content hash", h("code", { class: "hash", id: "content-hash" }, preview.content_hash)],
    ["Arguments hash", h("code", { class: "hash" }, preview.args_hash)],
    ["Decided by", preview.decided_by ? `${preview.decided_by} at ${when(preview.decided_at)}` : null],
    ["Reason", preview.reason === null ? undefined : h("span", { id: "preview-reason" }, preview.reason)],
    [
      "Committed by",
      preview.committed_by ? `${preview.committed_by} at ${when(preview.committed_at)}` : undefined,
    ],
    ["Supersedes", preview.supersedes ? link(consolePath("previews", preview.supersedes), preview.supersedes) : undefined],
    [
      "Superseded by",
      preview.superseded_by ? link(consolePath("previews", preview.superseded_by), preview.superseded_by) : undefined,
    ],
  ]);
}

export async function previewPage(ctx, id) {
  const me = ctx.me;
  const isApprover = me.roles.includes("approver");
  const mayCommit = isApprover || me.roles.includes("caller");
  const path = `/v1/previews/${encodeURIComponent(id)}`;
  const slot = h("div", { class: "alerts" });
  const result = h("p", { class: "result", role: "status", "aria-live": "polite" });
  const summary = h("p", { class: "summary" });
  const facts = h("div", {});
  const impact = h("div", {});
  const args = h("section", {}, h("h2", {}, "Arguments"));
  const argsBody = h("div", {});
  args.append(argsBody);
  ctx.main.append(h("h1", { tabindex: "-1" }, "Preview"), summary, slot);

  let preview = await ctx.api(path);
  let tool = null;
  try {
    const tools = await ctx.api("/v1/tools?limit=200");
    tool = tools.items.find((t) => t.name === preview.tool) || null;
  } catch (error) {
    if (isAbort(error)) return;
  }

  // The decision: real buttons, a labelled reason; each action says what happened in
  // `result`, a polite live region.
  const approve = h("button", { type: "button", id: "approve" }, "Approve");
  const reason = h("textarea", {
    id: "reason",
    rows: "3",
    maxlength: String(REASON_MAX),
    required: true,
    "aria-describedby": "reason-hint",
  });
  const reject = h("button", { type: "submit", id: "reject", class: "danger" }, "Reject");
  const rejectForm = h(
    "form",
    { class: "reject", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "reason" }, "Reason"), reason),
    h(
      "p",
      { id: "reason-hint", class: "hint" },
      `Required to reject (1–${REASON_MAX} characters). The model sees it.`,
    ),
    reject,
  );
  const commit = h("button", { type: "button", id: "commit" }, "Commit");
  const decision = h("section", { class: "decision" }, h("h2", {}, "Decision"));
  const decisionNote = h("p", { class: "hint" });
  if (isApprover) {
    decision.append(
      h(
        "div",
        { class: "actions" },
        approve,
        h("span", { class: "hint" }, " Approves the content hash shown above; nothing runs yet."),
      ),
    );
  }
  if (mayCommit) {
    decision.append(
      h(
        "div",
        { class: "actions" },
        commit,
        h("span", { class: "hint" }, " Runs exactly the approved call, once."),
      ),
    );
  }
  if (isApprover) decision.append(h("h3", {}, "Or reject it"), rejectForm);
  decision.append(decisionNote);
  if (!isApprover) {
    decisionNote.textContent =
      "Your key does not have the approver role: it cannot approve or reject.";
  }

  function paint() {
    replace(summary, preview.summary);
    replace(facts, factsView(preview, tool));
    replace(impact, impactView(preview.impact));
    replace(argsBody, jsonBlock(preview.arguments, "Arguments"));
    const pending = preview.status === "pending";
    approve.disabled = !pending;
    reject.disabled = !pending;
    reason.disabled = !pending;
    commit.disabled = preview.status !== "approved";
    if (isApprover) {
      decisionNote.textContent =
        pending || preview.status === "approved" ? "" : `This preview is ${preview.status}: nothing left to decide.`;
    }
  }

  async function fetchAndPaint(report = true) {
    try {
      preview = await ctx.api(path);
      paint();
    } catch (error) {
      if (report && !isAbort(error)) showProblem(slot, error, { action: "load", preview, me });
    }
  }
  const reload = coalesce(fetchAndPaint);

  let busy = false;
  async function act(action, request, done) {
    if (busy) return;
    busy = true;
    clearProblem(slot);
    result.textContent = "";
    try {
      const answer = await request();
      done(answer);
    } catch (error) {
      if (isAbort(error)) return;
      showProblem(slot, error, { action, preview, me }, { onSignIn: ctx.signOut });
      // A refusal may mean the preview moved on: show it as it is now. (Not after no
      // answer at all: the alert says to press the button again.)
      if (error.status) await fetchAndPaint(false);
    } finally {
      busy = false;
    }
  }

  approve.addEventListener("click", () =>
    act(
      "approve",
      () =>
        ctx.api(`${path}/approve`, {
          method: "POST",
          body: { content_hash: preview.content_hash },
        }),
      (answer) => {
        preview = answer;
        paint();
        result.textContent = `Approved by ${answer.decided_by}. Commit it to run the call.`;
        if (!commit.disabled) commit.focus();
      },
    ),
  );

  rejectForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = reason.value.trim();
    if (!text || text.length > REASON_MAX) {
      // Refused here: no request without a reason.
      showMessage(slot, `A reason is required to reject (1–${REASON_MAX} characters).`);
      reason.setAttribute("aria-invalid", "true");
      reason.focus();
      return;
    }
    reason.removeAttribute("aria-invalid");
    act(
      "reject",
      () => ctx.api(`${path}/reject`, { method: "POST", body: { reason: text } }),
      (answer) => {
        preview = answer;
        paint();
        result.textContent = `Rejected by ${answer.decided_by}. The model is told the reason and the run goes on.`;
      },
    );
  });

  // One Idempotency-Key per click; kept only while the outcome is unknown (no answer,
  // a 5xx, or the same commit still in flight), so pressing Commit again retries the
  // same commit rather than making a new one.
  let commitKey = null;
  commit.addEventListener("click", () => {
    if (!commitKey) commitKey = newIdempotencyKey();
    const key = commitKey;
    act(
      "commit",
      async () => {
        try {
          const answer = await ctx.api(`${path}/commit`, {
            method: "POST",
            headers: { "Idempotency-Key": key },
            body: { wait_s: 10 },
          });
          commitKey = null;
          return answer;
        } catch (error) {
          const unknown =
            error.status === 0 ||
            error.status >= 500 ||
            error.slug === "idempotency-key-in-flight";
          if (!unknown) commitKey = null;
          throw error;
        }
      },
      (answer) => {
        preview = answer.preview;
        paint();
        const call = answer.call;
        const run = answer.run;
        const callText = call.error
          ? `the call ${call.status} (${call.error.code})`
          : `the call ${call.status}`;
        const runText =
          run.status === "finished"
            ? `the run finished (${run.termination_reason})`
            : `the run is ${run.status}`;
        result.textContent = `Committed by ${answer.preview.committed_by}: ${callText}; ${runText}.`;
      },
    );
  });

  ctx.main.append(result, facts, impact, args, decision);
  paint();
  ctx.every(1000, () => tickCountdowns(facts));
  await timeline(ctx, ctx.main, preview.run_id, {
    onEvent: (event) => {
      if (event.type.startsWith("preview.") || event.type === "run.finished") reload();
    },
  });
}
