/**
 * Webhook verification (Standard Webhooks): `webhook-signature` holds one or more
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` (several during a
 * secret rotation); the key is the secret after `whsec_`, base64-decoded. Checked with
 * WebCrypto (`crypto.subtle.verify`: constant time), the timestamp within a tolerance.
 * In a browser that means a secure context (https, localhost): elsewhere `verifyWebhook`
 * throws a `ToolgateError` saying so.
 */
import { subtleCrypto } from "./crypto.js";
import { WebhookVerificationError } from "./errors.js";
const encoder = new TextEncoder();
function header(headers, name) {
    if (typeof headers.get === "function")
        return headers.get(name) ?? undefined;
    for (const [key, value] of Object.entries(headers)) {
        if (key.toLowerCase() === name)
            return Array.isArray(value) ? value.join(", ") : value;
    }
    return undefined;
}
function base64Bytes(text) {
    try {
        const binary = atob(text);
        const bytes = new Uint8Array(binary.length);
        for (let i = 0; i < binary.length; i++)
            bytes[i] = binary.charCodeAt(i);
        return bytes;
    }
    catch {
        return undefined;
    }
}
/** A secret's key: the base64 after `whsec_`; undefined when it is not one (or not a string,
 * as an unset environment variable read from plain JavaScript is). */
function secretBytes(secret) {
    if (typeof secret !== "string")
        return undefined;
    const bytes = base64Bytes(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
    return bytes?.length ? bytes : undefined;
}
/**
 * The delivered event once its signature and timestamp verify against one of `secrets`
 * (`whsec_...`; malformed ones are passed over); else throws `WebhookVerificationError`,
 * also for a signed body that is not JSON. `payload` is the request's body exactly as
 * received (the raw bytes or text, not re-serialized JSON).
 */
export async function verifyWebhook(payload, headers, secret, options = {}) {
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    const signatures = header(headers, "webhook-signature");
    if (!id || !timestamp || !signatures) {
        throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
    }
    if (!/^[0-9]{1,15}$/.test(timestamp))
        throw new WebhookVerificationError("a webhook-timestamp that is not a time");
    const toleranceS = options.toleranceS ?? 300;
    const nowS = (options.now ?? Date.now()) / 1000;
    const skew = nowS - Number(timestamp);
    if (skew > toleranceS)
        throw new WebhookVerificationError("the webhook's timestamp is too old");
    if (-skew > toleranceS)
        throw new WebhookVerificationError("the webhook's timestamp is in the future");
    const body = typeof payload === "string" ? encoder.encode(payload) : payload;
    const prefix = encoder.encode(`${id}.${timestamp}.`);
    const signed = new Uint8Array(prefix.length + body.length);
    signed.set(prefix);
    signed.set(body, prefix.length);
    const offered = signatures
        .split(" ")
        .map((item) => item.split(","))
        .filter(([version, value]) => version === "v1" && value)
        .map(([, value]) => base64Bytes(value))
        .filter((bytes) => bytes !== undefined);
    const subtle = await subtleCrypto();
    // A malformed secret in the list (a rotation's half-pasted one) is passed over: the
    // others may still verify, and a refusal is said once, below.
    const keys = (typeof secret === "string" ? [secret] : Array.isArray(secret) ? secret : [])
        .map(secretBytes)
        .filter((bytes) => bytes !== undefined);
    for (const keyBytes of keys) {
        const key = await subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, [
            "verify",
        ]);
        for (const signature of offered) {
            if (await subtle.verify("HMAC", key, signature, signed))
                return parse(body);
        }
    }
    if (keys.length === 0)
        throw new WebhookVerificationError("no webhook secret given is base64 (whsec_...)");
    throw new WebhookVerificationError("no signature of the webhook matches its secret");
}
/** The verified body as JSON; a signed body that is not JSON is refused all the same. */
function parse(body) {
    try {
        return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    }
    catch (error) {
        throw new WebhookVerificationError("the webhook's body is not JSON", { cause: error });
    }
}
//# sourceMappingURL=webhooks.js.map