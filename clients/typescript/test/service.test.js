// The client against a real service: tests/integration/test_typescript_client.py starts it
// (tests/support/client_service.py) and says where it is in TOOLGATE_* variables.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { test } from "node:test";

import {
  InvalidState,
  NotFound,
  Toolgate,
  ToolgateError,
  ValidationError,
  verifyWebhook,
  WebhookVerificationError,
} from "../dist/index.js";

const env = process.env;
const skip = env.TOOLGATE_URL
  ? false
  : "no service: run tests/integration/test_typescript_client.py";
const options = { skip, timeout: 30_000 };

const BASE_URL = env.TOOLGATE_URL;
const CALLER = env.TOOLGATE_CALLER_KEY;
const APPROVER = env.TOOLGATE_APPROVER_KEY;
const ADMIN = env.TOOLGATE_ADMIN_KEY;

const client = (apiKey, more = {}) => new Toolgate({ baseUrl: BASE_URL, apiKey, ...more });

const SEARCH = {
  type: "tool_calls",
  calls: [{ id: "c1", name: "search_technologies", arguments: { query: "database" } }],
};
const final = (text) => ({ type: "final", text });
/** A run of the tech-radar agent on its scripted model, tagged for this test alone. */
const runBody = (script, more = {}) => ({
  agent: "tech-radar",
  input: "Which database should we use?",
  metadata: { test: randomUUID() },
  script,
  ...more,
});

async function eventually(find, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found) return found;
    if (Date.now() > until) throw new Error("not in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function collect(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}

test(
  "createAndWait runs to a final answer; problem answers are their classes",
  options,
  async () => {
    const tg = client(CALLER);
    const run = await tg.runs.createAndWait(runBody([SEARCH, final("PostgreSQL [source:s1]")]));
    assert.equal(run.status, "finished");
    assert.equal(run.termination_reason, "final");
    assert.match(run.output.text, /PostgreSQL/);
    assert.equal((await tg.runs.get(run.id)).status, "finished");

    const events = await collect(tg.runs.events(run.id));
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
    );
    assert.equal(events.at(-1).type, "run.finished");
    const calls = await collect(tg.runs.calls(run.id));
    assert.deepEqual(
      calls.map((c) => c.tool),
      ["search_technologies"],
    );
    const listed = await collect(tg.runs.list({ agent: "tech-radar", limit: 1 }));
    assert.ok(listed.some((r) => r.id === run.id));

    await assert.rejects(
      tg.runs.create({ agent: "no-such-agent", input: "Which database?" }),
      (error) =>
        error instanceof ValidationError &&
        error.status === 422 &&
        error.code === "validation-error" &&
        error.errors.some((e) => e.path === "agent"),
    );
    await assert.rejects(tg.runs.advance(run.id, { waitS: 0 }), InvalidState);
    await assert.rejects(tg.runs.get("no-such-run"), NotFound);
  },
);

test(
  "a run parks for an approval; approved and committed through the client, it finishes",
  options,
  async () => {
    const caller = client(CALLER);
    const approver = client(APPROVER);
    const move = {
      type: "tool_calls",
      calls: [
        {
          id: "m1",
          name: "move_technology_ring",
          arguments: { technology_id: env.TOOLGATE_KAFKA_ID, ring: "adopt", rationale: "proven" },
        },
      ],
    };
    const run = await caller.runs.createAndWait(runBody([move, final("Kafka moved to adopt.")]));
    assert.equal(run.status, "awaiting_approval");
    assert.equal(run.pending_approvals.length, 1);

    const listed = (await collect(approver.approvals.list())).filter((p) => p.run_id === run.id);
    assert.equal(listed.length, 1);
    const preview = await approver.approvals.get(listed[0].id);
    assert.equal(preview.tool, "move_technology_ring");
    assert.equal(preview.status, "pending");
    assert.deepEqual(
      (await approver.approvals.pending(run.id)).map((p) => p.id),
      [preview.id],
    );

    // An id alone is not enough: the approver approves what they saw.
    await assert.rejects(approver.approvals.approve(preview.id), ToolgateError);
    const approved = await approver.approvals.approve(preview);
    assert.equal(approved.status, "approved");

    const committed = await caller.approvals.commit(preview.id);
    assert.equal(committed.preview.status, "committed");
    assert.equal(committed.call.tool, "move_technology_ring");
    const done = await caller.runs.wait(run.id);
    assert.equal(done.status, "finished");
    assert.equal(done.termination_reason, "final");
    assert.equal(done.output.text, "Kafka moved to adopt.");
  },
);

