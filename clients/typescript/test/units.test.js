// The client's parts that need no server: the event-stream parser, the retry policy over a
// fake fetch, problems as exceptions, webhook signatures made here.
import assert from "node:assert/strict";
import { createHmac, randomBytes, webcrypto } from "node:crypto";
import { describe, test } from "node:test";

import {
  IdempotencyKeyInFlight,
  InvalidState,
  NotFound,
  PROBLEM_CLASSES,
  ProblemError,
  retryingFetch,
  SseParser,
  StreamBroken,
  Toolgate,
  Unavailable,
  ValidationError,
  verifyWebhook,
  VersionConflict,
  WebhookVerificationError,
} from "../dist/index.js";

describe("SseParser", () => {
  test("fields, comments, multi-line data, every line ending", () => {
    const parser = new SseParser();
    const events = parser.push(
      ': ping\n\nid: 1\nevent: run.created\ndata: {"a":\ndata: 1}\n\r\nid: 2\r\nevent: x\r\ndata:no space\r\r' +
        "retry: 2500\nretry: soon\ndata\n\n",
    );
    assert.deepEqual(events, [
      { type: "run.created", data: '{"a":\n1}', id: "1" },
      { type: "x", data: "no space", id: "2" },
      { type: "message", data: "", id: "2" },
    ]);
    assert.equal(parser.retryMs, 2500);
    assert.equal(parser.lastEventId, "2");
  });

  test("any split of the bytes, even inside a CRLF or a character, gives the same events", () => {
    const text = "id: 7\r\nevent: t\r\ndata: é€😀\r\n\r\n: c\r\nid: 8\ndata: b\n\n";
    const bytes = new TextEncoder().encode(text);
    const whole = new SseParser().push(bytes);
    assert.equal(whole.length, 2);
    for (let cut = 1; cut < bytes.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(bytes.slice(0, cut)), ...parser.push(bytes.slice(cut))];
      assert.deepEqual(events, whole, `cut at ${cut}`);
    }
  });

  test("an event cut before its blank line is never dispatched, nor its id taken", () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push("id: 1\ndata: one\n\nid: 2\ndata: tw"), [
      { type: "message", data: "one", id: "1" },
    ]);
    assert.equal(parser.lastEventId, "1");
    assert.deepEqual(parser.push("o\n"), []);
    assert.equal(parser.lastEventId, "1");
  });
});

function answer(status, body, headers = {}) {
  const json = body === undefined ? null : JSON.stringify(body);
  const type = status >= 400 ? "application/problem+json" : "application/json";
  return new Response(json, { status, headers: { "content-type": type, ...headers } });
}

function problem(status, code, extra = {}) {
  return {
    type: `https://toolgate.example/problems/${code}`,
    title: code,
    status,
    detail: `a ${code}`,
    code,
    ...extra,
  };
}

/** A fetch answering from `answers` (a Response, an Error to throw) and recording requests. */
function scripted(answers) {
  const sent = [];
  const fetch = async (request) => {
    sent.push({
      method: request.method,
      key: request.headers.get("idempotency-key"),
      body: await request.text(),
      at: Date.now(),
    });
    const next = answers.shift();
    if (next instanceof Error) throw next;
    return next;
  };
  return { fetch, sent };
}

