/** The tenant's events (`/v1/events`): every run's, in one feed with its own cursor (`id`). */

import { follow, streamBody } from "./events.js";
import { PAGE_SIZE, pages, type Page } from "./pages.js";
import { unwrap, type Transport } from "./transport.js";
import type { EventType, TenantEvent } from "./types.js";

export interface TenantEventsOptions {
  /** Only these event types. */
  types?: readonly EventType[] | undefined;
  /** Only this run's events. */
  runId?: string | undefined;
  /** Only the events after this one (an event's `id`). */
  after?: string | undefined;
  signal?: AbortSignal | undefined;
}

export class Events {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  #query(options: TenantEventsOptions) {
    return {
      types: options.types?.length ? options.types.join(",") : undefined,
      run_id: options.runId,
      after: options.after,
    };
  }

  /** The events recorded so far (after `after`), page after page. */
  list(options: TenantEventsOptions = {}): AsyncGenerator<TenantEvent, void, undefined> {
    const query = { ...this.#query(options), limit: PAGE_SIZE };
    return pages(
      (cursor) =>
        unwrap(
          this.#t.raw.GET("/v1/events", {
            params: { query: { ...query, cursor } },
            signal: options.signal,
          }),
        ) as Promise<Page<TenantEvent>>, // the JSON form (not the stream's text)
    );
  }

  /**
   * The events as they are committed, over Server-Sent Events (from `after`, an event's
   * `id`, when given; else from now), through dropped connections (opened again from the
   * last event seen), each once and in order, for as long as you iterate: it ends (quietly)
   * only when `signal` aborts.
   */
  async *stream(options: TenantEventsOptions = {}): AsyncGenerator<TenantEvent, void, undefined> {
    const raw = this.#t.raw;
    const query = this.#query(options);
    // Resuming, the last event seen says more than where the stream began.
    const open = (lastEventId: string | undefined, signal: AbortSignal) =>
      streamBody(
        raw.GET("/v1/events", {
          params: {
            query: lastEventId === undefined ? query : { ...query, after: undefined },
            header: lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId },
          },
          headers: { Accept: "text/event-stream" },
          parseAs: "stream",
          signal,
        }),
      );
    const events = follow(open, { signal: options.signal, policy: this.#t.policy });
    for await (const event of events) yield JSON.parse(event.data) as TenantEvent;
  }
}
