/** `Toolgate`: the client, one object per service address and key. */
import { Approvals } from "./approvals.js";
import { Webhooks } from "./endpoints.js";
import { Events } from "./feed.js";
import { Runs } from "./runs.js";
import { type RawClient, type ToolgateOptions } from "./transport.js";
export declare class Toolgate {
    readonly runs: Runs;
    readonly approvals: Approvals;
    /** The tenant's events, every run's. */
    readonly events: Events;
    readonly webhooks: Webhooks;
    /**
     * The typed openapi-fetch client, for any other operation: the same key, `fetch` and
     * retry policy. Its answers are `{data, error, response}`; it throws nothing itself, and
     * adds no `Idempotency-Key` (pass one to make a POST retry-safe).
     */
    readonly raw: RawClient;
    constructor(options: ToolgateOptions);
}
//# sourceMappingURL=client.d.ts.map