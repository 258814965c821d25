#!/usr/bin/env node
// Interop peer: an ACP client written with the OFFICIAL TypeScript ACP SDK
// (@agentclientprotocol/sdk, pinned in package.json), public API only: client(), onRequest,
// onNotification, connect(stream), ctx.request/notify, ndJsonStream, SendRequestOptions.
//
// Usage:
//   node ts_client.mjs --scenarios echo,stream,... [--file PATH] [--timeout SECONDS] -- CMD [ARGS...]
//
// Spawns the agent CMD over stdio, initializes once, then runs each scenario (each in its own
// ACP session) and prints ONE JSON line per scenario to stdout:
//   {"scenario": <name>, "ok": <the client's own verdict>, ...facts the Python test asserts on}
// It is NOT responsible for the final verdict: tests/interop/test_ts_sdk.py asserts on the facts.
// Diagnostics go to stderr. The agent's stderr is captured and its tail reported on failure.
//
// Scenarios: initialize, new_session, echo, stream, read, permission_allow, permission_reject,
// cancel (session/cancel during "slow"), cancel_request ($/cancel_request via the SDK's
// cancellationSignal during "slow"), fail, unknown_method.
// Client side: serves fs/read_text_file from disk (UTF-8, line/limit honoured), answers
// session/request_permission by scenario (allow_* or reject_* option), collects session/update.
// A tap on the message stream records the wire order (to check "no update after the answer").

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import { PROTOCOL_VERSION, client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const STREAM_N = 10000;
const SLOW_SECONDS = 5;

function parseArgs(argv) {
  const options = { scenarios: [], file: null, timeout: 20, command: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      options.command = argv.slice(i + 1);
      break;
    } else if (arg === "--scenarios") {
      options.scenarios = argv[++i].split(",").filter(Boolean);
    } else if (arg === "--file") {
      options.file = argv[++i];
    } else if (arg === "--timeout") {
      options.timeout = Number.parseFloat(argv[++i]);
    } else {
      throw new Error(`unknown argument ${arg}`);
    }
  }
  if (options.command.length === 0) throw new Error("no agent command after --");
  return options;
}

function errorFacts(error) {
  if (error && typeof error === "object" && "code" in error) {
    return { code: error.code, message: String(error.message ?? ""), data: error.data ?? null };
  }
  return { code: null, message: String(error?.stack ?? error) };
}

