/**
 * WebCrypto, wherever the client runs: `globalThis.crypto` in browsers and Node 19+; on
 * Node 18 (where it is not a global by default) `node:crypto`'s `webcrypto`, imported only
 * then, through a specifier bundlers do not follow.
 *
 * Two parts are used, apart, because browsers give them apart: `getRandomValues` (every
 * page) makes Idempotency-Keys, so requests work on a plain-http origin too;
 * `crypto.subtle` (secure contexts only: https, localhost) is needed by webhook
 * verification alone.
 */
import { ToolgateError } from "./errors.js";
let nodeCrypto;
/** `node:crypto`'s WebCrypto, or undefined where there is no Node. */
function fromNode() {
    nodeCrypto ??= (async () => {
        const specifier = "node:crypto";
        try {
            const module = (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier));
            return module.webcrypto;
        }
        catch {
            return undefined; // not Node
        }
    })();
    return nodeCrypto;
}
function globalCrypto() {
    return globalThis.crypto;
}
/** A fresh `Idempotency-Key`: a random (version 4) UUID, from `crypto.getRandomValues`. */
export async function newIdempotencyKey() {
    const global = globalCrypto();
    const crypto = typeof global?.getRandomValues === "function" ? global : await fromNode();
    if (typeof crypto?.getRandomValues !== "function")
        throw new ToolgateError("no crypto.getRandomValues here to make an Idempotency-Key");
    // Called as a method: browsers refuse it detached from its `crypto`.
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40; // version 4
    bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80; // the RFC 9562 variant
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    const parts = [0, 8, 12, 16, 20].map((start, i, starts) => hex.slice(start, starts[i + 1]));
    return parts.join("-"); // 8-4-4-4-12
}
/** The request's `Idempotency-Key`: the caller's, else a fresh one (sent again by each retry). */
export async function keyFor(given) {
    return given ?? (await newIdempotencyKey());
}
/** `crypto.subtle`, for webhook verification; a `ToolgateError` where there is none. */
export async function subtleCrypto() {
    const subtle = globalCrypto()?.subtle ?? (await fromNode())?.subtle;
    if (subtle)
        return subtle;
    throw new ToolgateError("verifying a webhook needs WebCrypto's crypto.subtle, which browsers give only to " +
        "secure contexts (https, localhost): verify on an https page, or in Node");
}
//# sourceMappingURL=crypto.js.map