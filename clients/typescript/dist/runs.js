/** Runs: create (and wait), read, advance, cancel, list, and their timelines. */
import { keyFor } from "./crypto.js";
import { InvalidState, WaitTimeout } from "./errors.js";
import { follow, streamBody } from "./events.js";
import { PAGE_SIZE, pages } from "./pages.js";
import { sleep } from "./retry.js";
import { unwrap } from "./transport.js";
/** The most a request may ask the service to wait for a run (`wait_s`, 0..30). */
const MAX_WAIT_S = 30;
/** The pause before advancing again a run that an advance answered at once, unchanged. */
const STILL_PAUSE_MS = 500;
/** Whether the run goes on by itself (not finished, not waiting for people). */
export function isMoving(run) {
    return run.status === "queued" || run.status === "running";
}
function idOf(run) {
    return typeof run === "string" ? run : run.id;
}
/** How long the next request may wait for the run, in seconds: undefined once it is over. */
function waitSlice(deadline) {
    if (deadline === undefined)
        return MAX_WAIT_S;
    const leftS = (deadline - Date.now()) / 1000;
    return leftS <= 0 ? undefined : Math.min(MAX_WAIT_S, leftS);
}
function deadlineOf(timeoutMs) {
    return timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
}
export class Runs {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    /**
     * Creates a run and answers it as it stands after up to `body.wait_s` (the service's
     * default 10). The client's retries send the same Idempotency-Key, so they answer the
     * same run; pass your own `idempotencyKey` to make a retry after your process restarts
     * answer it too.
     */
    async create(body, options = {}) {
        const key = await keyFor(options.idempotencyKey);
        return unwrap(this.#t.raw.POST("/v1/runs", {
            params: { header: { "Idempotency-Key": key } },
            body,
            signal: options.signal,
        }));
    }
    /**
     * Creates a run and waits until it is `finished` or `awaiting_approval` (people decide
     * then), advancing it meanwhile. The create asks for the same `wait_s` every time (the
     * body's, else `timeoutMs` up to 30 s, else 30 s), never the time left: the body is part of
     * what an `idempotencyKey` stands for, and a retry after your process restarts must send
     * the same one. The advances that follow keep to the deadline.
     */
    async createAndWait(body, options = {}) {
        const deadline = deadlineOf(options.timeoutMs);
        const waitS = body.wait_s ??
            (options.timeoutMs === undefined
                ? MAX_WAIT_S
                : Math.min(MAX_WAIT_S, Math.max(0, options.timeoutMs) / 1000));
        const run = await this.create({ ...body, wait_s: waitS }, options);
        return this.#settle(run, deadline, options.signal);
    }
    /** The run once it is `finished` or `awaiting_approval` (advancing it needs the caller role). */
    async wait(run, options = {}) {
        const deadline = deadlineOf(options.timeoutMs);
        return this.#settle(await this.get(run, options), deadline, options.signal);
    }
    async #settle(run, deadline, signal) {
        while (isMoving(run)) {
            const waitS = waitSlice(deadline);
            if (waitS === undefined)
                throw new WaitTimeout(run);
            const asked = Date.now();
            let next;
            try {
                next = await this.advance(run, { waitS, signal });
            }
            catch (error) {
                // It stopped moving meanwhile (finished, or parked for an approval).
                if (!(error instanceof InvalidState))
                    throw error;
                next = await this.get(run, { signal });
            }
            // Answered at once with nothing changed (the service would not wait, or the run's
            // step is another process's): pause rather than ask again in a tight loop.
            const quick = Date.now() - asked < STILL_PAUSE_MS;
            if (isMoving(next) && next.version === run.version && quick) {
                const left = deadline === undefined ? STILL_PAUSE_MS : deadline - Date.now();
                await sleep(Math.max(0, Math.min(STILL_PAUSE_MS, left)), signal);
            }
            run = next;
        }
        return run;
    }
    async get(run, options = {}) {
        return unwrap(this.#t.raw.GET("/v1/runs/{run_id}", {
            params: { path: { run_id: idOf(run) } },
            signal: options.signal,
        }));
    }
    /** Advances a queued or running run for up to `waitS` seconds (0..30): the run then. */
    async advance(run, options = {}) {
        const key = await keyFor(options.idempotencyKey);
        return unwrap(this.#t.raw.POST("/v1/runs/{run_id}/advance", {
            params: { path: { run_id: idOf(run) }, header: { "Idempotency-Key": key } },
            body: options.waitS === undefined ? {} : { wait_s: options.waitS },
            signal: options.signal,
        }));
    }
    async cancel(run, options = {}) {
        const key = await keyFor(options.idempotencyKey);
        return unwrap(this.#t.raw.POST("/v1/runs/{run_id}/cancel", {
            params: { path: { run_id: idOf(run) }, header: { "Idempotency-Key": key } },
            signal: options.signal,
        }));
    }
    /** Every run the query selects (newest first), page after page. */
    list(query = {}) {
        const params = { limit: PAGE_SIZE, ...query };
        return pages((cursor) => unwrap(this.#t.raw.GET("/v1/runs", { params: { query: { ...params, cursor } } })));
    }
    /** Every call of the run, page after page. */
    calls(run) {
        const path = { run_id: idOf(run) };
        return pages((cursor) => unwrap(this.#t.raw.GET("/v1/runs/{run_id}/calls", {
            params: { path, query: { limit: PAGE_SIZE, cursor } },
        })));
    }
    /**
     * The run's timeline after `after`. With `stream: true`, as it happens (Server-Sent
     * Events) until `run.finished`: a dropped connection is opened again from the last event
     * seen (`Last-Event-ID`), so no event is missed or repeated; it ends quietly when `signal`
     * aborts. Without it, the events recorded so far, page after page.
     */
    events(run, options = {}) {
        const path = { run_id: idOf(run) };
        const after = options.after || undefined;
        if (options.stream)
            return this.#stream(path, after, options.signal);
        return pages((cursor) => unwrap(this.#t.raw.GET("/v1/runs/{run_id}/events", {
            params: { path, query: { after, limit: PAGE_SIZE, cursor } },
            signal: options.signal,
        })));
    }
    async *#stream(path, after, signal) {
        const raw = this.#t.raw;
        // Resuming, the last event seen says more than where the stream began.
        const open = (lastEventId, signal) => streamBody(raw.GET("/v1/runs/{run_id}/events", {
            params: {
                path,
                query: lastEventId === undefined ? { after } : {},
                header: lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId },
            },
            headers: { Accept: "text/event-stream" },
            parseAs: "stream",
            signal,
        }));
        const events = follow(open, {
            signal,
            policy: this.#t.policy,
            isLast: (event) => event.type === "run.finished",
        });
        for await (const event of events)
            yield JSON.parse(event.data);
    }
}
//# sourceMappingURL=runs.js.map