// @ts-check
// The API client: the key from sessionStorage as `Authorization: Bearer …` on every
// request (never in an address) or, for a person signed in with SSO, the session's
// HttpOnly cookie (which no script here can read) with its CSRF token on every change;
// JSON in and out, and problem+json answers as `Problem`s.

import { isAbort } from "./util.js";

/** @typedef {import("./schema.js").Problem} ProblemOut */
/**
 * A problem body as it may come (every member checked before use), with a member some
 * problems add: `new_preview_id` (the preview that superseded this one).
 * @typedef {Partial<ProblemOut> & {new_preview_id?: unknown}} ProblemBody
 */
/**
 * @typedef {object} RequestOptions
 * @property {string} [method]
 * @property {unknown} [body] sent as JSON
 * @property {Record<string, string>} [headers]
 * @property {AbortSignal} [signal]
 */

const KEY = "toolgate.console.key";

/** @returns {string | null} */
export function getKey() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

/** @param {string} key */
export function setKey(key) {
  sessionStorage.setItem(KEY, key);
}

export function clearKey() {
  sessionStorage.removeItem(KEY);
}

/**
 * The SSO session in use (kept in memory only; its cookie does the authenticating).
 * @typedef {object} SsoSession
 * @property {string} tenant
 * @property {string} subject
 * @property {string | null} name
 * @property {string[]} roles
 * @property {string[] | null} scopes
 * @property {string} expires_at
 * @property {string} csrf_token
 */
/** @type {SsoSession | null} */
let session = null;

/** @param {SsoSession | null} made */
export function useSession(made) {
  session = made;
}

/** @returns {SsoSession | null} */
export function ssoSession() {
  return session;
}

/** Whether requests go out signed in: with a key, or with a person's session. */
export function signedIn() {
  return Boolean(getKey() || session);
}

/**
 * What carries the session: the cookie when signed in with SSO, nothing with a key.
 * @returns {RequestCredentials}
 */
export function credentials() {
  return !getKey() && session ? "same-origin" : "omit";
}

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** An RFC 9457 problem answer (or a request that got no answer: status 0, code "network"). */
export class Problem extends Error {
  /**
   * @param {ProblemBody | null | undefined} body
   * @param {number} status
   */
  constructor(body, status) {
    const detail = typeof body?.detail === "string" ? body.detail : "";
    super(detail || body?.title || `HTTP ${status}`);
    /** @type {ProblemBody} */
    this.body = body || {};
    this.status = status;
    this.title = typeof body?.title === "string" ? body.title : `HTTP ${status}`;
    this.detail = detail;
    /** The stable code (the last part of the problem's type): what the console matches on. */
    this.code = codeOf(body);
    this.traceId = typeof body?.trace_id === "string" ? body.trace_id : null;
    /** @type {string | null} the answer's Retry-After header */
    this.retryAfter = null;
  }

  /** @returns {string | null} the preview that superseded this one, when the problem says */
  get newPreviewId() {
    const id = this.body.new_preview_id;
    return typeof id === "string" && id ? id : null;
  }
}

/**
 * @param {ProblemBody | null | undefined} body
 * @returns {string}
 */
function codeOf(body) {
  if (typeof body?.type === "string" && body.type.includes("/")) {
    return body.type.split("/").filter(Boolean).pop() || "unknown";
  }
  return typeof body?.code === "string" ? body.code : "unknown";
}

/**
 * The problem of a request that got no answer at all.
 * @param {unknown} error
 * @returns {Problem}
 */
export function networkProblem(error) {
  const message = error instanceof Error && error.message ? error.message : "network error";
  return new Problem(
    {
      type: "about:blank/network",
      title: "No answer",
      detail: `the service could not be reached (${message})`,
    },
    0,
  );
}

/**
 * @param {Record<string, string>} [extra]
 * @param {string} [method]
 * @returns {Record<string, string>}
 */
export function authHeaders(extra = {}, method = "GET") {
  const key = getKey();
  if (key) return { Authorization: `Bearer ${key}`, ...extra };
  if (session && !SAFE.has(method)) return { "X-CSRF-Token": session.csrf_token, ...extra };
  return { ...extra };
}

/**
 * Calls the API. Resolves to the parsed JSON body (for the caller to type: it is the
 * API's answer); rejects with a `Problem` for any non-2xx answer, or a network-failure
 * `Problem` (status 0) when no answer came.
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<unknown>}
 */
export async function api(path, { method = "GET", body, headers = {}, signal } = {}) {
  /** @type {RequestInit & {headers: Record<string, string>}} */
  const init = {
    method,
    headers: authHeaders({ Accept: "application/json", ...headers }, method),
    signal,
    cache: "no-store",
    credentials: credentials(),
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (isAbort(error)) throw error;
    throw networkProblem(error);
  }
  const text = await response.text();
  /** @type {unknown} the answer's JSON, typed by the caller */
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!response.ok) {
    const problemBody = /** @type {ProblemBody} */ (parsed || { title: response.statusText });
    const problem = new Problem(problemBody, response.status);
    problem.retryAfter = response.headers.get("Retry-After");
    throw problem;
  }
  return parsed;
}

/**
 * Every item of a paged list (following `next_cursor`), up to `max` items.
 * @template T
 * @param {string} path
 * @param {{signal?: AbortSignal, max?: number}} [options]
 * @returns {Promise<T[]>}
 */
export async function all(path, { signal, max = 1000 } = {}) {
  /** @type {T[]} */
  const items = [];
  /** @type {string | null} */
  let cursor = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const url = cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path;
    const page = /** @type {{items: T[], next_cursor: string | null}} */ (
      await api(url, { signal })
    );
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return items;
}

/**
 * A fresh Idempotency-Key (crypto.randomUUID where the page is a secure context).
 * @returns {string}
 */
export function newIdempotencyKey() {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
