/** The tenant's events (`/v1/events`): every run's, in one feed with its own cursor (`id`). */
import { follow, streamBody } from "./events.js";
import { PAGE_SIZE, pages } from "./pages.js";
import { unwrap } from "./transport.js";
export class Events {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    #query(options) {
        return {
            types: options.types?.length ? options.types.join(",") : undefined,
            run_id: options.runId,
            after: options.after,
        };
    }
    /** The events recorded so far (after `after`), page after page. */
    list(options = {}) {
        const query = { ...this.#query(options), limit: PAGE_SIZE };
        return pages((cursor) => unwrap(this.#t.raw.GET("/v1/events", {
            params: { query: { ...query, cursor } },
            signal: options.signal,
        })));
    }
    /**
     * The events as they are committed, over Server-Sent Events (from `after`, an event's
     * `id`, when given; else from now), through dropped connections (opened again from the
     * last event seen), each once and in order, for as long as you iterate: it ends (quietly)
     * only when `signal` aborts.
     */
    async *stream(options = {}) {
        const raw = this.#t.raw;
        const query = this.#query(options);
        // Resuming, the last event seen says more than where the stream began.
        const open = (lastEventId, signal) => streamBody(raw.GET("/v1/events", {
            params: {
                query: lastEventId === undefined ? query : { ...query, after: undefined },
                header: lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId },
            },
            headers: { Accept: "text/event-stream" },
            parseAs: "stream",
            signal,
        }));
        const events = follow(open, { signal: options.signal, policy: this.#t.policy });
        for await (const event of events)
            yield JSON.parse(event.data);
    }
}
//# sourceMappingURL=feed.js.map