/**
 * WebCrypto, wherever the client runs: `globalThis.crypto` in browsers and Node 19+; on
 * Node 18 (where it is not a global by default) `node:crypto`'s `webcrypto`, imported only
 * then, through a specifier bundlers do not follow.
 */
let nodeCrypto;
export function webCrypto() {
    const global = globalThis.crypto;
    if (global?.subtle && typeof global.randomUUID === "function")
        return Promise.resolve(global);
    nodeCrypto ??= (async () => {
        const specifier = "node:crypto";
        try {
            const module = (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier));
            if (module.webcrypto?.subtle)
                return module.webcrypto;
        }
        catch {
            // not Node: fall through
        }
        throw new Error("no WebCrypto here: Toolgate's client needs crypto.subtle and crypto.randomUUID");
    })();
    return nodeCrypto;
}
/** A fresh `Idempotency-Key`: a random UUID. */
export async function newIdempotencyKey() {
    return (await webCrypto()).randomUUID();
}
//# sourceMappingURL=crypto.js.map