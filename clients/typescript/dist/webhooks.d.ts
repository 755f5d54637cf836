/**
 * Webhook verification (Standard Webhooks): `webhook-signature` holds one or more
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` (several during a
 * secret rotation); the key is the secret after `whsec_`, base64-decoded. Checked with
 * WebCrypto (`crypto.subtle.verify`: constant time), the timestamp within a tolerance.
 * In a browser that means a secure context (https, localhost): elsewhere `verifyWebhook`
 * throws a `ToolgateError` saying so.
 */
import type { WebhookEvent } from "./types.js";
export interface VerifyOptions {
    /** How far the timestamp may be from now, in seconds (default 300). */
    toleranceS?: number | undefined;
    /** The time to check against, in ms since the epoch (default: now). */
    now?: number | undefined;
}
/**
 * The delivered event once its signature and timestamp verify against one of `secrets`
 * (`whsec_...`; malformed ones are passed over); else throws `WebhookVerificationError`,
 * also for a signed body that is not JSON. `payload` is the request's body exactly as
 * received (the raw bytes or text, not re-serialized JSON).
 */
export declare function verifyWebhook(payload: string | Uint8Array, headers: Headers | Record<string, string | string[] | undefined>, secret: string | readonly string[], options?: VerifyOptions): Promise<WebhookEvent>;
//# sourceMappingURL=webhooks.d.ts.map