function withTimeout(promise, seconds, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timeout after ${seconds}s: ${what}`)), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const options = parseArgs(process.argv.slice(2));

// ---------------------------------------------------------------- agent process + wire tap
const child = spawn(options.command[0], options.command.slice(1), {
  stdio: ["pipe", "pipe", "pipe"],
});
let agentStderr = "";
child.stderr.setEncoding("utf8");
child.stderr.on("data", (chunk) => {
  agentStderr = (agentStderr + chunk).slice(-4000);
});
const childExit = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
child.on("error", (error) => {
  process.stderr.write(`ts_client: cannot start agent: ${error}\n`);
});

/** Wire log (summaries): {dir: "in"|"out", method, id, sessionId, isResponse}. */
const wire = [];
function summarize(dir, msg) {
  return {
    dir,
    method: msg.method ?? null,
    id: "id" in msg ? msg.id : undefined,
    sessionId: msg.params?.sessionId ?? null,
    isResponse: !("method" in msg) && "id" in msg,
    isError: "error" in msg,
  };
}
const base = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const inbound = base.readable.pipeThrough(
  new TransformStream({
    transform(msg, controller) {
      wire.push(summarize("in", msg));
      controller.enqueue(msg);
    },
  }),
);
const outboundTap = new TransformStream({
  transform(msg, controller) {
    wire.push(summarize("out", msg));
    controller.enqueue(msg);
  },
});
outboundTap.readable.pipeTo(base.writable).catch(() => {});

// ---------------------------------------------------------------- client app
const updates = new Map(); // sessionId -> [SessionNotification.update]
const updateWaiters = [];
let permissionChoice = "allow";
const permissionRequests = [];
const servedReads = [];

function textsOf(sessionId) {
  return (updates.get(sessionId) ?? [])
    .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
    .map((u) => u.content.text);
}

function waitForUpdates(sessionId, count) {
  return new Promise((resolve) => {
    const check = () => (updates.get(sessionId)?.length ?? 0) >= count;
    if (check()) resolve();
    else updateWaiters.push({ check, resolve });
  });
}

const app = client({ name: "ts-sdk-interop-client" })
  .onNotification(methods.client.session.update, ({ params }) => {
    const list = updates.get(params.sessionId) ?? [];
    list.push(params.update);
    updates.set(params.sessionId, list);
    for (let i = updateWaiters.length - 1; i >= 0; i--) {
      if (updateWaiters[i].check()) {
        updateWaiters[i].resolve();
        updateWaiters.splice(i, 1);
      }
    }
  })
  .onRequest(methods.client.fs.readTextFile, ({ params }) => {
    servedReads.push(params.path);
    let content = readFileSync(params.path, "utf8");
    if (params.line != null || params.limit != null) {
      const lines = content.split("\n");
      const start = Math.max(0, (params.line ?? 1) - 1);
      const end = params.limit != null ? start + params.limit : lines.length;
      content = lines.slice(start, end).join("\n");
    }
    return { content };
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    permissionRequests.push(params.options.map((o) => ({ optionId: o.optionId, kind: o.kind })));
    const prefix = permissionChoice === "allow" ? "allow_" : "reject_";
    const option = params.options.find((o) => o.kind.startsWith(prefix));
    if (!option) return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  });

const connection = app.connect({ readable: inbound, writable: outboundTap.writable });
const agentCtx = connection.agent;

/** The outcome of a request: `{ response, error }` (one of them null; error as errorFacts). */
async function settled(answer) {
  try {
    return { response: await answer, error: null };
  } catch (e) {
    return { response: null, error: errorFacts(e) };
  }
}

async function newSession() {
  const response = await agentCtx.request(methods.agent.session.new, {
    cwd: process.cwd(),
    mcpServers: [],
  });
  updates.set(response.sessionId, []);
  return response.sessionId;
}

/** A round trip: everything the agent wrote before its answer has been read after this. */
async function roundTrip() {
  try {
    await agentCtx.request("_interop/ping", {});
  } catch {
    // -32601 is the expected answer; any answer will do.
  }
}

function wireIndex(predicate) {
  return wire.findIndex(predicate);
}

/** session/update notifications for sessionId read after the response to request id. */
function updatesAfterAnswer(sessionId, promptId) {
  const answerAt = wireIndex((w) => w.dir === "in" && w.isResponse && w.id === promptId);
  if (answerAt < 0) return null;
  return wire
    .slice(answerAt + 1)
    .filter((w) => w.dir === "in" && w.method === "session/update" && w.sessionId === sessionId)
    .length;
}

function lastPromptId(sessionId) {
  for (let i = wire.length - 1; i >= 0; i--) {
    const w = wire[i];
    if (w.dir === "out" && w.method === "session/prompt" && w.sessionId === sessionId) return w.id;
  }
  return undefined;
}

function prompt(sessionId, text, requestOptions) {
  return agentCtx.request(
    methods.agent.session.prompt,
    { sessionId, prompt: [{ type: "text", text }] },
    requestOptions,
  );
}

// ---------------------------------------------------------------- scenarios
let initializeResponse = null;

const scenarios = {
  async initialize() {
    return {
      ok: initializeResponse?.protocolVersion === PROTOCOL_VERSION,
      protocolVersion: initializeResponse?.protocolVersion ?? null,
      agentInfo: initializeResponse?.agentInfo ?? null,
      agentCapabilities: initializeResponse?.agentCapabilities ?? null,
    };
  },

  async new_session() {
    const first = await newSession();
    const second = await newSession();
    return { ok: Boolean(first) && first !== second, sessionIds: [first, second] };
  },

  async echo() {
    const sid = await newSession();
    const text = "héllo wörld ✓ 日本";
    const response = await prompt(sid, `echo ${text}`);
    await roundTrip();
    const texts = textsOf(sid);
    return { ok: texts.join("") === text, stopReason: response.stopReason, texts, expected: text };
  },

  async stream() {
    const sid = await newSession();
    const response = await prompt(sid, `stream ${STREAM_N}`);
    await roundTrip();
    const texts = textsOf(sid);
    // Order and content in one fact: the test compares this digest with the expected texts'.
    const digest = createHash("sha256").update(texts.join("\u0000"), "utf8").digest("hex");
    return {
      ok: texts.length === STREAM_N,
      stopReason: response.stopReason,
      count: texts.length,
      allUpdates: updates.get(sid).length,
      digest,
      first: texts.slice(0, 3),
      last: texts.slice(-3),
      afterAnswer: updatesAfterAnswer(sid, lastPromptId(sid)),
    };
  },

  async read() {
    if (!options.file) throw new Error("scenario read needs --file");
    const sid = await newSession();
    const expected = readFileSync(options.file, "utf8");
    const response = await prompt(sid, `read ${options.file}`);
    await roundTrip();
    const texts = textsOf(sid);
    return {
      ok: texts.join("").includes(expected),
      stopReason: response.stopReason,
      texts,
      expected,
      servedReads: servedReads.filter((p) => p === options.file).length,
    };
  },

  async permission_allow() {
    return permissionScenario("allow");
  },

  async permission_reject() {
    return permissionScenario("reject");
  },

  async cancel() {
    const sid = await newSession();
    const started = Date.now();
    const answer = prompt(sid, `slow ${SLOW_SECONDS}`);
    await waitForUpdates(sid, 1);
    const cancelledAt = Date.now();
    await agentCtx.notify(methods.agent.session.cancel, { sessionId: sid });
    const { response, error } = await settled(answer);
    const answeredAt = Date.now();
    await roundTrip();
    const afterAnswer = updatesAfterAnswer(sid, lastPromptId(sid));
    return {
      ok: response?.stopReason === "cancelled" && afterAnswer === 0,
      stopReason: response?.stopReason ?? null,
      error,
      updatesBeforeCancel: (updates.get(sid) ?? []).length,
      afterAnswer,
      cancelToAnswerMs: answeredAt - cancelledAt,
      totalMs: answeredAt - started,
    };
  },

  async cancel_request() {
    const sid = await newSession();
    const abort = new AbortController();
    const answer = prompt(sid, `slow ${SLOW_SECONDS}`, { cancellationSignal: abort.signal });
    await waitForUpdates(sid, 1);
    const cancelledAt = Date.now();
    abort.abort();
    const { response, error } = await settled(answer);
    const answeredAt = Date.now();
    await roundTrip();
    const promptId = lastPromptId(sid);
    const sentCancelRequest = wire.some(
      (w) => w.dir === "out" && w.method === "$/cancel_request",
    );
    const afterAnswer = updatesAfterAnswer(sid, promptId);
    // The connection still serves: a new turn on the same session works.
    const followUp = await prompt(sid, "echo still alive");
    await roundTrip();
    return {
      ok: error?.code === -32800 && textsOf(sid).at(-1) === "still alive",
      stopReason: response?.stopReason ?? null,
      error,
      sentCancelRequest,
      afterAnswer,
      cancelToAnswerMs: answeredAt - cancelledAt,
      followUpStopReason: followUp.stopReason,
      followUpText: textsOf(sid).at(-1) ?? null,
    };
  },

  async fail() {
    const sid = await newSession();
    try {
      const response = await prompt(sid, "fail");
      return { ok: false, stopReason: response.stopReason, error: null };
    } catch (e) {
      return { ok: typeof e?.code === "number", error: errorFacts(e) };
    }
  },

  async unknown_method() {
    try {
      const result = await agentCtx.request("_interop/nope", {});
      return { ok: false, result, error: null };
    } catch (e) {
      const error = errorFacts(e);
      return { ok: error.code === -32601, error };
    }
  },
};

async function permissionScenario(choice) {
  permissionChoice = choice;
  const sid = await newSession();
  const before = permissionRequests.length;
  const response = await prompt(sid, "permission");
  await roundTrip();
  const offered = permissionRequests[before] ?? null;
  const prefix = choice === "allow" ? "allow_" : "reject_";
  const chosen = offered?.find((o) => o.kind.startsWith(prefix))?.optionId ?? null;
  const texts = textsOf(sid);
  return {
    ok: chosen !== null && texts.some((t) => t.includes(chosen)),
    stopReason: response.stopReason,
    offered,
    chosen,
    texts,
  };
}

function emit(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function main() {
  try {
    initializeResponse = await withTimeout(
      agentCtx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
        clientInfo: { name: "ts-sdk-interop-client", version: "1.0.0" },
      }),
      options.timeout,
      "initialize",
    );
  } catch (e) {
    for (const name of options.scenarios) {
      emit({ scenario: name, ok: false, fatal: "initialize failed", error: errorFacts(e), agentStderr });
    }
    return 1;
  }
  for (const name of options.scenarios) {
    const run = scenarios[name];
    if (!run) {
      emit({ scenario: name, ok: false, fatal: `unknown scenario ${name}` });
      continue;
    }
    const started = Date.now();
    try {
      const facts = await withTimeout(run(), options.timeout, name);
      emit({ scenario: name, ...facts, elapsedMs: Date.now() - started });
    } catch (e) {
      emit({ scenario: name, ok: false, error: errorFacts(e), elapsedMs: Date.now() - started, agentStderr });
    }
  }
  return 0;
}

const code = await main();
connection.close();
child.stdin.end();
const exited = await Promise.race([
  childExit,
  new Promise((resolve) => setTimeout(() => resolve(null), 30000)),
]);
if (exited === null) {
  process.stderr.write("ts_client: agent did not exit on stdin EOF within 30 s; killing it\n");
  child.kill("SIGKILL");
}
process.exit(code);
