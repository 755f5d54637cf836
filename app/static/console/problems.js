// A problem answer in words, with the next thing to do, shown in a role="alert" element.

import { consolePath, h, link } from "./dom.js";

/**
 * What a problem means here and what to do about it. `context`: {action, preview, me}
 * (action: "approve" | "reject" | "commit" | "sign-in" | "load" | "switch").
 * Returns {what, next, links: [[path, text]]}.
 */
export function explain(problem, context = {}) {
  const { action, preview, me } = context;
  const detail = problem.detail ? ` (${problem.detail})` : "";
  const newPreview = problem.body?.new_preview_id;
  switch (problem.slug) {
    case "network":
      return {
        what: "The service did not answer.",
        next:
          action === "commit"
            ? "Check your connection and press Commit again: the retry sends the same Idempotency-Key, so the change is made at most once."
            : "Check your connection and try again.",
      };
    case "unauthenticated":
      return {
        what:
          action === "sign-in"
            ? "This API key was not accepted."
            : "Your API key is no longer accepted.",
        next:
          action === "sign-in"
            ? "Check that you pasted the whole key (it starts with tg_) and that it is not revoked."
            : "Sign in again with a valid key.",
        signIn: action !== "sign-in",
      };
    case "forbidden":
      if (
        action === "approve" &&
        ((preview && me && preview.requested_by === me.subject) || /creator/.test(problem.detail))
      ) {
        return {
          what: "You created this run, so you may not approve its calls.",
          next: "You created this run; another approver must approve it.",
        };
      }
      return {
        what: `Your key may not do this${detail}.`,
        next: "Use a key with the needed role, or ask an operator to grant it.",
      };
    case "not-found":
      return {
        what: `Nothing here in your tenant${detail}.`,
        next: "Check the address; items of other tenants are never visible.",
      };
    case "preview-mismatch":
      return {
        what: "The preview you approved is not the one stored: it changed after you loaded it.",
        next: "Reload this page and review the preview again before approving.",
        reload: true,
      };
    case "preview-expired":
      return {
        what: "This preview expired before your decision.",
        next: "Nothing to do: the run will be told that the approval expired and goes on without this call.",
      };
    case "preview-not-approved":
      return {
        what: "Only an approved preview can be committed.",
        next: "Approve the preview first (or reload to see its status).",
      };
    case "version-conflict":
      return newPreview
        ? {
            what: "The resource changed since this preview was made, so nothing was changed. A new preview was made from its current state.",
            next: "Review the new preview and decide on it.",
            links: [[consolePath("previews", newPreview), "Review the new preview"]],
          }
        : {
            what: "The resource changed since this preview was made, so nothing was changed, and no new preview could be made.",
            next: "The call failed with the tool's reason; see the run.",
            links: preview ? [[consolePath("runs", preview.run_id), "Open the run"]] : [],
          };
    case "invalid-state":
      return {
        what: `This cannot be done in the current state${detail}.`,
        next: newPreview
          ? "It was superseded by a new preview: review that one."
          : "Reload to see the current state; someone may have decided already.",
        links: newPreview ? [[consolePath("previews", newPreview), "Review the new preview"]] : [],
        reload: !newPreview,
      };
    case "idempotency-key-in-flight":
      return {
        what: "The same commit is still being processed.",
        next: "Wait a moment and press Commit again: it reuses the same key.",
      };
    case "validation-error": {
      const fields = Array.isArray(problem.body?.errors)
        ? problem.body.errors.map((e) => `${e.path}: ${e.message}`).join("; ")
        : problem.detail;
      return { what: `Some fields are invalid: ${fields}.`, next: "Correct them and try again." };
    }
    case "rate-limited":
    case "quota-exceeded":
      return {
        what: `Too many requests${detail}.`,
        next: `Try again${problem.retryAfter ? ` in ${problem.retryAfter} s` : " shortly"}.`,
      };
    case "unavailable":
    case "internal":
      return {
        what: `The service failed to answer${detail}.`,
        next: `Try again later${problem.traceId ? `; if it persists, report trace ${problem.traceId}` : ""}.`,
      };
    default:
      return {
        what: `${problem.title}${detail}.`,
        next: "Reload the page and try again.",
      };
  }
}

/**
 * Shows `problem` in the alert slot `slot` (an element that holds at most one alert).
 * `onSignIn`: what the "Sign in again" button does.
 */
export function showProblem(slot, problem, context = {}, { onSignIn } = {}) {
  const words = explain(problem, context);
  const status = problem.status ? `${problem.status} ${problem.slug}` : problem.slug;
  const alert = h(
    "div",
    { role: "alert", class: "problem" },
    h("p", { class: "problem-what" }, h("strong", {}, problem.title), ` [${status}] `, words.what),
    h("p", { class: "problem-next" }, "What to do: ", words.next),
  );
  const actions = h("p", { class: "problem-actions" });
  for (const [path, text] of words.links || []) actions.append(link(path, text), " ");
  if (words.reload) {
    actions.append(
      h("button", { type: "button", on: { click: () => location.reload() } }, "Reload"),
      " ",
    );
  }
  if (words.signIn && onSignIn) {
    actions.append(h("button", { type: "button", on: { click: onSignIn } }, "Sign in again"));
  }
  if (actions.childNodes.length) alert.append(actions);
  slot.replaceChildren(alert);
  return alert;
}

export function clearProblem(slot) {
  slot.replaceChildren();
}

/** A message (not a problem) in the alert slot: e.g. a client-side refusal. */
export function showMessage(slot, text) {
  slot.replaceChildren(h("div", { role: "alert", class: "problem" }, h("p", {}, text)));
}
