/**
 * The typed openapi-fetch client every request goes through: the base URL, the API key,
 * and the caller's `fetch` under the retry policy; `unwrap` turns its answer into the data
 * or the problem's exception.
 */
import createClient, {} from "openapi-fetch";
import { problemOf } from "./errors.js";
import { retryPolicy, retryingFetch, } from "./retry.js";
export function transport(options) {
    // Looked up at each request (a test or polyfill may replace it later); openapi-fetch's
    // second argument (Node's `requestInitExt`) goes along.
    const send = options.fetch ?? ((request, init) => globalThis.fetch(request, init));
    const headers = { ...options.headers };
    if (options.apiKey)
        headers["Authorization"] = `Bearer ${options.apiKey}`;
    const raw = createClient({
        baseUrl: options.baseUrl.replace(/\/+$/, ""),
        fetch: retryingFetch(send, options.retry),
        headers,
    });
    return { raw, policy: retryPolicy(options.retry) };
}
/** An openapi-fetch answer: its data, or (not 2xx) the problem's exception thrown. */
export async function unwrap(answer) {
    const { data, error, response } = await answer;
    if (!response.ok)
        throw problemOf(response, error);
    return data;
}
//# sourceMappingURL=transport.js.map