/**
 * Server-Sent Events parsed as the WHATWG HTML standard says (9.2.6, "Interpreting an event
 * stream"): lines end with CRLF, LF or CR; `:` starts a comment; the fields `event`,
 * `data` (lines joined with LF), `id` (kept across events, ignored with a NUL) and `retry`
 * (ASCII digits only); an event is dispatched only on a blank line, so the text after the
 * last blank line (an event cut by a dropped connection) is never dispatched.
 */
export interface SseEvent {
    /** `event:`, or "message" when none was given. */
    type: string;
    data: string;
    /** The last event ID as of this event (`id:` of this one or an earlier one). */
    id: string;
}
export declare class SseParser {
    /** The last event ID of the stream: what a reconnection sends as `Last-Event-ID`. */
    lastEventId: string;
    /** The reconnection time the server asked for (`retry:`), in ms, if any. */
    retryMs: number | undefined;
    private readonly decoder;
    private buffer;
    private afterCR;
    private firstChunk;
    private data;
    private eventType;
    private idBuffer;
    /** The events completed by `chunk` (bytes or text), in order. */
    push(chunk: Uint8Array | string): SseEvent[];
    private line;
    private dispatch;
}
//# sourceMappingURL=sse.d.ts.map