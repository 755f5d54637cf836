// @ts-check
// Revise a pending preview's call: its arguments in a form made from the tool's input
// schema (a choice for an enum, a number, a check box, a line of text) or, for a schema
// no such form can show (nested objects, arrays), as JSON checked as you type; a reason,
// which the model is told; then the new preview, which needs its own approval. The
// service checks the arguments again: what it refuses is shown, and nothing changes.

import { consolePath, h } from "../dom.js";
import { showMessage } from "../problems.js";

/** @typedef {import("../schema.js").PreviewOut} PreviewOut */
/** @typedef {import("../schema.js").ReviseOut} ReviseOut */
/** @typedef {import("../schema.js").ToolOut} ToolOut */
/** @typedef {{type?: string | string[], enum?: unknown[], description?: string}} Property */
/** @typedef {{read: () => unknown, field: HTMLElement}} Input */

const REASON_MAX = 500;
const SIMPLE = new Set(["string", "integer", "number", "boolean"]);

/**
 * The schema's properties when every one is a flat value a form can show, else null.
 * @param {Record<string, unknown> | undefined} schema
 * @returns {Record<string, Property> | null}
 */
function flatProperties(schema) {
  const properties = /** @type {Record<string, Property> | undefined} */ (schema?.properties);
  if (!schema || schema.type !== "object" || !properties) return null;
  for (const property of Object.values(properties)) {
    if (!property || typeof property !== "object") return null;
    if (!property.enum && !(typeof property.type === "string" && SIMPLE.has(property.type))) {
      return null;
    }
  }
  return properties;
}

/**
 * One labelled input for a property, set to its current value.
 * @param {string} name
 * @param {Property} property
 * @param {unknown} value
 * @param {boolean} required
 * @returns {Input}
 */
function input(name, property, value, required) {
  const id = `revise-${name}`;
  /** @type {HTMLInputElement | HTMLSelectElement} */
  let control;
  /** @type {() => unknown} */
  let read;
  if (property.enum) {
    const values = property.enum;
    control = h(
      "select",
      { id },
      ...values.map((v, i) => h("option", { value: String(i) }, String(v))),
    );
    control.value = String(Math.max(0, values.findIndex((v) => v === value)));
    read = () => values[Number(control.value)];
  } else if (property.type === "boolean") {
    const box = h("input", { id, type: "checkbox" });
    box.checked = value === true;
    control = box;
    read = () => box.checked;
  } else if (property.type === "integer" || property.type === "number") {
    const box = h("input", { id, type: "number", step: property.type === "integer" ? "1" : "any" });
    box.value = value === undefined || value === null ? "" : String(value);
    box.required = required;
    control = box;
    read = () => (box.value === "" ? undefined : Number(box.value));
  } else {
    const box = h("input", { id, type: "text" });
    box.value = value === undefined || value === null ? "" : String(value);
    box.required = required;
    control = box;
    read = () => (box.value === "" && !required ? undefined : box.value);
  }
  const field = h("div", { class: "field" }, h("label", { for: id }, name), control);
  if (property.description) field.append(h("span", { class: "hint" }, ` ${property.description}`));
  return { read, field };
}

/**
 * The arguments as a form of the schema's properties (undefined values left out).
 * @param {Record<string, Property>} properties
 * @param {Record<string, unknown>} current
 * @param {string[]} required
 */
function formEditor(properties, current, required) {
  const inputs = Object.entries(properties).map(([name, property]) => ({
    name,
    ...input(name, property, current[name], required.includes(name)),
  }));
  return {
    fields: inputs.map((i) => i.field),
    /** @returns {{value?: Record<string, unknown>, problem?: string}} */
    read() {
      /** @type {Record<string, unknown>} */
      const value = {};
      for (const i of inputs) {
        const v = i.read();
        if (v !== undefined) value[i.name] = v;
      }
      const missing = required.filter((name) => value[name] === undefined || value[name] === "");
      return missing.length ? { problem: `Required: ${missing.join(", ")}.` } : { value };
    },
  };
}

