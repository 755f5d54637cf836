// @ts-check
// The approvers' console: signs in with an API key kept in sessionStorage, or through the
// organisation's identity provider ("Sign in with SSO": a server-side session whose
// HttpOnly cookie no script reads), routes on
// location.pathname (every page has its own address), and renders every page from the
// API as text. Pages live in pages/*.js; each gets a context whose timers, streams and
// requests end when the user leaves the page.

import { api, clearKey, getKey, setKey, ssoSession, useSession } from "./api.js";
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

/** Why a sign-in with SSO came back without a session (`/console?sso=…`), in words. */
const SSO_REFUSALS = /** @type {Record<string, string>} */ ({
  denied: "The identity provider did not sign you in: it was declined or cancelled there.",
  expired: "That sign-in took too long, or was used already. Sign in again.",
  exchange: "The identity provider did not complete the sign-in. Try again in a moment.",
  invalid: "The identity provider's answer did not verify. Ask an operator to check the auth.oidc settings.",
  "no-role": "You signed in, but your account has no role in Toolgate: none of its groups is mapped to a role. Ask an operator.",
  off: "Signing in with SSO is not configured on this service.",
  browser: "That sign-in was begun in another browser, or its cookie is gone: it was refused. Sign in again here.",
});

/**
 * Whether SSO is offered, and the session of a person signed in with it (or null).
 * @returns {Promise<{enabled: boolean, session: import("./api.js").SsoSession | null}>}
 */
async function ssoState() {
  try {
    const answer = await fetch("/console/sso/session", {
      credentials: "same-origin",
      cache: "no-store",
      headers: { Accept: "application/json" },
    });
    if (answer.ok) return await answer.json();
  } catch {
    // No answer: offered as if SSO were off; the key form still works.
  }
  return { enabled: false, session: null };
}

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
      h("strong", {}, named(state.me.subject)),
      ` (${state.me.roles.join(", ")}) · tenant ${state.me.tenant}`,
    ),
    " ",
    h("button", { type: "button", class: "secondary", on: { click: signOut } }, "Sign out"),
  );
}

/**
 * A person's name beside their subject, when signed in with SSO and the provider gave one.
 * @param {string} subject
 * @returns {string}
 */
function named(subject) {
  const name = !getKey() ? ssoSession()?.name : null;
  return name ? `${name} (${subject})` : subject;
}

async function signOut() {
  /** @type {string | null} */
  let endSession = null;
  if (!getKey() && ssoSession()) {
    try {
      const answer = /** @type {{end_session_url: string | null}} */ (
        await api("/console/sso/sign-out", { method: "POST" })
      );
      endSession = answer.end_session_url;
    } catch {
      // An ended session has nothing left to end here: the page signs out all the same.
    }
    useSession(null);
  }
  clearKey();
  state.me = null;
  announce("Signed out.");
  if (endSession) {
    location.assign(endSession); // the provider's session too; it sends the person back
    return;
  }
  render({ focus: true });
}

/**
 * @param {HTMLElement} main
 * @param {unknown} [problem] why the key in use stopped working
 * @param {boolean} [sso] whether "Sign in with SSO" is offered
 */
function signInPage(main, problem, sso = false) {
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
  replace(main, h("h1", { tabindex: "-1" }, "Sign in"), slot);
  if (sso) {
    const back = location.pathname + location.search.replace(/[?&]sso=[^&]*/, "");
    main.append(
      h(
        "p",
        { class: "sso" },
        h(
          "a",
          { class: "button", href: `/console/sso/start?next=${encodeURIComponent(back)}` },
          "Sign in with SSO",
        ),
        h("span", { class: "hint" }, " through your organisation's identity provider, or with an API key:"),
      ),
    );
  }
  main.append(form);
  const refused = new URLSearchParams(location.search).get("sso");
  if (refused) showMessage(slot, SSO_REFUSALS[refused] || "Signing in with SSO did not work.");
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
    const sso = await ssoState();
    useSession(sso.session);
    if (!sso.session) {
      state.me = null;
      header();
      signInPage(main, undefined, sso.enabled);
      return;
    }
    const { tenant, subject, roles, scopes } = sso.session;
    state.me = { tenant, subject, roles, scopes };
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
  if (url.pathname.startsWith("/console/sso/")) return; // the trip to the provider
  event.preventDefault();
  navigate(url.pathname + url.search);
});

window.addEventListener("popstate", () => {
  if (location.pathname + location.search === shown) return;
  render({ focus: true });
});
render();
