/** Runs: create (and wait), read, advance, cancel, list, and their timelines. */
import { type Transport } from "./transport.js";
import type { Call, CreateRun, ListRunsQuery, Run, RunEvent } from "./types.js";
export interface KeyOptions {
    /** The request's `Idempotency-Key` (default: a fresh random one, reused by the retries). */
    idempotencyKey?: string | undefined;
    signal?: AbortSignal | undefined;
}
export interface WaitOptions {
    /** Give up (with `WaitTimeout`, holding the run) after this long, in ms; without it the
     * run's own deadline bounds the wait. */
    timeoutMs?: number | undefined;
    signal?: AbortSignal | undefined;
}
export interface RunEventsOptions {
    /** Server-Sent Events, followed live until `run.finished` (else the recorded pages). */
    stream?: boolean | undefined;
    /** Only the events after this seq. */
    after?: number | undefined;
    signal?: AbortSignal | undefined;
}
/** Whether the run goes on by itself (not finished, not waiting for people). */
export declare function isMoving(run: Run): boolean;
export declare class Runs {
    #private;
    constructor(transport: Transport);
    /**
     * Creates a run and answers it as it stands after up to `body.wait_s` (the service's
     * default 10). The client's retries send the same Idempotency-Key, so they answer the
     * same run; pass your own `idempotencyKey` to make a retry after your process restarts
     * answer it too.
     */
    create(body: CreateRun, options?: KeyOptions): Promise<Run>;
    /**
     * Creates a run and waits until it is `finished` or `awaiting_approval` (people decide
     * then), advancing it meanwhile. The create asks for the same `wait_s` every time (the
     * body's, else `timeoutMs` up to 30 s, else 30 s), never the time left: the body is part of
     * what an `idempotencyKey` stands for, and a retry after your process restarts must send
     * the same one. The advances that follow keep to the deadline.
     */
    createAndWait(body: CreateRun, options?: KeyOptions & WaitOptions): Promise<Run>;
    /** The run once it is `finished` or `awaiting_approval` (advancing it needs the caller role). */
    wait(run: Run | string, options?: WaitOptions): Promise<Run>;
    get(run: Run | string, options?: {
        signal?: AbortSignal | undefined;
    }): Promise<Run>;
    /** Advances a queued or running run for up to `waitS` seconds (0..30): the run then. */
    advance(run: Run | string, options?: KeyOptions & {
        waitS?: number | undefined;
    }): Promise<Run>;
    cancel(run: Run | string, options?: KeyOptions): Promise<Run>;
    /** Every run the query selects (newest first), page after page. */
    list(query?: ListRunsQuery): AsyncGenerator<Run, void, undefined>;
    /** Every call of the run, page after page. */
    calls(run: Run | string): AsyncGenerator<Call, void, undefined>;
    /**
     * The run's timeline after `after`. With `stream: true`, as it happens (Server-Sent
     * Events) until `run.finished`: a dropped connection is opened again from the last event
     * seen (`Last-Event-ID`), so no event is missed or repeated; it ends quietly when `signal`
     * aborts. Without it, the events recorded so far, page after page.
     */
    events(run: Run | string, options?: RunEventsOptions): AsyncGenerator<RunEvent, void, undefined>;
}
//# sourceMappingURL=runs.d.ts.map