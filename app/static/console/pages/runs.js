// Runs: the list (status and agent filters) and one run's page (status, output with its
// citations, usage against limits, calls, and the timeline live until it finishes).

import {
  announce,
  consolePath,
  details,
  h,
  jsonBlock,
  labelledSelect,
  link,
  replace,
  usd,
  when,
} from "../dom.js";
import { keepCurrent } from "../live.js";
import { clearProblem, showProblem } from "../problems.js";
import { timeline } from "../timeline.js";
import { coalesce, debounce, isAbort } from "../util.js";

const RUN_STATUSES = ["queued", "running", "awaiting_approval", "finished"];
const LIST_TYPES = ["run.created", "run.finished", "call.awaiting_approval", "call.approved"];

function runRow(run) {
  return h(
    "tr",
    { "data-run": run.id },
    h("td", {}, link(consolePath("runs", run.id), h("code", {}, run.id))),
    h("td", {}, run.agent),
    h("td", {}, h("span", { class: `status status-${run.status}` }, run.status)),
    h("td", {}, run.termination_reason || "—"),
    h("td", { class: "num" }, String(run.usage.steps)),
    h("td", { class: "num" }, usd(run.usage.cost_usd)),
    h("td", {}, when(run.created_at)),
  );
}

export async function runsPage(ctx) {
  const query = new URLSearchParams(location.search);
  const filters = {
    status: RUN_STATUSES.includes(query.get("status")) ? query.get("status") : "",
    agent: query.get("agent") || "",
  };
  const slot = h("div", { class: "alerts" });
  const note = h("p", { class: "live" });
  const tbody = h("tbody");
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  const columns = ["Run", "Agent", "Status", "Termination", "Steps", "Cost", "Created"];
  const table = h(
    "table",
    { class: "grid", "aria-labelledby": "runs-title" },
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
    tbody,
  );
  let agents = [];
  try {
    agents = (await ctx.api("/v1/agents?limit=200")).items.map((a) => a.name);
  } catch (error) {
    if (isAbort(error)) return;
  }
  if (filters.agent && !agents.includes(filters.agent)) agents.push(filters.agent);

  let cursor = null;
  let extraPages = false;
  const address = () => {
    const params = new URLSearchParams();
    if (filters.status) params.set("status", filters.status);
    if (filters.agent) params.set("agent", filters.agent);
    const search = params.toString();
    return search ? `?${search}` : "";
  };
  const load = async (append) => {
    const params = new URLSearchParams({ limit: "50" });
    if (filters.status) params.set("status", filters.status);
    if (filters.agent) params.set("agent", filters.agent);
    if (append && cursor) params.set("cursor", cursor);
    let page;
    try {
      page = await ctx.api(`/v1/runs?${params}`);
    } catch (error) {
      if (!isAbort(error)) showProblem(slot, error, { action: "load", me: ctx.me }, { onSignIn: ctx.signOut });
      return;
    }
    clearProblem(slot);
    const rows = page.items.map(runRow);
    if (!rows.length && !append) {
      rows.push(h("tr", { class: "empty" }, h("td", { colspan: columns.length }, "No runs match.")));
    }
    if (append) tbody.append(...rows);
    else tbody.replaceChildren(...rows);
    cursor = page.next_cursor;
    more.hidden = !cursor;
  };
  const refresh = coalesce(() => load(false));
  const onFilter = (name) => (value) => {
    filters[name] = value;
    extraPages = false;
    history.replaceState(null, "", `/console/runs${address()}`);
    refresh();
  };
  more.addEventListener("click", () => {
    extraPages = true;
    load(true);
  });

  ctx.main.append(
    h("h1", { id: "runs-title", tabindex: "-1" }, "Runs"),
    h(
      "div",
      { class: "toolbar" },
      labelledSelect(
        "runs-status",
        "Status",
        [["", "any"], ...RUN_STATUSES.map((s) => [s, s])],
        filters.status,
        onFilter("status"),
      ),
      labelledSelect(
        "runs-agent",
        "Agent",
        [["", "any"], ...agents.map((a) => [a, a])],
        filters.agent,
        onFilter("agent"),
      ),
      note,
    ),
    slot,
    table,
    more,
  );
  // Keeps the first page current (not while the user has loaded more pages).
  await refresh();
  keepCurrent(ctx, {
    types: LIST_TYPES,
    refresh: () => {
      if (!extraPages) refresh();
    },
    note,
  });
}

function usageView(run) {
  const { usage, limits } = run;
  const rows = [
    ["Steps", String(usage.steps), String(limits.max_steps)],
    [
      "Tokens (input + output)",
      `${usage.input_tokens + usage.output_tokens} (${usage.input_tokens} + ${usage.output_tokens})`,
      String(limits.max_tokens),
    ],
    ["Cost", usd(usage.cost_usd), usd(limits.max_cost_usd)],
    ["Tool calls", String(usage.tool_calls), String(limits.max_tool_calls)],
    ["Time", `deadline ${when(run.deadline_at)}`, `${limits.deadline_s} s`],
  ];
  return h(
    "table",
    { class: "grid usage", "aria-labelledby": "usage-title" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Measure"),
        h("th", { scope: "col" }, "Used"),
        h("th", { scope: "col" }, "Limit"),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map(([name, used, limit]) =>
        h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, used), h("td", {}, limit)),
      ),
    ),
  );
}