describe("retryingFetch", () => {
  const fast = { baseDelayMs: 1, maxDelayMs: 5_000 };

  test("a GET is retried on 503, 429, 502, 504 and network errors, honouring Retry-After", async () => {
    const { fetch, sent } = scripted([
      answer(503, problem(503, "unavailable"), { "retry-after": "0" }),
      answer(429, problem(429, "rate-limited"), { "retry-after": "1" }),
      new TypeError("fetch failed"),
      answer(502, undefined),
      answer(200, { ok: true }),
    ]);
    const response = await retryingFetch(fetch, fast)(new Request("http://toolgate.test/v1/runs"));
    assert.equal(response.status, 200);
    assert.equal(sent.length, 5);
    // Date.now() may read a few ms early; the bound above is the 20% jitter, plus room for a
    // busy machine.
    const waited = sent[2].at - sent[1].at;
    assert.ok(waited >= 990 && waited < 5000, `waited ${waited} ms after Retry-After: 1`);
  });

  test("a POST is retried only with an Idempotency-Key, which every attempt carries", async () => {
    const bare = scripted([answer(503, problem(503, "unavailable")), answer(201, {})]);
    const post = { method: "POST", body: '{"a":1}' };
    const first = await retryingFetch(
      bare.fetch,
      fast,
    )(new Request("http://toolgate.test/v1/runs", post));
    assert.equal(first.status, 503);
    assert.equal(bare.sent.length, 1);

    const keyed = scripted([
      new TypeError("fetch failed"),
      answer(409, problem(409, "idempotency-key-in-flight")),
      answer(201, {}),
    ]);
    const request = new Request("http://toolgate.test/v1/runs", {
      ...post,
      headers: { "Idempotency-Key": "k1" },
    });
    const second = await retryingFetch(keyed.fetch, fast)(request);
    assert.equal(second.status, 201);
    assert.deepEqual(
      keyed.sent.map((s) => [s.key, s.body]),
      [
        ["k1", '{"a":1}'],
        ["k1", '{"a":1}'],
        ["k1", '{"a":1}'],
      ],
    );
  });

  test("an answer cut in the middle of its body is retried like a dropped connection", async () => {
    let sent = false;
    const cut = new ReadableStream({
      pull(controller) {
        if (sent) controller.error(new TypeError("terminated"));
        else controller.enqueue(new TextEncoder().encode('{"id": "r'));
        sent = true;
      },
    });
    const json = { "content-type": "application/json" };
    const { fetch, sent: attempts } = scripted([
      new Response(cut, { status: 200, headers: json }),
      answer(200, { id: "r1" }),
    ]);
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch, retry: fast });
    assert.deepEqual(await tg.runs.get("r1"), { id: "r1" });
    assert.equal(attempts.length, 2);
  });

  test("a 409 other than in-flight, and a 4xx, are answers: not retried", async () => {
    const { fetch, sent } = scripted([answer(409, problem(409, "invalid-state"))]);
    const request = new Request("http://toolgate.test/v1/runs/r/advance", {
      method: "POST",
      headers: { "Idempotency-Key": "k" },
    });
    const response = await retryingFetch(fetch, fast)(request);
    assert.equal(response.status, 409);
    assert.equal((await response.json()).code, "invalid-state");
    assert.equal(sent.length, 1);
  });

  test("in-flight answers take no attempt within inFlightMs; after it they count", async () => {
    const inFlight = () =>
      answer(409, problem(409, "idempotency-key-in-flight"), { "retry-after": "0" });
    const post = () =>
      new Request("http://toolgate.test/v1/runs", {
        method: "POST",
        headers: { "Idempotency-Key": "k" },
        body: "{}",
      });
    const waited = scripted([
      new TypeError("fetch failed"),
      inFlight(),
      inFlight(),
      inFlight(),
      answer(201, { id: "r1" }),
    ]);
    const response = await retryingFetch(waited.fetch, { ...fast, maxAttempts: 2 })(post());
    assert.equal(response.status, 201);
    assert.equal(waited.sent.length, 5);

    const late = scripted([new TypeError("fetch failed"), inFlight(), answer(201, {})]);
    const tg = new Toolgate({
      baseUrl: "http://toolgate.test",
      fetch: late.fetch,
      retry: { ...fast, maxAttempts: 2, inFlightMs: 0 },
    });
    await assert.rejects(tg.runs.create({ agent: "a", input: "x" }), IdempotencyKeyInFlight);
    assert.equal(late.sent.length, 2);
  });

  test("the caller's second argument (openapi-fetch's init) goes to every attempt", async () => {
    const inits = [];
    const answers = [answer(503, problem(503, "unavailable")), answer(200, {})];
    const fetch = async (_request, init) => {
      inits.push(init);
      return answers.shift();
    };
    const init = { dispatcher: "the caller's" };
    const response = await retryingFetch(fetch, fast)(
      new Request("http://toolgate.test/v1/runs"),
      init,
    );
    assert.equal(response.status, 200);
    assert.deepEqual(inits, [init, init]);
  });

  test("attempts are bounded; a Retry-After beyond maxDelayMs is thrown with retryAfterS", async () => {
    const busy = () => answer(503, problem(503, "unavailable"), { "retry-after": "0" });
    const bounded = scripted([busy(), busy(), busy()]);
    const tg = new Toolgate({
      baseUrl: "http://toolgate.test/",
      fetch: bounded.fetch,
      retry: { maxAttempts: 3 },
    });
    await assert.rejects(tg.runs.get("r1"), Unavailable);
    assert.equal(bounded.sent.length, 3);

    const later = scripted([answer(503, problem(503, "unavailable"), { "retry-after": "120" })]);
    const impatient = new Toolgate({
      baseUrl: "http://toolgate.test",
      fetch: later.fetch,
      retry: { maxDelayMs: 1000 },
    });
    const started = Date.now();
    await assert.rejects(
      impatient.runs.get("r1"),
      (error) => error instanceof Unavailable && error.retryAfterS === 120,
    );
    assert.equal(later.sent.length, 1);
    assert.ok(Date.now() - started < 500);
  });
});

