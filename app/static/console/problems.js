// @ts-check
// A problem answer in words (explain.js), with the next thing to do, shown in a
// role="alert" element; and `attempt`, the one way a page runs a request whose failure it
// shows.

import { Problem } from "./api.js";
import { h, link } from "./dom.js";
import { explain } from "./explain.js";
import { isAbort } from "./util.js";

/** @typedef {import("./explain.js").ProblemContext} ProblemContext */
/** @typedef {{onSignIn?: () => void}} ProblemOptions */

/**
 * `error` as a `Problem`: what the API client rejects with, or (a fault of the console
 * itself) a problem that names the error.
 * @param {unknown} error
 * @returns {Problem}
 */
export function asProblem(error) {
  if (error instanceof Problem) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new Problem({ title: "Console error", detail: message }, 0);
}

/**
 * Shows `problem` in the alert slot `slot` (an element that holds at most one alert).
 * `onSignIn`: what the "Sign in again" button does.
 * @param {HTMLElement} slot
 * @param {unknown} error what a request rejected with (a `Problem`, as a rule)
 * @param {ProblemContext} [context]
 * @param {ProblemOptions} [options]
 * @returns {HTMLElement}
 */
export function showProblem(slot, error, context = {}, { onSignIn } = {}) {
  const problem = asProblem(error);
  const words = explain(problem, context);
  const status = problem.status ? `${problem.status} ${problem.code}` : problem.code;
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

/** @param {HTMLElement} slot */
export function clearProblem(slot) {
  slot.replaceChildren();
}

/**
 * A message (not a problem) in the alert slot: e.g. a client-side refusal.
 * @param {HTMLElement} slot
 * @param {string} text
 */
export function showMessage(slot, text) {
  slot.replaceChildren(h("div", { role: "alert", class: "problem" }, h("p", {}, text)));
}

/**
 * How `attempt` went: the value, or the problem (null when the request was aborted
 * because the user left the page).
 * @template T
 * @typedef {{ok: true, value: T} | {ok: false, problem: Problem | null}} Attempt
 */

/**
 * Runs `request`; when it fails, shows the problem in `slot` (unless `slot` is null, or
 * the request was aborted because the user left the page). Never rejects.
 * @template T
 * @param {HTMLElement | null} slot
 * @param {() => Promise<T>} request
 * @param {ProblemContext} context
 * @param {ProblemOptions} [options]
 * @returns {Promise<Attempt<T>>}
 */
export async function attempt(slot, request, context, options = {}) {
  try {
    return { ok: true, value: await request() };
  } catch (error) {
    if (isAbort(error)) return { ok: false, problem: null };
    if (slot) showProblem(slot, error, context, options);
    return { ok: false, problem: asProblem(error) };
  }
}
