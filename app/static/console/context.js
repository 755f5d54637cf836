// @ts-check
// A page's context: what a page may use, and everything it starts (timers, streams,
// requests) ends when the user leaves the page.

import { api, Problem } from "./api.js";
import { follow } from "./sse.js";

/** @typedef {import("./schema.js").MeOut} MeOut */
/** @typedef {import("./api.js").RequestOptions} RequestOptions */
/** @typedef {import("./sse.js").FollowOptions} FollowOptions */
/** @typedef {import("./sse.js").Stream} Stream */
/**
 * @typedef {object} PageContext
 * @property {HTMLElement} main the page's element
 * @property {MeOut} me the signed-in key's subject, tenant and roles
 * @property {AbortSignal} signal aborted when the user leaves the page
 * @property {boolean} alive the page is still shown
 * @property {(path: string, options?: RequestOptions) => Promise<unknown>} api the API
 *   client, aborted when the page is left; after a 401, the page stops refreshing
 * @property {(ms: number, fn: () => unknown) => void} every a timer while the page is shown
 * @property {(url: string, options: FollowOptions) => Stream} follow an event stream
 *   while the page is shown
 * @property {(fn: () => void) => void} onCleanup runs `fn` when the page is left
 * @property {() => void} signOut
 * @property {(path: string) => void} navigate
 * @property {() => void} dispose ends the page's timers, streams and requests
 */

/**
 * @param {HTMLElement} main
 * @param {{me: MeOut, signOut: () => void, navigate: (path: string) => void}} session
 * @returns {PageContext}
 */
export function makeContext(main, { me, signOut, navigate }) {
  const controller = new AbortController();
  /** @type {Array<() => void>} */
  const cleanups = [];
  return {
    main,
    me,
    signal: controller.signal,
    get alive() {
      return !controller.signal.aborted;
    },
    async api(path, options = {}) {
      try {
        return await api(path, { ...options, signal: controller.signal });
      } catch (error) {
        // The key stopped working: no more refreshing (the page shows "Sign in again").
        if (isUnauthenticated(error)) for (const fn of cleanups.splice(0)) fn();
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

/**
 * Whether `error` is a 401 answer: the key is not (or no longer) accepted.
 * @param {unknown} error
 * @returns {boolean}
 */
export function isUnauthenticated(error) {
  return error instanceof Problem && error.status === 401;
}