describe("problems", () => {
  test("each code has its class; an unknown one is a ProblemError; members are kept", async () => {
    assert.equal(Object.keys(PROBLEM_CLASSES).length, 20);
    const { fetch } = scripted([
      answer(
        422,
        problem(422, "validation-error", {
          errors: [{ path: "agent", message: "unknown agent" }],
          trace_id: "t1",
        }),
      ),
      answer(409, problem(409, "version-conflict", { new_preview_id: "p2" })),
      answer(418, problem(418, "teapot")),
      new Response("<html>bad gateway</html>", {
        status: 400,
        headers: { "content-type": "text/html" },
      }),
    ]);
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", apiKey: "tg_x", fetch });
    const invalid = await tg.runs.create({ agent: "nobody", input: "x" }).catch((e) => e);
    assert.ok(invalid instanceof ValidationError && invalid instanceof ProblemError);
    assert.deepEqual(
      [invalid.status, invalid.code, invalid.traceId],
      [422, "validation-error", "t1"],
    );
    assert.deepEqual(invalid.errors, [{ path: "agent", message: "unknown agent" }]);
    const conflict = await tg.approvals.commit("p1").catch((e) => e);
    assert.ok(conflict instanceof VersionConflict);
    assert.equal(conflict.newPreviewId, "p2");
    const unknown = await tg.runs.get("r").catch((e) => e);
    assert.equal(unknown.constructor, ProblemError);
    assert.equal(unknown.code, "teapot");
    const page = await tg.runs.get("r").catch((e) => e);
    assert.equal(page.constructor, ProblemError);
    assert.equal(page.status, 400);
    assert.ok(!(page instanceof InvalidState));
  });

  test("approving a bare preview id needs the content hash the approver saw", async () => {
    const { fetch, sent } = scripted([]);
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch });
    await assert.rejects(tg.approvals.approve("p1"), /content_hash/);
    assert.equal(sent.length, 0);
  });
});