/**
 * The arguments as JSON, checked as you type: an object, every required property.
 * @param {Record<string, unknown>} current
 * @param {string[]} required
 */
function jsonEditor(current, required) {
  const text = h("textarea", {
    id: "revise-json",
    rows: "8",
    spellcheck: "false",
    "aria-describedby": "revise-json-check",
  });
  text.value = JSON.stringify(current, null, 2);
  const check = h("p", { id: "revise-json-check", class: "hint", "aria-live": "polite" });
  /** @returns {{value?: Record<string, unknown>, problem?: string}} */
  const read = () => {
    let value;
    try {
      value = JSON.parse(text.value);
    } catch (error) {
      return { problem: `Not JSON: ${/** @type {Error} */ (error).message}` };
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      return { problem: "The arguments must be a JSON object." };
    }
    const missing = required.filter((name) => !(name in value));
    return missing.length ? { problem: `Required: ${missing.join(", ")}.` } : { value };
  };
  const paintCheck = () => {
    const { problem } = read();
    check.textContent = problem || "Valid JSON.";
    text.setAttribute("aria-invalid", problem ? "true" : "false");
  };
  text.addEventListener("input", paintCheck);
  paintCheck();
  return {
    fields: [h("div", { class: "field" }, h("label", { for: "revise-json" }, "Arguments (JSON)"), text), check],
    read,
  };
}

/**
 * The revise form for `preview`'s call, made from `tool`'s input schema (JSON when the
 * tool cannot be read or its schema is not flat).
 * @param {PreviewOut} preview
 * @param {ToolOut | null} tool
 */
export function reviseControls(preview, tool) {
  const schema = /** @type {Record<string, unknown> | undefined} */ (tool?.input_schema);
  const required = /** @type {string[]} */ (Array.isArray(schema?.required) ? schema.required : []);
  const current = /** @type {Record<string, unknown>} */ (preview.arguments || {});
  const properties = flatProperties(schema);
  const editor = properties ? formEditor(properties, current, required) : jsonEditor(current, required);
  const reason = h("textarea", { id: "revise-reason", rows: "2", maxlength: String(REASON_MAX) });
  const submit = h("button", { type: "submit", id: "revise" }, "Revise");
  const form = h(
    "form",
    { class: "revise", novalidate: true },
    ...editor.fields,
    h("div", { class: "field" }, h("label", { for: "revise-reason" }, "Why"), reason),
    h("p", { class: "hint" }, "Required (1–500 characters). The model is told what you changed and why."),
    submit,
  );
  const section = h("div", { class: "revise-section" }, h("h3", {}, "Or revise the arguments"), form);
  return {
    section,
    form,
    reason,
    read: editor.read,
    /** @param {PreviewOut} latest */
    paint(latest) {
      submit.disabled = latest.status !== "pending";
    },
  };
}

/**
 * Sends the revision; on success, the new preview's page.
 * @param {import("./preview-decision.js").PreviewPage} page
 * @param {ReturnType<typeof reviseControls>} controls
 * @param {import("./preview-decision.js").Act} act
 */
export function wireRevise(page, controls, act) {
  controls.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const { value, problem } = controls.read();
    const why = controls.reason.value.trim();
    if (problem || !value) {
      showMessage(page.slot, problem || "The arguments are not valid.");
      return;
    }
    if (!why || why.length > REASON_MAX) {
      showMessage(page.slot, `A reason is required to revise (1–${REASON_MAX} characters).`);
      controls.reason.setAttribute("aria-invalid", "true");
      controls.reason.focus();
      return;
    }
    controls.reason.removeAttribute("aria-invalid");
    const request = () =>
      page.ctx.api(`${page.path}/revise`, { method: "POST", body: { arguments: value, reason: why } });
    act("revise", request, (answer) => {
      const made = /** @type {ReviseOut} */ (answer).preview;
      page.ctx.navigate(consolePath("previews", made.id));
    });
  });
}
