/** Webhook endpoints (admin): register, list, delete, rotate the secret, deliveries. */
import type { KeyOptions } from "./runs.js";
import { type Transport } from "./transport.js";
import type { CreateWebhook, Delivery, Webhook, WebhookWithSecret } from "./types.js";
import { verifyWebhook } from "./webhooks.js";
export declare class Webhooks {
    #private;
    /** `tg.webhooks.verify(body, headers, secret)`: `verifyWebhook`, a delivery checked before use. */
    readonly verify: typeof verifyWebhook;
    constructor(transport: Transport);
    /** Registers an endpoint: the answer shows its signing `secret`, the only one that does. */
    create(body: CreateWebhook, options?: KeyOptions): Promise<WebhookWithSecret>;
    list(): AsyncGenerator<Webhook, void, undefined>;
    delete(webhookId: string): Promise<void>;
    /** A new signing secret; the previous one still signs until `previous_secret_expires_at`. */
    rotate(webhookId: string, options?: KeyOptions): Promise<WebhookWithSecret>;
    /** The endpoint's deliveries, page after page. */
    deliveries(webhookId: string): AsyncGenerator<Delivery, void, undefined>;
}
//# sourceMappingURL=endpoints.d.ts.map