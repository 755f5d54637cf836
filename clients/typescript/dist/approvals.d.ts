/** Previews awaiting a decision: list, read, approve, reject, revise, commit. */
import type { KeyOptions, Runs } from "./runs.js";
import { type Transport } from "./transport.js";
import type { Commit, Preview, PreviewStatus, Run } from "./types.js";
export declare class Approvals {
    #private;
    constructor(transport: Transport, runs: Runs);
    /** Every preview in `status` (default `pending`), page after page. */
    list(options?: {
        status?: PreviewStatus | undefined;
    }): AsyncGenerator<Preview, void, undefined>;
    get(preview: Preview | string): Promise<Preview>;
    /**
     * The previews the run waits on (the run, or its id), read afresh: a run object's own
     * `pending_approvals` may be stale (decided, revised or committed since it was read).
     */
    pending(run: Run | string): Promise<Preview[]>;
    /**
     * Approves what the approver saw: the preview as read (its `content_hash` is sent), or
     * its id with the `content_hash` they reviewed. A preview changed since is refused.
     */
    approve(preview: Preview | string, contentHash?: string, options?: KeyOptions): Promise<Preview>;
    reject(preview: Preview | string, reason: string, options?: KeyOptions): Promise<Preview>;
    /** Replaces the call's arguments (the model is told why): the new preview, to approve in turn. */
    revise(preview: Preview | string, args: Record<string, unknown>, reason: string, options?: KeyOptions): Promise<Preview>;
    /**
     * Commits an approved preview (the call runs), then advances the run for up to `waitS`
     * seconds (the service's default 10): `{preview, call, run}`.
     */
    commit(preview: Preview | string, options?: KeyOptions & {
        waitS?: number | undefined;
    }): Promise<Commit>;
}
//# sourceMappingURL=approvals.d.ts.map