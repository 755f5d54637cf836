// @ts-check
// The form that makes an API key, and the panel that shows the new key once.

import { newIdempotencyKey } from "../api.js";
import { announce, h } from "../dom.js";
import { attempt, clearProblem, showMessage } from "../problems.js";
import { ROLES } from "../schema.js";

/** @typedef {import("../context.js").PageContext} PageContext */
/** @typedef {import("../schema.js").CreateKeyIn} CreateKeyIn */
/** @typedef {import("../schema.js").KeyCreatedOut} KeyCreatedOut */
/** @typedef {import("../schema.js").Role} Role */

/**
 * A group of labelled checkboxes.
 * @param {string} legend
 * @param {string} name
 * @param {readonly string[]} values
 * @param {string} [empty] shown when there is nothing to choose
 * @returns {HTMLFieldSetElement}
 */
function checkboxes(legend, name, values, empty) {
  const boxes = values.map((value) => {
    const id = `${name}-${value.replace(/[^A-Za-z0-9_-]/g, "_")}`;
    return h(
      "span",
      { class: "choice" },
      h("input", { type: "checkbox", id, name, value }),
      h("label", { for: id }, value),
    );
  });
  return h(
    "fieldset",
    { class: "choices" },
    h("legend", {}, legend),
    boxes.length ? boxes : h("p", { class: "hint" }, empty || "none"),
  );
}

/**
 * @param {HTMLFormElement} form
 * @param {string} name
 * @returns {string[]}
 */
function checked(form, name) {
  return [...form.querySelectorAll(`input[name="${name}"]:checked`)].map(
    (el) => /** @type {HTMLInputElement} */ (el).value,
  );
}

/**
 * The new key, shown once, with what to do with it.
 * @param {HTMLElement} panel
 * @param {KeyCreatedOut} made
 */
function showCreated(panel, made) {
  if (made.key === null) {
    // A replay: the first answer was lost on the way, and the key is never stored.
    showMessage(
      panel,
      `The key "${made.name}" (${made.prefix}…) was made, but its answer was lost on the way and a key is shown only once. Revoke it below and create another.`,
    );
    return;
  }
  const field = h("input", {
    id: "new-key",
    type: "text",
    readonly: true,
    value: made.key,
    spellcheck: "false",
    autocomplete: "off",
    "aria-describedby": "new-key-hint",
  });
  const copy = h("button", { type: "button", class: "secondary" }, "Copy");
  copy.addEventListener("click", async () => {
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      announce("The key is copied.");
    } catch {
      announce("Copying is not allowed here: the key is selected, press Ctrl+C (⌘C).");
    }
  });
  const done = h("button", { type: "button" }, "Done, hide the key");
  done.addEventListener("click", () => {
    panel.replaceChildren();
    announce("The key is hidden; it cannot be shown again.");
  });
  panel.replaceChildren(
    h(
      "section",
      { class: "created", "aria-labelledby": "created-title" },
      h("h2", { id: "created-title", tabindex: "-1" }, `Key "${made.name}" made`),
      h("div", { class: "field" }, h("label", { for: "new-key" }, "The new API key"), field),
      h(
        "p",
        { id: "new-key-hint", class: "hint" },
        "Copy it now and keep it somewhere safe: it is shown only this once and cannot be shown again. If it is lost, revoke it and create another.",
      ),
      h("p", { class: "actions" }, copy, " ", done),
    ),
  );
  /** @type {HTMLElement} */ (panel.querySelector("h2")).focus();
}

/**
 * The create form. `scopes`: what the signed-in key may give; `created` is called with
 * each new key.
 * @param {PageContext} ctx
 * @param {readonly string[]} scopes
 * @param {() => void} created
 * @returns {HTMLElement}
 */
export function keyForm(ctx, scopes, created) {
  const slot = h("div", { class: "alerts" });
  const panel = h("div", { class: "created-slot" });
  const name = h("input", { id: "key-name", type: "text", maxlength: "100", required: true });
  const subject = h("input", {
    id: "key-subject",
    type: "text",
    maxlength: "200",
    "aria-describedby": "key-subject-hint",
  });
  const button = h("button", { type: "submit" }, "Create key");
  const form = h(
    "form",
    { class: "key-form", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "key-name" }, "Name"), name),
    h("div", { class: "field" }, h("label", { for: "key-subject" }, "Subject (optional)"), subject),
    h(
      "p",
      { id: "key-subject-hint", class: "hint" },
      "Whom the key stands for in runs and approvals; by default its name.",
    ),
    checkboxes("Roles", "role", ROLES),
    checkboxes("Scopes", "scope", scopes, "No tool declares a scope your key holds."),
    button,
  );
  // One Idempotency-Key per request as filled in: pressing Create again after a lost
  // answer sends the same one (the service then names the key it made, without it).
  /** @type {string | null} */
  let idempotencyKey = null;
  form.addEventListener("input", () => {
    idempotencyKey = null;
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearProblem(slot);
    const roles = /** @type {Role[]} */ (checked(form, "role"));
    if (!name.value.trim() || !roles.length) {
      showMessage(slot, "Give the key a name and at least one role.");
      const first = name.value.trim() ? form.querySelector("input[name=role]") : name;
      if (first instanceof HTMLElement) first.focus();
      return;
    }
    /** @type {CreateKeyIn} */
    const body = { name: name.value, roles, scopes: checked(form, "scope") };
    if (subject.value.trim()) body.subject = subject.value;
    idempotencyKey = idempotencyKey || newIdempotencyKey();
    button.disabled = true;
    const result = await attempt(
      slot,
      async () =>
        /** @type {KeyCreatedOut} */ (
          await ctx.api("/v1/keys", {
            method: "POST",
            body,
            headers: { "Idempotency-Key": idempotencyKey || "" },
          })
        ),
      { action: "create-key", me: ctx.me },
      { onSignIn: ctx.signOut },
    );
    button.disabled = false;
    if (!result.ok) return;
    idempotencyKey = null;
    form.reset();
    showCreated(panel, result.value);
    created();
  });
  return h(
    "section",
    { "aria-labelledby": "create-title" },
    h("h2", { id: "create-title" }, "Create a key"),
    slot,
    form,
    panel,
  );
}