describe("runs and approvals", () => {
  const running = (version, status = "running") => ({
    id: "r1",
    status,
    version,
    pending_approvals: [],
  });
  /** A fetch answering by method and path from `routes` (Responses), recording what was sent. */
  const routed = (routes) => {
    const sent = [];
    const fetch = async (request) => {
      const path = new URL(request.url).pathname;
      const text = await request.text();
      sent.push({ method: request.method, path, body: text ? JSON.parse(text) : undefined });
      sent.at(-1).at = Date.now();
      return routes[`${request.method} ${path}`].shift();
    };
    return { fetch, sent };
  };

  test("createAndWait sends the same wait_s whatever time is left", async () => {
    const finished = () => answer(201, running(2, "finished"));
    const { fetch, sent } = routed({ "POST /v1/runs": [finished(), finished(), finished()] });
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch });
    const body = { agent: "a", input: "x" };
    await tg.runs.createAndWait(body, { idempotencyKey: "k" });
    await tg.runs.createAndWait(body, { idempotencyKey: "k", timeoutMs: 12_000 });
    await tg.runs.createAndWait({ ...body, wait_s: 4 }, { timeoutMs: 60_000 });
    assert.deepEqual(
      sent.map((s) => s.body.wait_s),
      [30, 12, 4],
    );
  });

  test("an advance answered at once with the run unchanged is followed by a pause", async () => {
    const { fetch, sent } = routed({
      "POST /v1/runs": [answer(201, running(1))],
      "POST /v1/runs/r1/advance": [answer(200, running(1)), answer(200, running(2, "finished"))],
    });
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch });
    const run = await tg.runs.createAndWait({ agent: "a", input: "x" });
    assert.equal(run.status, "finished");
    const [, first, second] = sent;
    assert.equal(second.path, "/v1/runs/r1/advance");
    assert.ok(second.at - first.at >= 490, `advanced again after ${second.at - first.at} ms`);
  });

  test("pending(run) reads the run afresh, not the run object's pending_approvals", async () => {
    const { fetch, sent } = routed({
      "GET /v1/runs/r1": [
        answer(200, {
          ...running(3, "awaiting_approval"),
          pending_approvals: [{ preview_id: "p2" }],
        }),
      ],
      "GET /v1/previews/p2": [answer(200, { id: "p2" })],
    });
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch });
    const stale = { ...running(2, "awaiting_approval"), pending_approvals: [{ preview_id: "p1" }] };
    const previews = await tg.approvals.pending(stale);
    assert.deepEqual(
      previews.map((p) => p.id),
      ["p2"],
    );
    assert.deepEqual(
      sent.map((s) => s.path),
      ["/v1/runs/r1", "/v1/previews/p2"],
    );
  });

  test("keys come from getRandomValues alone (a browser's plain-http page)", async () => {
    const original = Object.getOwnPropertyDescriptor(globalThis, "crypto");
    // What an insecure context has: no randomUUID, no subtle.
    const plain = {
      getRandomValues(array) {
        assert.equal(this, plain); // browsers refuse it called detached
        return webcrypto.getRandomValues(array);
      },
    };
    Object.defineProperty(globalThis, "crypto", { value: plain, configurable: true });
    try {
      const { fetch, sent } = scripted([answer(201, {}), answer(201, {})]);
      const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch });
      await tg.runs.create({ agent: "a", input: "x" });
      await tg.runs.cancel("r1");
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      assert.ok(sent.every((s) => uuid.test(s.key)), JSON.stringify(sent));
      assert.notEqual(sent[0].key, sent[1].key);
    } finally {
      Object.defineProperty(globalThis, "crypto", original);
    }
  });
});

