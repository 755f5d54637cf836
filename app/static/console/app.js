// @ts-check
// The approvers' console: signs in with an API key kept in sessionStorage, routes on
// location.pathname (every page has its own address), and renders every page from the
// API as text. Pages live in pages/*.js; each gets a context whose timers, streams and
// requests end when the user leaves the page.

import { api, clearKey, getKey, setKey } from "./api.js";
import { isUnauthenticated, makeContext } from "./context.js";
import { announce, h, replace } from "./dom.js";
import { clearProblem, showMessage, showProblem } from "./problems.js";
import { previewPage } from "./pages/preview.js";
import { queuePage } from "./pages/queue.js";
import { runPage } from "./pages/run.js";
import { runsPage } from "./pages/runs.js";
import { auditPage } from "./pages/audit.js";
import { keysPage } from "./pages/keys.js";
import { toolsPage } from "./pages/tools.js";
import { isAbort } from "./util.js";

/** @typedef {import("./schema.js").MeOut} MeOut */
/** @typedef {import("./context.js").PageContext} PageContext */
/**
 * A page: fills `ctx.main`, from the address's parameters (e.g. a run's id).
 * @typedef {(ctx: PageContext, ...params: string[]) => void | Promise<void>} Page
 */
/** @typedef {"queue" | "runs" | "tools" | "keys" | "audit"} Section */

/** @type {{me: MeOut | null, context: PageContext | null}} */
const state = { me: null, context: null };

/** @type {Array<[RegExp, Page, Section]>} */
const ROUTES = [
  [/^\/console\/?$/, queuePage, "queue"],
  [/^\/console\/previews\/([^/]+)\/?$/, previewPage, "queue"],
  [/^\/console\/runs\/?$/, runsPage, "runs"],
  [/^\/console\/runs\/([^/]+)\/?$/, runPage, "runs"],
  [/^\/console\/tools\/?$/, toolsPage, "tools"],
  [/^\/console\/keys\/?$/, keysPage, "keys"],
  [/^\/console\/audit\/?$/, auditPage, "audit"],
];

/**
 * @param {string} pathname
 * @returns {{page: Page, section: Section | null, params: string[]}}
 */
function route(pathname) {
  for (const [pattern, page, section] of ROUTES) {
    const match = pattern.exec(pathname);
    if (match) return { page, section, params: match.slice(1).map(decodeURIComponent) };
  }
  return { page: notFoundPage, section: null, params: [] };
}

/** @type {Page} */
function notFoundPage(ctx) {
  ctx.main.append(
    h("h1", { tabindex: "-1" }, "Page not found"),
    h("p", {}, "The console has no page at this address. Use the navigation above."),
  );
}

/**
 * An element of the shell (app/api/routes/console.py writes them).
 * @param {string} id
 * @returns {HTMLElement}
 */
function shell(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the shell has no #${id}`);
  return el;
}

function header() {
  const nav = shell("nav");
  const who = shell("who");
  if (!state.me) {
    nav.hidden = true;
    who.replaceChildren();
    return;
  }
  nav.hidden = false;
  const { section } = route(location.pathname);
  /** @type {Record<string, Section>} */
  const sections = {
    "/console": "queue",
    "/console/runs": "runs",
    "/console/tools": "tools",
    "/console/keys": "keys",
    "/console/audit": "audit",
  };
  // Keys are an admin's business: the link is offered only to an admin key.
  shell("nav-keys").hidden = !state.me.roles.includes("admin");
  shell("nav-audit").hidden = !state.me.roles.includes("admin");
  for (const a of nav.querySelectorAll("a")) {
    if (sections[a.getAttribute("href") || ""] === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  replace(
    who,
    h(
      "span",
      { class: "identity" },
      "Signed in as ",
      h("strong", {}, state.me.subject),
      ` (${state.me.roles.join(", ")}) · tenant ${state.me.tenant}`,
    ),
    " ",
    h("button", { type: "button", class: "secondary", on: { click: signOut } }, "Sign out"),
  );
}

function signOut() {
  clearKey();
  state.me = null;
  announce("Signed out.");
  render({ focus: true });
}

/**
 * @param {HTMLElement} main
 * @param {unknown} [problem] why the key in use stopped working
 */
function signInPage(main, problem) {
  const slot = h("div", { class: "alerts" });
  const input = h("input", {
    id: "api-key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "api-key-hint",
    required: true,
  });
  const button = h("button", { type: "submit" }, "Sign in");
  // No `name` on the field and a POST form: even without this script, the key could
  // never end up in an address.
  const form = h(
    "form",
    { method: "post", action: "/console", novalidate: true, class: "signin" },
    h("div", { class: "field" }, h("label", { for: "api-key" }, "API key"), input),
    h(
      "p",
      { id: "api-key-hint", class: "hint" },
      "Paste an API key (tg_…). It is kept in this tab only (sessionStorage) and sent as an Authorization header; it never appears in an address.",
    ),
    button,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      showMessage(slot, "Paste an API key first.");
      input.focus();
      return;
    }
    button.disabled = true;
    clearProblem(slot);
    setKey(key);
    try {
      const me = /** @type {MeOut} */ (await api("/v1/me"));
      state.me = me;
      input.value = "";
      announce(`Signed in as ${me.subject}.`);
      await render({ focus: true });
    } catch (error) {
      clearKey();
      state.me = null;
      button.disabled = false;
      showProblem(slot, error, { action: "sign-in" });
      input.focus();
    }
  });
  replace(main, h("h1", { tabindex: "-1" }, "Sign in"), slot, form);
  if (problem) showProblem(slot, problem, { action: "sign-in-again" });
  input.focus();
}

/** The address the page shows: a link within it (`#event-7`) changes only the fragment, and
 * the page stays as it is. */
let shown = "";

/**
 * Shows the page of the address (or the sign-in form).
 * @param {{focus?: boolean}} [options] focus: move the focus to the new page's heading
 */
async function render({ focus = false } = {}) {
  shown = location.pathname + location.search;
  const main = shell("main");
  state.context?.dispose();
  state.context = null;
  if (!getKey()) {
    state.me = null;
    header();
    signInPage(main);
    return;
  }
  if (!state.me) {
    try {
      state.me = /** @type {MeOut} */ (await api("/v1/me"));
    } catch (error) {
      if (isUnauthenticated(error)) clearKey();
      state.me = null;
      header();
      signInPage(main, error);
      return;
    }
  }
  header();
  const { page, params } = route(location.pathname);
  const ctx = makeContext(main, { me: state.me, signOut, navigate });
  state.context = ctx;
  main.replaceChildren();
  try {
    await page(ctx, ...params);
  } catch (error) {
    if (isAbort(error) || !ctx.alive) return;
    const slot = h("div", { class: "alerts" });
    main.append(slot);
    showProblem(slot, error, { action: "load", me: state.me }, { onSignIn: signOut });
  }
  if (focus && ctx.alive) main.querySelector("h1")?.focus();
}

/** @param {string} path */
function navigate(path) {
  if (path !== location.pathname + location.search) history.pushState(null, "", path);
  render({ focus: true });
}

document.addEventListener("click", (event) => {
  const a = event.target instanceof Element ? event.target.closest("a[href]") : null;
  if (!a || event.defaultPrevented || event.button !== 0) return;
  if (!(a instanceof HTMLAnchorElement)) return;
  if (a.getAttribute("href")?.startsWith("#")) return; // "Skip to content"
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || a.target) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith("/console")) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});

window.addEventListener("popstate", () => {
  if (location.pathname + location.search === shown) return;
  render({ focus: true });
});
render();
