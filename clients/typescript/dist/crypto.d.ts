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
/** A fresh `Idempotency-Key`: a random (version 4) UUID, from `crypto.getRandomValues`. */
export declare function newIdempotencyKey(): Promise<string>;
/** The request's `Idempotency-Key`: the caller's, else a fresh one (sent again by each retry). */
export declare function keyFor(given: string | undefined): Promise<string>;
/** `crypto.subtle`, for webhook verification; a `ToolgateError` where there is none. */
export declare function subtleCrypto(): Promise<SubtleCrypto>;
//# sourceMappingURL=crypto.d.ts.map