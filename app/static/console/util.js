// @ts-check
// Small helpers shared by the pages.

/**
 * Whether `error` is the abort of a request the page no longer needs (it was left).
 * @param {unknown} error
 * @returns {boolean}
 */
export function isAbort(error) {
  return typeof error === "object" && error !== null && "name" in error && error.name === "AbortError";
}

/**
 * Runs `fn` at most once at a time; a call while it runs makes it run once more after.
 * @param {() => unknown} fn
 * @returns {() => Promise<void>}
 */
export function coalesce(fn) {
  /** @type {Promise<void> | null} */
  let running = null;
  let again = false;
  return function run() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await fn();
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  };
}

/**
 * A page's memory of what it drew: `changed(part, value)` is true the first time and when
 * `value` differs from what `part` last showed. A part drawn again for nothing would lose a
 * click under way on a link in it (mousedown on the old element, mouseup on the new).
 * @returns {(part: string, value: unknown) => boolean}
 */
export function drawnParts() {
  /** @type {Map<string, string>} */
  const drawn = new Map();
  return (part, value) => {
    const seen = JSON.stringify(value);
    if (drawn.get(part) === seen) return false;
    drawn.set(part, seen);
    return true;
  };
}

/**
 * `fn` called once, `ms` after the last of a burst of calls.
 * @param {() => unknown} fn
 * @param {number} ms
 * @returns {() => void}
 */
export function debounce(fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}

/**
 * What `request` resolves to, or `fallback` when it fails: for what a page can do without
 * (a tool's risk, the agents of a filter). An abort still rejects: the page was left.
 * @template T, F
 * @param {() => Promise<T>} request
 * @param {F} fallback
 * @returns {Promise<T | F>}
 */
export async function optional(request, fallback) {
  try {
    return await request();
  } catch (error) {
    if (isAbort(error)) throw error;
    return fallback;
  }
}

/**
 * Whether `value` is one of `values` (narrows a string from an address to an enum).
 * @template {string} T
 * @param {readonly T[]} values
 * @param {unknown} value
 * @returns {value is T}
 */
export function isOneOf(values, value) {
  return values.some((v) => v === value);
}
