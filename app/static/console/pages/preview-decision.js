// @ts-check
// The decision on a preview: Approve (sends back the content hash shown), Reject (with a
// reason, refused here without one) and Commit (with an Idempotency-Key kept while the
// outcome is unknown). Each action says what happened in a polite live region; a refusal
// shows the problem, then the preview as it is now.

import { newIdempotencyKey, Problem } from "../api.js";
import { h } from "../dom.js";
import { attempt, clearProblem, showMessage } from "../problems.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../explain.js").Action} Action */
/** @typedef {import("../schema.js").CommitOut} CommitOut */
/** @typedef {import("../schema.js").MeOut} MeOut */
/** @typedef {import("../schema.js").PreviewOut} PreviewOut */
/**
 * What the decision needs of the preview page.
 * @typedef {object} PreviewPage
 * @property {PageContext} ctx
 * @property {string} path the preview's API address
 * @property {HTMLElement} slot where problems are shown
 * @property {HTMLElement} result the polite live region that says what an action did
 * @property {() => PreviewOut} current the preview as last read
 * @property {(preview: PreviewOut) => void} show takes and shows a new state of it
 * @property {() => Promise<void>} reread reads it again, quietly
 */
/** @typedef {ReturnType<typeof decisionControls>} Decision */
/** @typedef {ReturnType<typeof actions>} Act */

const REASON_MAX = 500;

/** The reject form: a labelled reason (1–500 characters) and its button. */
function rejectControls() {
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
  return { reason, reject, rejectForm };
}

/**
 * The decision's controls, as the key's roles allow: real buttons and a labelled reason.
 * `paint(preview)` enables what the preview's status allows.
 * @param {MeOut} me
 */
export function decisionControls(me) {
  const isApprover = me.roles.includes("approver");
  const mayCommit = isApprover || me.roles.includes("caller");
  const approve = h("button", { type: "button", id: "approve" }, "Approve");
  const { reason, reject, rejectForm } = rejectControls();
  const commit = h("button", { type: "button", id: "commit" }, "Commit");
  const section = h("section", { class: "decision" }, h("h2", {}, "Decision"));
  const note = h("p", { class: "hint" });
  /**
   * @param {HTMLButtonElement} button
   * @param {string} hint
   */
  const action = (button, hint) =>
    h("div", { class: "actions" }, button, h("span", { class: "hint" }, hint));
  if (isApprover) {
    section.append(action(approve, " Approves the content hash shown above; nothing runs yet."));
  }
  if (mayCommit) section.append(action(commit, " Runs exactly the approved call, once."));
  if (isApprover) section.append(h("h3", {}, "Or reject it"), rejectForm);
  section.append(note);
  if (!isApprover) {
    note.textContent = "Your key does not have the approver role: it cannot approve or reject.";
  }
  return {
    section,
    approve,
    reason,
    rejectForm,
    commit,
    /** @param {PreviewOut} preview */
    paint(preview) {
      const pending = preview.status === "pending";
      const approvedByMe = preview.approvals.some((a) => a.by === me.subject);
      approve.disabled = !pending || approvedByMe;
      reject.disabled = !pending;
      reason.disabled = !pending;
      commit.disabled = preview.status !== "approved";
      if (isApprover) {
        note.textContent =
          pending || preview.status === "approved"
            ? ""
            : `This preview is ${preview.status}: nothing left to decide.`;
        if (pending && approvedByMe) note.textContent = awaiting(preview, "You approved it");
      }
    },
  };
}

/**
 * The one way an action runs: one at a time; its problem shown in the page's slot, after
 * which (unless no answer came at all: the alert says to press the button again) the
 * preview is read again, since a refusal may mean it moved on.
 * @param {PreviewPage} page
 * @returns {<T>(action: Action, request: () => Promise<T>, done: (answer: T) => void) => Promise<void>}
 */
function actions(page) {
  let busy = false;
  return async (action, request, done) => {
    if (busy) return;
    busy = true;
    clearProblem(page.slot);
    page.result.textContent = "";
    const context = { action, preview: page.current(), me: page.ctx.me };
    const outcome = await attempt(page.slot, async () => done(await request()), context, {
      onSignIn: page.ctx.signOut,
    });
    if (!outcome.ok && outcome.problem?.status) await page.reread();
    busy = false;
  };
}

