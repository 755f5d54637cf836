/** Webhook endpoints (admin): register, list, delete, rotate the secret, deliveries. */

import { keyFor } from "./crypto.js";
import { PAGE_SIZE, pages } from "./pages.js";
import type { KeyOptions } from "./runs.js";
import { unwrap, type Transport } from "./transport.js";
import type { CreateWebhook, Delivery, Webhook, WebhookWithSecret } from "./types.js";
import { verifyWebhook } from "./webhooks.js";

export class Webhooks {
  /** `tg.webhooks.verify(body, headers, secret)`: `verifyWebhook`, a delivery checked before use. */
  readonly verify = verifyWebhook;

  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Registers an endpoint: the answer shows its signing `secret`, the only one that does. */
  async create(body: CreateWebhook, options: KeyOptions = {}): Promise<WebhookWithSecret> {
    const key = await keyFor(options.idempotencyKey);
    return unwrap(
      this.#t.raw.POST("/v1/webhooks", {
        params: { header: { "Idempotency-Key": key } },
        body,
        signal: options.signal,
      }),
    );
  }

  list(): AsyncGenerator<Webhook, void, undefined> {
    return pages((cursor) =>
      unwrap(this.#t.raw.GET("/v1/webhooks", { params: { query: { limit: PAGE_SIZE, cursor } } })),
    );
  }

  async delete(webhookId: string): Promise<void> {
    await unwrap(
      this.#t.raw.DELETE("/v1/webhooks/{webhook_id}", {
        params: { path: { webhook_id: webhookId } },
      }),
    );
  }

  /** A new signing secret; the previous one still signs until `previous_secret_expires_at`. */
  async rotate(webhookId: string, options: KeyOptions = {}): Promise<WebhookWithSecret> {
    const key = await keyFor(options.idempotencyKey);
    return unwrap(
      this.#t.raw.POST("/v1/webhooks/{webhook_id}/rotate", {
        params: { path: { webhook_id: webhookId }, header: { "Idempotency-Key": key } },
        signal: options.signal,
      }),
    );
  }

  /** The endpoint's deliveries, page after page. */
  deliveries(webhookId: string): AsyncGenerator<Delivery, void, undefined> {
    return pages((cursor) =>
      unwrap(
        this.#t.raw.GET("/v1/webhooks/{webhook_id}/deliveries", {
          params: { path: { webhook_id: webhookId }, query: { limit: PAGE_SIZE, cursor } },
        }),
      ),
    );
  }
}
