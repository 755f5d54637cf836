/**
 * The typed openapi-fetch client every request goes through: the base URL, the API key,
 * and the caller's `fetch` under the retry policy; `unwrap` turns its answer into the data
 * or the problem's exception.
 */
import { type Client } from "openapi-fetch";
import { type Fetch, type RetryOptions, type RetryPolicy } from "./retry.js";
import type { paths } from "./schema.js";
/** The openapi-fetch client for the service's operations (`Toolgate.raw`). */
export type RawClient = Client<paths>;
export interface ToolgateOptions {
    /** The service's address, e.g. `https://toolgate.example.com` (no `/v1`). */
    baseUrl: string;
    /** An API key (`tg_...`), sent as `Authorization: Bearer ...`. */
    apiKey?: string | undefined;
    /** The `fetch` to send with (default: the global one, looked up at each request). */
    fetch?: Fetch | undefined;
    retry?: RetryOptions | undefined;
    /** Headers for every request. */
    headers?: Record<string, string> | undefined;
}
export interface Transport {
    raw: RawClient;
    policy: RetryPolicy;
}
export declare function transport(options: ToolgateOptions): Transport;
/** An openapi-fetch answer: its data, or (not 2xx) the problem's exception thrown. */
export declare function unwrap<D>(answer: Promise<{
    data?: D;
    error?: unknown;
    response: Response;
}>): Promise<Exclude<D, undefined>>;
//# sourceMappingURL=transport.d.ts.map