describe("verifyWebhook", () => {
  const key = randomBytes(32);
  const secret = `whsec_${key.toString("base64")}`;
  const other = `whsec_${randomBytes(32).toString("base64")}`;
  const body = JSON.stringify({
    id: "e1",
    run_id: "r1",
    seq: 9,
    type: "run.finished",
    at: "2026-01-01T00:00:00Z",
    data: {},
  });
  const sign = (k, id, ts, payload) =>
    `v1,${createHmac("sha256", k).update(`${id}.${ts}.${payload}`).digest("base64")}`;
  const now = Math.floor(Date.now() / 1000);
  const headers = (signature, ts = now) => ({
    "Webhook-Id": "msg_1",
    "Webhook-Timestamp": String(ts),
    "Webhook-Signature": signature,
  });

  test("a signature of any of the secrets, among several signatures, verifies", async () => {
    const signatures = `v1,${randomBytes(32).toString("base64")} ${sign(key, "msg_1", now, body)}`;
    const event = await verifyWebhook(body, headers(signatures), [other, secret]);
    assert.equal(event.run_id, "r1");
    const asBytes = await verifyWebhook(
      new TextEncoder().encode(body),
      new Headers(headers(signatures)),
      secret,
    );
    assert.equal(asBytes.seq, 9);
  });

  test("a malformed secret among others is passed over; a signed body not JSON: refused", async () => {
    const good = sign(key, "msg_1", now, body);
    const event = await verifyWebhook(body, headers(good), ["whsec_not base64!", "", secret]);
    assert.equal(event.run_id, "r1");
    const text = "not json";
    await assert.rejects(
      verifyWebhook(text, headers(sign(key, "msg_1", now, text)), secret),
      (error) => error instanceof WebhookVerificationError && /not JSON/.test(error.message),
    );
  });

  test("a changed body, another secret, an old or future timestamp, no signature: refused", async () => {
    const good = sign(key, "msg_1", now, body);
    const refusals = [
      () => verifyWebhook(body.replace("r1", "r2"), headers(good), secret),
      () => verifyWebhook(body, headers(good), other),
      () => verifyWebhook(body, headers(sign(key, "msg_1", now - 600, body), now - 600), secret),
      () => verifyWebhook(body, headers(sign(key, "msg_1", now + 600, body), now + 600), secret),
      () => verifyWebhook(body, headers(good.replace("v1,", "v2,")), secret),
      () => verifyWebhook(body, { "webhook-id": "msg_1" }, secret),
    ];
    for (const refusal of refusals) await assert.rejects(refusal, WebhookVerificationError);
    // Only malformed secrets: refused all the same, not some other error.
    await assert.rejects(
      verifyWebhook(body, headers(good), ["whsec_%%%", ""]),
      WebhookVerificationError,
    );
    // Within the tolerance given.
    const late = await verifyWebhook(
      body,
      headers(sign(key, "msg_1", now - 600, body), now - 600),
      secret,
      { toleranceS: 900 },
    );
    assert.equal(late.type, "run.finished");
  });
});