test("a retried create answers the same run, never a second one", options, async () => {
  const seen = [];
  const recording = async (request) => {
    const response = await fetch(request);
    seen.push({
      key: request.headers.get("idempotency-key"),
      replayed: response.headers.get("idempotent-replayed"),
    });
    return response;
  };
  const tg = client(CALLER, { fetch: recording });
  const body = runBody([final("PostgreSQL.")]);
  const key = `ts-${randomUUID()}`;
  const first = await tg.runs.create(body, { idempotencyKey: key });
  const again = await tg.runs.create(body, { idempotencyKey: key });
  assert.equal(again.id, first.id);
  assert.deepEqual(seen, [
    { key, replayed: null },
    { key, replayed: "true" },
  ]);

  // The first answer is lost on the way back (the server made the run): the client's own
  // retry sends the same key and gets that run.
  const attempts = [];
  const lossy = async (request) => {
    const response = await fetch(request);
    attempts.push({ key: request.headers.get("idempotency-key"), status: response.status });
    if (attempts.length === 1) {
      attempts[0].runId = (await response.json()).id;
      throw new TypeError("fetch failed: the connection dropped before the answer");
    }
    return response;
  };
  const flaky = client(CALLER, { fetch: lossy, retry: { baseDelayMs: 50 } });
  const lost = runBody([final("PostgreSQL.")]);
  const run = await flaky.runs.create(lost);
  assert.equal(attempts.length, 2);
  assert.ok(attempts[0].key);
  assert.equal(attempts[1].key, attempts[0].key);
  assert.equal(run.id, attempts[0].runId);
  const made = (await collect(client(CALLER).runs.list({ agent: "tech-radar" }))).filter(
    (r) => r.metadata?.test === lost.metadata.test,
  );
  assert.deepEqual(
    made.map((r) => r.id),
    [run.id],
  );
});

test(
  "a create dropped while the server works on it waits out the key in flight: one run",
  options,
  async () => {
    // The model answers after 2.5 s, so the first request holds its key that long.
    const body = runBody([{ type: "final", text: "ok", delay_ms: 2500 }]);
    const reader = client(CALLER);
    const made = async () =>
      (await collect(reader.runs.list({ agent: "tech-radar" }))).filter(
        (r) => r.metadata?.test === body.metadata.test,
      );
    let first; // the first attempt: sent to the server, its answer never waited for
    const retries = [];
    const dropping = async (request) => {
      if (first === undefined) {
        first = fetch(request);
        // Dropped only once the server has it (its run exists), as after a lost connection.
        await eventually(async () => (await made()).length === 1);
        throw new TypeError("fetch failed: the connection dropped before the answer");
      }
      const response = await fetch(request);
      retries.push([response.status, response.headers.get("idempotent-replayed")]);
      return response;
    };
    // Two attempts only: the in-flight answers between them take none.
    const tg = client(CALLER, { fetch: dropping, retry: { maxAttempts: 2 } });
    const run = await tg.runs.create(body);

    const answered = await (await first).json();
    assert.equal(run.id, answered.id);
    assert.equal(run.status, "finished");
    assert.ok(retries.length >= 2, JSON.stringify(retries));
    assert.deepEqual(retries.at(-1), [201, "true"]);
    assert.ok(
      retries.slice(0, -1).every(([status]) => status === 409),
      JSON.stringify(retries),
    );
    assert.deepEqual(
      (await made()).map((r) => r.id),
      [run.id],
    );
  },
);

test(
  "a stream cut in the middle resumes with Last-Event-ID, without a gap or a repeat",
  options,
  async () => {
    const run = await client(CALLER).runs.createAndWait(
      runBody([SEARCH, final("PostgreSQL [source:s1]")]),
    );
    assert.equal(run.status, "finished");
    const recorded = await collect(client(CALLER).runs.events(run.id));

    const requests = [];
    const recording = async (request) => {
      requests.push({
        accept: request.headers.get("accept"),
        lastEventId: request.headers.get("last-event-id"),
      });
      return fetch(request);
    };
    // Through the proxy that cuts an event stream opened without Last-Event-ID.
    const cut = new Toolgate({
      baseUrl: env.TOOLGATE_CUTTING_URL,
      apiKey: CALLER,
      fetch: recording,
    });
    const streamed = await collect(cut.runs.events(run.id, { stream: true }));

    assert.deepEqual(
      streamed.map((e) => e.seq),
      recorded.map((_, i) => i + 1),
    );
    assert.deepEqual(streamed, recorded);
    assert.equal(streamed.at(-1).type, "run.finished");
    assert.equal(requests.length, 2);
    assert.equal(requests[0].accept, "text/event-stream");
    assert.equal(requests[0].lastEventId, null);
    const resumedAfter = Number(requests[1].lastEventId);
    assert.ok(
      resumedAfter >= 1 && resumedAfter < recorded.length,
      `resumed after ${requests[1].lastEventId}`,
    );
  },
);

