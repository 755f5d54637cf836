/** Previews awaiting a decision: list, read, approve, reject, revise, commit. */

import { keyFor } from "./crypto.js";
import { ToolgateError } from "./errors.js";
import { PAGE_SIZE, pages } from "./pages.js";
import type { KeyOptions, Runs } from "./runs.js";
import { unwrap, type Transport } from "./transport.js";
import type { Commit, Preview, PreviewStatus, Run } from "./types.js";

function idOf(preview: Preview | string): string {
  return typeof preview === "string" ? preview : preview.id;
}

export class Approvals {
  readonly #t: Transport;
  readonly #runs: Runs;

  constructor(transport: Transport, runs: Runs) {
    this.#t = transport;
    this.#runs = runs;
  }

  /** Every preview in `status` (default `pending`), page after page. */
  list(
    options: { status?: PreviewStatus | undefined } = {},
  ): AsyncGenerator<Preview, void, undefined> {
    const query = { status: options.status, limit: PAGE_SIZE };
    return pages((cursor) =>
      unwrap(this.#t.raw.GET("/v1/approvals", { params: { query: { ...query, cursor } } })),
    );
  }

  async get(preview: Preview | string): Promise<Preview> {
    return unwrap(
      this.#t.raw.GET("/v1/previews/{preview_id}", {
        params: { path: { preview_id: idOf(preview) } },
      }),
    );
  }

  /**
   * The previews the run waits on (the run, or its id), read afresh: a run object's own
   * `pending_approvals` may be stale (decided, revised or committed since it was read).
   */
  async pending(run: Run | string): Promise<Preview[]> {
    const current = await this.#runs.get(run);
    return Promise.all(current.pending_approvals.map((pending) => this.get(pending.preview_id)));
  }

  /**
   * Approves what the approver saw: the preview as read (its `content_hash` is sent), or
   * its id with the `content_hash` they reviewed. A preview changed since is refused.
   */
  async approve(
    preview: Preview | string,
    contentHash?: string,
    options: KeyOptions = {},
  ): Promise<Preview> {
    const hash = contentHash ?? (typeof preview === "string" ? undefined : preview.content_hash);
    if (!hash) {
      throw new ToolgateError("approving a preview by its id needs the content_hash you saw");
    }
    const key = await keyFor(options.idempotencyKey);
    return unwrap(
      this.#t.raw.POST("/v1/previews/{preview_id}/approve", {
        params: { path: { preview_id: idOf(preview) }, header: { "Idempotency-Key": key } },
        body: { content_hash: hash },
        signal: options.signal,
      }),
    );
  }

  async reject(
    preview: Preview | string,
    reason: string,
    options: KeyOptions = {},
  ): Promise<Preview> {
    const key = await keyFor(options.idempotencyKey);
    return unwrap(
      this.#t.raw.POST("/v1/previews/{preview_id}/reject", {
        params: { path: { preview_id: idOf(preview) }, header: { "Idempotency-Key": key } },
        body: { reason },
        signal: options.signal,
      }),
    );
  }

  /** Replaces the call's arguments (the model is told why): the new preview, to approve in turn. */
  async revise(
    preview: Preview | string,
    args: Record<string, unknown>,
    reason: string,
    options: KeyOptions = {},
  ): Promise<Preview> {
    const key = await keyFor(options.idempotencyKey);
    const revised = await unwrap(
      this.#t.raw.POST("/v1/previews/{preview_id}/revise", {
        params: { path: { preview_id: idOf(preview) }, header: { "Idempotency-Key": key } },
        body: { arguments: args, reason },
        signal: options.signal,
      }),
    );
    return revised.preview;
  }

  /**
   * Commits an approved preview (the call runs), then advances the run for up to `waitS`
   * seconds (the service's default 10): `{preview, call, run}`.
   */
  async commit(
    preview: Preview | string,
    options: KeyOptions & { waitS?: number | undefined } = {},
  ): Promise<Commit> {
    const key = await keyFor(options.idempotencyKey);
    return unwrap(
      this.#t.raw.POST("/v1/previews/{preview_id}/commit", {
        params: { path: { preview_id: idOf(preview) }, header: { "Idempotency-Key": key } },
        ...(options.waitS === undefined ? {} : { body: { wait_s: options.waitS } }),
        signal: options.signal,
      }),
    );
  }
}