/**
 * Wires the decision's controls to the API; answers the page's one way to run an action.
 * @param {PreviewPage} page
 * @param {Decision} decision
 * @returns {Act}
 */
export function wireDecision(page, decision) {
  const act = actions(page);
  decision.approve.addEventListener("click", () => approve(page, act, decision));
  decision.rejectForm.addEventListener("submit", (event) => {
    event.preventDefault();
    reject(page, act, decision.reason);
  });
  // One Idempotency-Key per click; kept only while the outcome is unknown (no answer,
  // a 5xx, or the same commit still in flight), so pressing Commit again retries the
  // same commit rather than making a new one.
  /** @type {string | null} */
  let commitKey = null;
  decision.commit.addEventListener("click", () => {
    if (!commitKey) commitKey = newIdempotencyKey();
    const key = commitKey;
    const request = async () => {
      try {
        const answer = await page.ctx.api(`${page.path}/commit`, {
          method: "POST",
          headers: { "Idempotency-Key": key },
          body: { wait_s: 10 },
        });
        commitKey = null;
        return /** @type {CommitOut} */ (answer);
      } catch (error) {
        if (!outcomeUnknown(error)) commitKey = null;
        throw error;
      }
    };
    act("commit", request, (answer) => committed(page, answer));
  });
  return act;
}

/**
 * Whether a failed commit may have been made after all: no answer, a 5xx, or the same
 * commit still in flight. Then the next press sends the same Idempotency-Key.
 * @param {unknown} error
 * @returns {boolean}
 */
function outcomeUnknown(error) {
  if (!(error instanceof Problem)) return false;
  return error.status === 0 || error.status >= 500 || error.code === "idempotency-key-in-flight";
}

/**
 * What a quorum still needs, after `said` ("You approved it: 1 of 2 approvals; …").
 * @param {PreviewOut} preview
 * @param {string} said
 * @returns {string}
 */
function awaiting(preview, said) {
  const left = preview.approvals_required - preview.approvals.length;
  const more = left === 1 ? "one more approver" : `${left} more approvers`;
  return `${said}: ${preview.approvals.length} of ${preview.approvals_required} approvals; it needs ${more} before it can be committed.`;
}

/**
 * @param {PreviewPage} page
 * @param {ReturnType<typeof actions>} act
 * @param {Decision} decision
 */
function approve(page, act, decision) {
  const request = () =>
    page.ctx.api(`${page.path}/approve`, {
      method: "POST",
      body: { content_hash: page.current().content_hash },
    });
  act("approve", request, (answer) => {
    const preview = /** @type {PreviewOut} */ (answer);
    page.show(preview);
    const last = preview.approvals[preview.approvals.length - 1];
    page.result.textContent =
      preview.status === "pending"
        ? awaiting(preview, `Approved by ${last?.by}`)
        : `Approved by ${preview.decided_by}. Commit it to run the call.`;
    if (!decision.commit.disabled) decision.commit.focus();
  });
}

/**
 * @param {PreviewPage} page
 * @param {ReturnType<typeof actions>} act
 * @param {HTMLTextAreaElement} reason
 */
function reject(page, act, reason) {
  const text = reason.value.trim();
  if (!text || text.length > REASON_MAX) {
    // Refused here: no request without a reason.
    showMessage(page.slot, `A reason is required to reject (1–${REASON_MAX} characters).`);
    reason.setAttribute("aria-invalid", "true");
    reason.focus();
    return;
  }
  reason.removeAttribute("aria-invalid");
  const request = () =>
    page.ctx.api(`${page.path}/reject`, { method: "POST", body: { reason: text } });
  act("reject", request, (answer) => {
    const preview = /** @type {PreviewOut} */ (answer);
    page.show(preview);
    page.result.textContent = `Rejected by ${preview.decided_by}. The model is told the reason and the run goes on.`;
  });
}

/**
 * Shows what a commit did: the preview, the call's outcome and the run's.
 * @param {PreviewPage} page
 * @param {CommitOut} answer
 */
function committed(page, answer) {
  page.show(answer.preview);
  const { call, run } = answer;
  const callText = call.error
    ? `the call ${call.status} (${call.error.code})`
    : `the call ${call.status}`;
  const runText =
    run.status === "finished"
      ? `the run finished (${run.termination_reason})`
      : `the run is ${run.status}`;
  page.result.textContent = `Committed by ${answer.preview.committed_by}: ${callText}; ${runText}.`;
}
