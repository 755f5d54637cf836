/**
 * WebCrypto, wherever the client runs: `globalThis.crypto` in browsers and Node 19+; on
 * Node 18 (where it is not a global by default) `node:crypto`'s `webcrypto`, imported only
 * then, through a specifier bundlers do not follow.
 */
export declare function webCrypto(): Promise<Crypto>;
/** A fresh `Idempotency-Key`: a random UUID. */
export declare function newIdempotencyKey(): Promise<string>;
//# sourceMappingURL=crypto.d.ts.map