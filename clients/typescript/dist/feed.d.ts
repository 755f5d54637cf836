/** The tenant's events (`/v1/events`): every run's, in one feed with its own cursor (`id`). */
import { type Transport } from "./transport.js";
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
export declare class Events {
    #private;
    constructor(transport: Transport);
    /** The events recorded so far (after `after`), page after page. */
    list(options?: TenantEventsOptions): AsyncGenerator<TenantEvent, void, undefined>;
    /**
     * The events as they are committed, over Server-Sent Events (from `after`, an event's
     * `id`, when given; else from now), through dropped connections (opened again from the
     * last event seen), each once and in order, for as long as you iterate: it ends (quietly)
     * only when `signal` aborts.
     */
    stream(options?: TenantEventsOptions): AsyncGenerator<TenantEvent, void, undefined>;
}
//# sourceMappingURL=feed.d.ts.map