function outputView(run) {
  if (!run.output) {
    return h(
      "p",
      { class: "hint" },
      run.status === "finished" ? "No output." : "No output yet: the run has not finished.",
    );
  }
  // The model's text as text: no Markdown, and links in it are not made clickable.
  const section = h("div", {}, h("p", { class: "output-text", id: "output-text" }, run.output.text));
  if (run.output.citations.length) {
    section.append(
      h("h3", {}, "Citations"),
      h(
        "ul",
        { class: "citations", "aria-label": "Citations" },
        run.output.citations.map((c) =>
          h(
            "li",
            {},
            h("code", {}, c.source_id),
            ` — ${c.tool}`,
            c.source_version ? `, version ${c.source_version}` : "",
            c.observed_at ? `, observed ${when(c.observed_at)}` : "",
          ),
        ),
      ),
    );
  }
  return section;
}

function callsView(calls) {
  if (!calls.length) return h("p", { class: "hint" }, "No calls yet.");
  return h(
    "table",
    { class: "grid calls", "aria-labelledby": "calls-title" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Call", "Step", "Tool", "Status", "Error", "Source", "Preview", "Arguments", "Output"].map(
          (c) => h("th", { scope: "col" }, c),
        ),
      ),
    ),
    h(
      "tbody",
      {},
      calls.map((c) =>
        h(
          "tr",
          { "data-call": c.call_id },
          h("td", {}, h("code", {}, c.call_id)),
          h("td", { class: "num" }, String(c.step)),
          h("td", {}, c.tool),
          h("td", {}, h("span", { class: `status status-${c.status}` }, c.status)),
          h(
            "td",
            {},
            c.error ? [h("code", {}, c.error.code), c.error.message ? `: ${c.error.message}` : ""] : "—",
          ),
          h("td", {}, c.source_id || "—"),
          h("td", {}, c.preview_id ? link(consolePath("previews", c.preview_id), "Preview") : "—"),
          h("td", {}, jsonBlock(c.arguments, `Arguments of ${c.call_id}`)),
          h("td", {}, c.output === null ? "—" : jsonBlock(c.output, `Output of ${c.call_id}`)),
        ),
      ),
    ),
  );
}

function factsView(run) {
  return details([
    ["Agent", run.agent],
    ["Status", h("strong", { class: `status status-${run.status}`, id: "run-status" }, run.status)],
    ["Termination reason", run.termination_reason],
    ["Error", run.error ? `${run.error.code}: ${run.error.message}` : undefined],
    [
      "Waiting for approval",
      run.pending_approvals.length
        ? h(
            "ul",
            { class: "plain" },
            run.pending_approvals.map((p) =>
              h("li", {}, link(consolePath("previews", p.preview_id), p.summary), ` (${p.tool})`),
            ),
          )
        : undefined,
    ],
    ["Tools", run.tools.join(", ") || "—"],
    ["Created", when(run.created_at)],
    ["Updated", when(run.updated_at)],
    ["Deadline", when(run.deadline_at)],
  ]);
}

export async function runPage(ctx, id) {
  const path = `/v1/runs/${encodeURIComponent(id)}`;
  const slot = h("div", { class: "alerts" });
  const facts = h("div", {});
  const output = h("div", {});
  const usage = h("div", {});
  const calls = h("div", {});
  ctx.main.append(
    h("h1", { tabindex: "-1" }, "Run ", h("code", {}, id)),
    slot,
    facts,
    h("section", {}, h("h2", {}, "Output"), output),
    h("section", {}, h("h2", { id: "usage-title" }, "Usage against limits"), usage),
    h("section", {}, h("h2", { id: "calls-title" }, "Calls"), calls),
  );
  let run = await ctx.api(path);
  let lastStatus = run.status;

  const paint = (callItems) => {
    replace(facts, factsView(run));
    replace(output, outputView(run));
    replace(usage, usageView(run));
    if (callItems) replace(calls, callsView(callItems));
  };
  const refresh = coalesce(async () => {
    try {
      const [fresh, page] = await Promise.all([
        ctx.api(path),
        ctx.api(`${path}/calls?limit=200`),
      ]);
      run = fresh;
      paint(page.items);
      clearProblem(slot);
      if (run.status !== lastStatus) {
        lastStatus = run.status;
        announce(
          run.status === "finished"
            ? `The run finished: ${run.termination_reason}.`
            : `The run is ${run.status}.`,
        );
      }
    } catch (error) {
      if (!isAbort(error)) showProblem(slot, error, { action: "load", me: ctx.me }, { onSignIn: ctx.signOut });
    }
  });
  paint(null);
  await refresh();
  const soon = debounce(refresh, 150);
  await timeline(ctx, ctx.main, id, {
    done: run.status === "finished",
    onEvent: (event) => (event.type === "run.finished" ? refresh() : soon()),
  });
}