test("a webhook delivery verifies with its secret; a forged one is refused", options, async () => {
  const deliveries = [];
  const receiver = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      deliveries.push({ path: request.url, headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const admin = client(ADMIN);
  const hook = await admin.webhooks.create({
    url: `http://127.0.0.1:${receiver.address().port}/hook`,
    events: ["run.finished"],
  });
  try {
    assert.match(hook.secret, /^whsec_/);
    assert.ok((await collect(admin.webhooks.list())).some((w) => w.id === hook.id));
    const run = await client(CALLER).runs.createAndWait(runBody([final("PostgreSQL.")]));
    assert.equal(run.status, "finished");
    const delivery = await eventually(() =>
      deliveries.find((d) => JSON.parse(d.body.toString("utf8")).run_id === run.id),
    );
    assert.equal(delivery.path, "/hook");

    const event = await verifyWebhook(delivery.body, delivery.headers, hook.secret);
    assert.equal(event.run_id, run.id);
    assert.equal(event.type, "run.finished");
    const other = `whsec_${randomBytes(32).toString("base64")}`;
    const asText = await verifyWebhook(
      delivery.body.toString("utf8"),
      new Headers(delivery.headers),
      [other, hook.secret],
    );
    assert.deepEqual(asText, event);

    const tampered = Buffer.from(
      delivery.body.toString("utf8").replace(run.id, `x${run.id.slice(1)}`),
    );
    assert.notDeepEqual(tampered, delivery.body);
    await assert.rejects(
      verifyWebhook(tampered, delivery.headers, hook.secret),
      WebhookVerificationError,
    );
    await assert.rejects(
      verifyWebhook(delivery.body, delivery.headers, other),
      WebhookVerificationError,
    );
  } finally {
    await admin.webhooks.delete(hook.id);
    receiver.closeAllConnections();
    receiver.close();
  }
});

test("a 503 with Retry-After is waited out, then the create goes through", options, async () => {
  const narrow = env.TOOLGATE_NARROW_URL;
  const gate = env.TOOLGATE_GATE_URL;
  const release = () => fetch(`${gate}/release`, { method: "POST" });
  // Holds the narrow server's one slot: a create whose run waits at the gate.
  const holding = fetch(`${narrow}/v1/runs`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${CALLER}`,
      "Content-Type": "application/json",
      "Idempotency-Key": randomUUID(),
    },
    body: JSON.stringify(
      runBody(
        [
          { type: "tool_calls", calls: [{ id: "h1", name: "hold", arguments: {} }] },
          final("Held."),
        ],
        { wait_s: 10 },
      ),
    ),
  });
  try {
    assert.equal((await fetch(`${gate}/held`)).status, 204);
    const attempts = [];
    const recording = async (request) => {
      const attempt = { started: performance.now() };
      const response = await fetch(request);
      attempts.push(Object.assign(attempt, { status: response.status }));
      attempt.retryAfter = response.headers.get("retry-after");
      if (response.status === 503) {
        // The slot is free again once the held create has answered.
        await release();
        assert.equal((await holding).status, 201);
      }
      attempt.returned = performance.now();
      return response;
    };
    const tg = new Toolgate({ baseUrl: narrow, apiKey: CALLER, fetch: recording });
    const run = await tg.runs.create(runBody([final("PostgreSQL.")]));
    assert.deepEqual(
      attempts.map((a) => a.status),
      [503, 201],
    );
    assert.equal(attempts[0].retryAfter, "1");
    // What the client waited by itself, from the 503 handed to it to its next attempt.
    const gap = attempts[1].started - attempts[0].returned;
    assert.ok(gap >= 900, `retried after ${gap} ms`);
    assert.equal(run.status, "finished");
  } finally {
    await release();
    const held = await holding;
    assert.equal(held.status, 201);
    assert.equal((await held.json()).status, "finished");
  }
});
