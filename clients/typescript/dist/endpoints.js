/** Webhook endpoints (admin): register, list, delete, rotate the secret, deliveries. */
import { keyFor } from "./crypto.js";
import { PAGE_SIZE, pages } from "./pages.js";
import { unwrap } from "./transport.js";
import { verifyWebhook } from "./webhooks.js";
export class Webhooks {
    /** `tg.webhooks.verify(body, headers, secret)`: `verifyWebhook`, a delivery checked before use. */
    verify = verifyWebhook;
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    /** Registers an endpoint: the answer shows its signing `secret`, the only one that does. */
    async create(body, options = {}) {
        const key = await keyFor(options.idempotencyKey);
        return unwrap(this.#t.raw.POST("/v1/webhooks", {
            params: { header: { "Idempotency-Key": key } },
            body,
            signal: options.signal,
        }));
    }
    list() {
        return pages((cursor) => unwrap(this.#t.raw.GET("/v1/webhooks", { params: { query: { limit: PAGE_SIZE, cursor } } })));
    }
    async delete(webhookId) {
        await unwrap(this.#t.raw.DELETE("/v1/webhooks/{webhook_id}", {
            params: { path: { webhook_id: webhookId } },
        }));
    }
    /** A new signing secret; the previous one still signs until `previous_secret_expires_at`. */
    async rotate(webhookId, options = {}) {
        const key = await keyFor(options.idempotencyKey);
        return unwrap(this.#t.raw.POST("/v1/webhooks/{webhook_id}/rotate", {
            params: { path: { webhook_id: webhookId }, header: { "Idempotency-Key": key } },
            signal: options.signal,
        }));
    }
    /** The endpoint's deliveries, page after page. */
    deliveries(webhookId) {
        return pages((cursor) => unwrap(this.#t.raw.GET("/v1/webhooks/{webhook_id}/deliveries", {
            params: { path: { webhook_id: webhookId }, query: { limit: PAGE_SIZE, cursor } },
        })));
    }
}
//# sourceMappingURL=endpoints.js.map