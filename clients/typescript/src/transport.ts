/**
 * The typed openapi-fetch client every request goes through: the base URL, the API key,
 * and the caller's `fetch` under the retry policy; `unwrap` turns its answer into the data
 * or the problem's exception.
 */

import createClient, { type Client } from "openapi-fetch";

import { problemOf } from "./errors.js";
import {
  retryPolicy,
  retryingFetch,
  type Fetch,
  type RetryOptions,
  type RetryPolicy,
} from "./retry.js";
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

export function transport(options: ToolgateOptions): Transport {
  // Looked up at each request (a test or polyfill may replace it later); openapi-fetch's
  // second argument (Node's `requestInitExt`) goes along.
  const send: Fetch = options.fetch ?? ((request, init) => globalThis.fetch(request, init));
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers["Authorization"] = `Bearer ${options.apiKey}`;
  const raw = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: retryingFetch(send, options.retry),
    headers,
  });
  return { raw, policy: retryPolicy(options.retry) };
}

/** An openapi-fetch answer: its data, or (not 2xx) the problem's exception thrown. */
export async function unwrap<D>(
  answer: Promise<{ data?: D; error?: unknown; response: Response }>,
): Promise<Exclude<D, undefined>> {
  const { data, error, response } = await answer;
  if (!response.ok) throw problemOf(response, error);
  return data as Exclude<D, undefined>;
}
