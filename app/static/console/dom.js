// @ts-check
// Building the page safely: every piece of data becomes a text node (textContent),
// never markup. There is no innerHTML, insertAdjacentHTML or Markdown anywhere in the
// console, and nothing here turns text into links.

/**
 * What may be a child: text (numbers too), a node, nothing (null, undefined, false), or
 * a list of those.
 * @typedef {string | number | Node | null | undefined | false | ChildList} Child
 */
/** @typedef {Child[]} ChildList */
/**
 * Attributes (a value of null, undefined or false leaves one out; true sets it empty),
 * `on` (event listeners) and `text` (the text content).
 * @typedef {{on?: Record<string, EventListener>} & Record<string, unknown>} Props
 */

/**
 * h("a", {href: "/console/runs", class: "x"}, "Runs", child, [more]) — an element whose
 * string children are text nodes. `on` maps event names to listeners; `text` sets the
 * text content. Attributes named on* are refused: the policy forbids inline handlers.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      const listeners = /** @type {Record<string, EventListener>} */ (value);
      for (const [event, listener] of Object.entries(listeners)) {
        el.addEventListener(event, listener);
      }
    } else if (name === "text") {
      el.textContent = String(value);
    } else if (name.toLowerCase().startsWith("on") || name === "style") {
      throw new Error(`refusing the attribute ${name}`);
    } else if (value === true) {
      el.setAttribute(name, "");
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * Appends `children` to `el` (strings as text nodes).
 * @template {Element} E
 * @param {E} el
 * @param {ChildList} children
 * @returns {E}
 */
export function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * Replaces every child of `el` (text stays text).
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * A table's head: one column header per name.
 * @param {readonly string[]} columns
 * @returns {HTMLTableSectionElement}
 */
export function columnHeads(columns) {
  return h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c))));
}

/**
 * JSON shown as text in a <pre>.
 * @param {unknown} value
 * @param {string} [label]
 * @returns {HTMLPreElement}
 */
export function jsonBlock(value, label) {
  const pre = h("pre", { class: "json", tabindex: "0", "aria-label": label || null });
  pre.textContent = value === undefined ? "" : JSON.stringify(value, null, 2);
  return pre;
}

/**
 * A link inside the console (an address of our own, built from ids, never from text).
 * @param {string} path
 * @param {...Child} children
 * @returns {HTMLAnchorElement}
 */
export function link(path, ...children) {
  return h("a", { href: path }, ...children);
}

/**
 * A console address from its parts: consolePath("runs", id) is /console/runs/{id}.
 * @param {...(string | number)} parts
 * @returns {string}
 */
export function consolePath(...parts) {
  return "/console/" + parts.map((p) => encodeURIComponent(String(p))).join("/");
}

/**
 * A description list from [term, value] pairs (values: text or nodes; null shows "—",
 * undefined leaves the pair out).
 * @param {Array<[string, Child]>} pairs
 * @returns {HTMLDListElement}
 */
export function details(pairs) {
  const dl = h("dl", { class: "facts" });
  for (const [term, value] of pairs) {
    if (value === undefined) continue;
    dl.append(h("dt", {}, term), h("dd", {}, value === null ? "—" : value));
  }
  return dl;
}

/**
 * An instant as "2026-01-31 12:00:00 UTC" ("—" for none).
 * @param {string | null | undefined} iso
 * @returns {string}
 */
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

/**
 * "4m 05s", "1h 02m", or "expired" — time left until `iso`.
 * @param {string} iso
 * @param {number} [now]
 * @returns {string}
 */
export function countdown(iso, now = Date.now()) {
  const left = Math.floor((new Date(iso).getTime() - now) / 1000);
  if (!Number.isFinite(left)) return "—";
  if (left <= 0) return "expired";
  const hours = Math.floor(left / 3600);
  const minutes = Math.floor((left % 3600) / 60);
  const seconds = left % 60;
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  if (hours > 0) return `${hours}h ${pad(minutes)}m`;
  if (minutes > 0) return `${minutes}m ${pad(seconds)}s`;
  return `${seconds}s`;
}

/**
 * An amount in US dollars ("$0.00"; four places below a cent).
 * @param {unknown} value
 * @returns {string}
 */
export function usd(value) {
  const n = Number(value);
  if (!Number.isFinite(n)) return "—";
  return "$" + (n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2));
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let announceTimer;

/**
 * Says `text` to assistive technology (the polite live region in the shell).
 * @param {string} text
 */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => {
    region.textContent = text;
  }, 50);
}

/**
 * A <select> with a label; `options` are [value, text] pairs.
 * @param {string} id
 * @param {string} label
 * @param {Array<[string, string]>} options
 * @param {string} selected
 * @param {(value: string) => void} onChange
 * @returns {HTMLDivElement}
 */
export function labelledSelect(id, label, options, selected, onChange) {
  const select = h("select", { id, on: { change: () => onChange(select.value) } });
  for (const [value, text] of options) {
    const option = h("option", { value }, text);
    if (value === selected) option.selected = true;
    select.append(option);
  }
  return h("div", { class: "field" }, h("label", { for: id }, label), select);
}
