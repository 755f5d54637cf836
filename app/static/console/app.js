// The approvers' console: signs in with an API key kept in sessionStorage, routes on
// location.pathname (every page has its own address), and renders every page from the
// API as text. Pages live in pages/*.js; each gets a context whose timers, streams and
// requests end when the user leaves the page.

import { api, clearKey, getKey, setKey } from "./api.js";
import { announce, h, replace } from "./dom.js";
import { clearProblem, showMessage, showProblem } from "./problems.js";
import { follow } from "./sse.js";
import { previewPage } from "./pages/preview.js";
import { queuePage } from "./pages/queue.js";
import { runPage, runsPage } from "./pages/runs.js";
import { toolsPage } from "./pages/tools.js";
import { isAbort } from "./util.js";

const state = { me: null, context: null };

const ROUTES = [
  [/^\/console\/?$/, queuePage, "queue"],
  [/^\/console\/previews\/([^/]+)\/?$/, previewPage, "queue"],
  [/^\/console\/runs\/?$/, runsPage, "runs"],
  [/^\/console\/runs\/([^/]+)\/?$/, runPage, "runs"],
  [/^\/console\/tools\/?$/, toolsPage, "tools"],
];

function route(pathname) {
  for (const [pattern, page, section] of ROUTES) {
    const match = pattern.exec(pathname);
    if (match) return { page, section, params: match.slice(1).map(decodeURIComponent) };
  }
  return { page: notFoundPage, section: null, params: [] };
}

function notFoundPage(ctx) {
  ctx.main.append(
    h("h1", { tabindex: "-1" }, "Page not found"),
    h("p", {}, "The console has no page at this address. Use the navigation above."),
  );
}

function makeContext(main) {
  const controller = new AbortController();
  const cleanups = [];
  return {
    main,
    me: state.me,
    signal: controller.signal,
    get alive() {
      return !controller.signal.aborted;
    },
    async api(path, options = {}) {
      try {
        return await api(path, { ...options, signal: controller.signal });
      } catch (error) {
        // The key stopped working: no more refreshing (the page shows "Sign in again").
        if (error.status === 401) for (const fn of cleanups.splice(0)) fn();
        throw error;
      }
    },
    every(ms, fn) {
      const timer = setInterval(() => {
        if (!controller.signal.aborted) fn();
      }, ms);
      cleanups.push(() => clearInterval(timer));
    },
    follow(url, options) {
      const stream = follow(url, options);
      cleanups.push(() => stream.close());
      return stream;
    },
    onCleanup(fn) {
      cleanups.push(fn);
    },
    signOut,
    navigate,
    dispose() {
      controller.abort();
      for (const fn of cleanups.splice(0)) fn();
    },
  };
}

function header() {
  const nav = document.getElementById("nav");
  const who = document.getElementById("who");
  if (!state.me) {
    nav.hidden = true;
    who.replaceChildren();
    return;
  }
  nav.hidden = false;
  const { section } = route(location.pathname);
  const sections = { "/console": "queue", "/console/runs": "runs", "/console/tools": "tools" };
  for (const a of nav.querySelectorAll("a")) {
    if (sections[a.getAttribute("href")] === section) a.setAttribute("aria-current", "page");
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
      state.me = await api("/v1/me");
      input.value = "";
      announce(`Signed in as ${state.me.subject}.`);
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

async function render({ focus = false } = {}) {
  const main = document.getElementById("main");
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
      state.me = await api("/v1/me");
    } catch (error) {
      if (error.status === 401) clearKey();
      state.me = null;
      header();
      signInPage(main, error);
      return;
    }
  }
  header();
  const { page, params } = route(location.pathname);
  const ctx = makeContext(main);
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

function navigate(path) {
  if (path !== location.pathname + location.search) history.pushState(null, "", path);
  render({ focus: true });
}

document.addEventListener("click", (event) => {
  const a = event.target instanceof Element ? event.target.closest("a[href]") : null;
  if (!a || event.defaultPrevented || event.button !== 0) return;
  if (a.getAttribute("href").startsWith("#")) return; // "Skip to content"
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || a.target) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith("/console")) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});

window.addEventListener("popstate", () => render({ focus: true }));
render();