/** A response streaming `parts` (strings), then ending, or failing as a cut connection does. */
function streamed(parts, { cut = false } = {}) {
  const encoder = new TextEncoder();
  const left = [...parts];
  const body = new ReadableStream({
    pull(controller) {
      if (left.length) controller.enqueue(encoder.encode(left.shift()));
      else if (cut) controller.error(new TypeError("terminated"));
      else controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
}

const frame = (seq, type = "step") =>
  `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, type })}\n\n`;

describe("event streams", () => {
  const recorded = (answers) => {
    const sent = [];
    const fetch = async (request) => {
      sent.push({
        url: request.url,
        lastEventId: request.headers.get("last-event-id"),
        accept: request.headers.get("accept"),
        at: Date.now(),
      });
      const next = answers.shift();
      if (next instanceof Error) throw next;
      return typeof next === "function" ? next(request) : next;
    };
    return { fetch, sent };
  };

  test("a cut stream is opened again after the last complete event: no gap, no repeat", async () => {
    const { fetch, sent } = recorded([
      streamed([frame(1), frame(2), 'id: 3\nevent: step\ndata: {"se'], { cut: true }),
      new TypeError("fetch failed"), // the retry policy tries again
      streamed([frame(3), "retry: 50\n\n"]), // an early end: opened again after 50 ms
      streamed([frame(4), frame(5, "run.finished"), frame(6)]),
    ]);
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch, retry: { baseDelayMs: 1 } });
    const events = [];
    for await (const event of tg.runs.events("r1", { stream: true, after: 0 })) events.push(event);
    assert.deepEqual(
      events.map((e) => e.seq),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(
      sent.map((s) => s.lastEventId),
      [null, "2", "2", "3"],
    );
    assert.ok(sent.every((s) => s.accept === "text/event-stream"));
    assert.ok(sent[3].at - sent[2].at >= 40); // retry: 50, read with Date.now()
  });

  test("a resumed stream starts from the last event, not from `after`; 204 ends it", async () => {
    const { fetch, sent } = recorded([streamed([frame(8)]), new Response(null, { status: 204 })]);
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch });
    const events = [];
    for await (const event of tg.runs.events("r1", { stream: true, after: 7 })) events.push(event);
    assert.deepEqual(
      events.map((e) => e.seq),
      [8],
    );
    assert.deepEqual(
      sent.map((s) => new URL(s.url).search),
      ["?after=7", ""],
    );
    assert.deepEqual(
      sent.map((s) => s.lastEventId),
      [null, "8"],
    );
  });

  test("short connections without an event, in a row, end in StreamBroken", async () => {
    const { fetch, sent } = recorded([
      streamed([frame(1)]),
      streamed([": ping\n\n"]),
      streamed([], { cut: true }),
      streamed([]),
    ]);
    const tg = new Toolgate({
      baseUrl: "http://toolgate.test",
      fetch,
      retry: { maxAttempts: 3, baseDelayMs: 1 },
    });
    const events = [];
    await assert.rejects(
      (async () => {
        for await (const event of tg.events.stream({ types: ["run.finished"] })) events.push(event);
      })(),
      (error) => error instanceof StreamBroken && error.lastEventId === "1",
    );
    assert.deepEqual(
      events.map((e) => e.seq),
      [1],
    );
    // The one with an event, then three failures: a ping alone, a cut, a clean early end.
    assert.equal(sent.length, 4);
    assert.equal(new URL(sent[0].url).searchParams.get("types"), "run.finished");
  });

  test("a problem answer is thrown; an abort ends the stream quietly", async () => {
    const gone = recorded([answer(404, problem(404, "not-found"))]);
    const tg = new Toolgate({ baseUrl: "http://toolgate.test", fetch: gone.fetch });
    await assert.rejects(tg.runs.events("nope", { stream: true }).next(), NotFound);

    const controller = new AbortController();
    const endless = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(frame(1)));
      },
    });
    const open = recorded([new Response(endless, { status: 200 })]);
    const live = new Toolgate({ baseUrl: "http://toolgate.test", fetch: open.fetch });
    const events = [];
    for await (const event of live.events.stream({ signal: controller.signal })) {
      events.push(event);
      setTimeout(() => controller.abort(), 10);
    }
    assert.deepEqual(
      events.map((e) => e.seq),
      [1],
    );
  });

  test("a connection open 5 s (steadyMs) is healthy without an event: its end is no failure", async () => {
    const { follow } = await import("../dist/events.js");
    /** A body that sends a ping, then ends after `ms`. */
    const quiet = (ms) =>
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(": ping\n\n"));
          setTimeout(() => c.close(), ms);
        },
      });
    let opened = 0;
    const open = async () => {
      opened += 1;
      if (opened <= 4) return quiet(30); // healthy: open longer than steadyMs
      if (opened === 5) return streamed([frame(1, "run.finished")]).body;
      return undefined;
    };
    const policy = { maxAttempts: 2, maxDelayMs: 1000, baseDelayMs: 1 };
    const events = [];
    for await (const event of follow(open, {
      policy,
      steadyMs: 20,
      isLast: (e) => e.type === "run.finished",
    }))
      events.push(event.id);
    assert.deepEqual(events, ["1"]);
    assert.equal(opened, 5);

    // The same pings on connections shorter than steadyMs: failures, two of them the end.
    let short = 0;
    const shortOpen = async () => {
      short += 1;
      return quiet(0);
    };
    await assert.rejects(
      (async () => {
        for await (const _ of follow(shortOpen, { policy, steadyMs: 5_000 }));
      })(),
      StreamBroken,
    );
    assert.equal(short, 2);
  });

  test("a silent connection is taken for dead and opened again", async () => {
    const { follow } = await import("../dist/events.js");
    const silent = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(frame(1)));
      },
    });
    const opened = [];
    const open = async (lastEventId) => {
      opened.push(lastEventId);
      return opened.length === 1 ? silent : streamed([frame(2, "run.finished")]).body;
    };
    const policy = { maxAttempts: 5, maxDelayMs: 1000, baseDelayMs: 1 };
    const events = [];
    for await (const event of follow(open, {
      policy,
      idleMs: 50,
      isLast: (e) => e.type === "run.finished",
    }))
      events.push(event.id);
    assert.deepEqual(events, ["1", "2"]);
    assert.deepEqual(opened, [undefined, "1"]);
  });
});
