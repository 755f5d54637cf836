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

export class SseParser {
  /** The last event ID of the stream: what a reconnection sends as `Last-Event-ID`. */
  lastEventId = "";
  /** The reconnection time the server asked for (`retry:`), in ms, if any. */
  retryMs: number | undefined;

  private readonly decoder = new TextDecoder("utf-8");
  private buffer = "";
  private afterCR = false;
  private firstChunk = true;
  private data: string[] = [];
  private eventType = "";
  private idBuffer = "";

  /** The events completed by `chunk` (bytes or text), in order. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.firstChunk && text.length > 0) {
      this.firstChunk = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      const line = this.buffer + text.slice(start, i);
      this.buffer = "";
      start = i + 1;
      // An LF right after a CR ends nothing: CRLF is one line end.
      if (c === 0x0a && this.afterCR && line === "") {
        this.afterCR = false;
        continue;
      }
      this.afterCR = c === 0x0d;
      const event = this.line(line);
      if (event) events.push(event);
    }
    if (start < text.length) {
      this.buffer += text.slice(start);
      this.afterCR = false;
    }
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.idBuffer = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    this.lastEventId = this.idBuffer;
    if (this.data.length === 0) {
      this.eventType = "";
      return undefined;
    }
    const event = {
      type: this.eventType || "message",
      data: this.data.join("\n"),
      id: this.lastEventId,
    };
    this.data = [];
    this.eventType = "";
    return event;
  }
}
