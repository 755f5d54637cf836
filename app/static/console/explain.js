// @ts-check
// What a problem means in the console and the next thing to do, by the problem's `code`
// (and members such as `new_preview_id`), never by its `detail` text, which is only shown.

import { consolePath } from "./dom.js";

/** @typedef {import("./api.js").Problem} Problem */
/** @typedef {import("./schema.js").PreviewOut} PreviewOut */
/** @typedef {import("./schema.js").MeOut} MeOut */
/** @typedef {"approve" | "reject" | "revise" | "commit" | "sign-in" | "sign-in-again" | "load" | "switch" | "create-key" | "revoke-key"} Action */
/**
 * What the user was doing when the problem came.
 * @typedef {object} ProblemContext
 * @property {Action} [action]
 * @property {PreviewOut | null} [preview]
 * @property {MeOut | null} [me]
 */
/**
 * A problem in words: what happened, what to do next, and the ways on.
 * @typedef {object} Explanation
 * @property {string} what
 * @property {string} next
 * @property {Array<[string, string]>} [links] [console path, link text] pairs
 * @property {boolean} [reload] offer a Reload button
 * @property {boolean} [signIn] offer a Sign in again button
 */
/** @typedef {(problem: Problem, context: ProblemContext) => Explanation} Explainer */

/** @param {Problem} problem */
const detailOf = (problem) => (problem.detail ? ` (${problem.detail})` : "");

/** @type {Explainer} */
function network(_problem, { action }) {
  return {
    what: "The service did not answer.",
    next:
      action === "commit"
        ? "Check your connection and press Commit again: the retry sends the same Idempotency-Key, so the change is made at most once."
        : "Check your connection and try again.",
  };
}

/** @type {Explainer} */
function unauthenticated(_problem, { action }) {
  const signingIn = action === "sign-in";
  return {
    what: signingIn ? "This API key was not accepted." : "Your API key is no longer accepted.",
    next: signingIn
      ? "Check that you pasted the whole key (it starts with tg_) and that it is not revoked."
      : "Sign in again with a valid key.",
    signIn: !signingIn,
  };
}

/** @type {Explainer} */
function forbidden(problem, { action, preview, me }) {
  // The service refuses an approval by the run's creator (the preview's requested_by).
  if (action === "approve" && preview && me && preview.requested_by === me.subject) {
    return {
      what: "You created this run, so you may not approve its calls.",
      next: "You created this run; another approver must approve it.",
    };
  }
  if (action === "revise" && preview && me && preview.requested_by === me.subject) {
    return {
      what: "You created this run, so you may not revise its calls.",
      next: "Another approver may revise it, or reject it with your reason.",
    };
  }
  return {
    what: `Your key may not do this${detailOf(problem)}.`,
    next: "Use a key with the needed role, or ask an operator to grant it.",
  };
}

/** @type {Explainer} */
function versionConflict(problem, { preview }) {
  const newPreview = problem.newPreviewId;
  if (newPreview) {
    return {
      what: "The resource changed since this preview was made, so nothing was changed. A new preview was made from its current state.",
      next: "Review the new preview and decide on it.",
      links: [[consolePath("previews", newPreview), "Review the new preview"]],
    };
  }
  return {
    what: "The resource changed since this preview was made, so nothing was changed, and no new preview could be made.",
    next: "The call failed with the tool's reason; see the run.",
    links: preview ? [[consolePath("runs", preview.run_id), "Open the run"]] : [],
  };
}

/** @type {Explainer} */
function invalidState(problem) {
  const newPreview = problem.newPreviewId;
  return {
    what: `This cannot be done in the current state${detailOf(problem)}.`,
    next: newPreview
      ? "It was superseded by a new preview: review that one."
      : "Reload to see the current state; someone may have decided already.",
    links: newPreview ? [[consolePath("previews", newPreview), "Review the new preview"]] : [],
    reload: !newPreview,
  };
}

/** @type {Explainer} */
function validationError(problem) {
  const errors = problem.body.errors;
  const fields = Array.isArray(errors)
    ? errors.map((e) => `${e.path}: ${e.message}`).join("; ")
    : problem.detail;
  return { what: `Some fields are invalid: ${fields}.`, next: "Correct them and try again." };
}

/** @type {Explainer} */
function tooMany(problem) {
  return {
    what: `Too many requests${detailOf(problem)}.`,
    next: `Try again${problem.retryAfter ? ` in ${problem.retryAfter} s` : " shortly"}.`,
  };
}

/** @type {Explainer} */
function failed(problem) {
  const trace = problem.traceId ? `; if it persists, report trace ${problem.traceId}` : "";
  return {
    what: `The service failed to answer${detailOf(problem)}.`,
    next: `Try again later${trace}.`,
  };
}

/** @type {Record<string, Explainer>} */
const BY_CODE = {
  network,
  unauthenticated,
  forbidden,
  "not-found": (problem) => ({
    what: `Nothing here in your tenant${detailOf(problem)}.`,
    next: "Check the address; items of other tenants are never visible.",
  }),
  "preview-mismatch": () => ({
    what: "The preview you approved is not the one stored: it changed after you loaded it.",
    next: "Reload this page and review the preview again before approving.",
    reload: true,
  }),
  "preview-expired": () => ({
    what: "This preview expired before your decision.",
    next: "Nothing to do: the run will be told that the approval expired and goes on without this call.",
  }),
  "preview-not-approved": () => ({
    what: "Only an approved preview can be committed.",
    next: "Approve the preview first (or reload to see its status).",
  }),
  "version-conflict": versionConflict,
  "invalid-state": invalidState,
  "idempotency-key-in-flight": (_problem, { action }) => {
    const verb = action === "create-key" ? "Create key" : "Commit";
    return {
      what: `The same ${action === "create-key" ? "key request" : "commit"} is still being processed.`,
      next: `Wait a moment and press ${verb} again: it reuses the same Idempotency-Key.`,
    };
  },
  "validation-error": validationError,
  "rate-limited": tooMany,
  "quota-exceeded": tooMany,
  unavailable: failed,
  internal: failed,
};

/**
 * What a problem means here and what to do about it.
 * @param {Problem} problem
 * @param {ProblemContext} [context]
 * @returns {Explanation}
 */
export function explain(problem, context = {}) {
  const explainer = Object.hasOwn(BY_CODE, problem.code) ? BY_CODE[problem.code] : null;
  if (explainer) return explainer(problem, context);
  return {
    what: `${problem.title}${detailOf(problem)}.`,
    next: "Reload the page and try again.",
  };
}
