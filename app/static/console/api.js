// The API client: the key from sessionStorage as `Authorization: Bearer …` on every
// request (never in an address), JSON in and out, and problem+json answers as `Problem`s.

const KEY = "toolgate.console.key";

export function getKey() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setKey(key) {
  sessionStorage.setItem(KEY, key);
}

export function clearKey() {
  sessionStorage.removeItem(KEY);
}

/** An RFC 9457 problem answer (or a request that got no answer: status 0, slug "network"). */
export class Problem extends Error {
  constructor(body, status) {
    const detail = typeof body?.detail === "string" ? body.detail : "";
    super(detail || body?.title || `HTTP ${status}`);
    this.body = body || {};
    this.status = status;
    this.title = typeof body?.title === "string" ? body.title : `HTTP ${status}`;
    this.detail = detail;
    this.slug = slugOf(body);
    this.traceId = typeof body?.trace_id === "string" ? body.trace_id : null;
  }
}

function slugOf(body) {
  if (typeof body?.type === "string" && body.type.includes("/")) {
    return body.type.split("/").filter(Boolean).pop();
  }
  return typeof body?.code === "string" ? body.code : "unknown";
}

export function networkProblem(error) {
  return new Problem(
    {
      type: "about:blank/network",
      title: "No answer",
      detail: `the service could not be reached (${error?.message || "network error"})`,
    },
    0,
  );
}

export function authHeaders(extra = {}) {
  const key = getKey();
  return key ? { Authorization: `Bearer ${key}`, ...extra } : { ...extra };
}

/**
 * Calls the API. Resolves to the parsed JSON body; rejects with a `Problem` for any
 * non-2xx answer, or a network-failure `Problem` (status 0) when no answer came.
 */
export async function api(path, { method = "GET", body, headers = {}, signal } = {}) {
  const init = {
    method,
    headers: authHeaders({ Accept: "application/json", ...headers }),
    signal,
    cache: "no-store",
    credentials: "omit",
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw networkProblem(error);
  }
  const text = await response.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!response.ok) {
    const problem = new Problem(parsed || { title: response.statusText }, response.status);
    problem.retryAfter = response.headers.get("Retry-After");
    throw problem;
  }
  return parsed;
}

/** Every item of a paged list (following `next_cursor`), up to `max` items. */
export async function all(path, { signal, max = 1000 } = {}) {
  const items = [];
  let cursor = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const url = cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path;
    const page = await api(url, { signal });
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return items;
}

/** A fresh Idempotency-Key (crypto.randomUUID where the page is a secure context). */
export function newIdempotencyKey() {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
