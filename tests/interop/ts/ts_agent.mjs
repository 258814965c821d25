#!/usr/bin/env node
// Interop peer: an ACP agent written with the OFFICIAL TypeScript ACP SDK
// (@agentclientprotocol/sdk, pinned in package.json), public API only: agent(), onRequest,
// onNotification, connect(ndJsonStream(...)), RequestError. It serves one client over this
// process's stdin/stdout and exits when stdin closes.
//
// NOT responsible for any assertion: rxacp's tests (tests/interop/test_ts_sdk.py) drive it and
// check what it sends. Diagnostics go to stderr only (stdout is the protocol stream).
//
// Prompt text selects the behaviour (same words as rxacp's reference agent):
//   echo <text>      one agent_message_chunk "<text>", then end_turn
//   stream <N>       N chunks "0".."N-1", then end_turn
//   read <abs path>  fs/read_text_file through the client; one chunk with the content
//   permission       session/request_permission (allow / reject); one chunk with the chosen
//                    optionId, or "cancelled"
//   slow <seconds>   a chunk "tick <i>" every 100 ms for <seconds>; session/cancel stops it
//                    (stopReason "cancelled"), $/cancel_request stops it (error -32800)
//   fail             error FAIL_CODE with data {"behaviour": "fail"}
// Extension request "_interop/stats" returns what this agent observed (for cancel assertions).

import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

import { PROTOCOL_VERSION, RequestError, agent, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const FAIL_CODE = -32042;
const TICK_MS = 100;

/** sessionId -> AbortController of the active turn (aborted by session/cancel). */
const turns = new Map();
let sessionCounter = 0;
const stats = {
  sessionCancels: 0,
  cancelRequests: 0,
  slowOutcomes: [],
};

function promptText(prompt) {
  return (prompt ?? [])
    .filter((block) => block && block.type === "text")
    .map((block) => block.text)
    .join("");
}

function say(client, sessionId, text) {
  return client.notify(methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

function sleep(ms, ...signals) {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener("abort", done);
      resolve();
    }
    for (const s of signals) s.addEventListener("abort", done, { once: true });
  });
}

async function slow(client, sessionId, seconds, turnSignal, requestSignal) {
  const deadline = Date.now() + seconds * 1000;
  let tick = 0;
  // Counted the moment the SDK aborts the request's signal ($/cancel_request for this prompt).
  requestSignal.addEventListener("abort", () => (stats.cancelRequests += 1), { once: true });
  while (Date.now() < deadline) {
    if (turnSignal.aborted || requestSignal.aborted) break;
    await say(client, sessionId, `tick ${tick++}`);
    await sleep(TICK_MS, turnSignal, requestSignal);
  }
  if (requestSignal.aborted) {
    stats.slowOutcomes.push("cancel_request");
    // The SDK turns the -32800 RequestError (the abort reason) into the error answer.
    throw requestSignal.reason;
  }
  if (turnSignal.aborted) {
    stats.slowOutcomes.push("cancelled");
    return { stopReason: "cancelled" };
  }
  stats.slowOutcomes.push("end_turn");
  return { stopReason: "end_turn" };
}

async function permission(client, sessionId, turnSignal) {
  const response = await client.request(
    methods.client.session.requestPermission,
    {
      sessionId,
      toolCall: { toolCallId: "interop-permission", title: "interop permission", kind: "edit" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    },
    { cancellationSignal: turnSignal },
  );
  const outcome = response.outcome;
  return outcome.outcome === "selected" ? outcome.optionId : "cancelled";
}

async function runPrompt({ params, signal, client }) {
  const sessionId = params.sessionId;
  if (!turns.has(sessionId)) {
    throw RequestError.sessionNotFound(sessionId);
  }
  const turn = new AbortController();
  turns.set(sessionId, turn);
  try {
    const text = promptText(params.prompt).trim();
    const [word, ...rest] = text.split(/\s+/);
    const arg = text.slice(word.length).trim();
    switch (word) {
      case "echo":
        await say(client, sessionId, arg);
        return { stopReason: "end_turn" };
      case "stream": {
        const n = Number.parseInt(rest[0] ?? "0", 10);
        for (let i = 0; i < n; i++) {
          await say(client, sessionId, String(i));
        }
        return { stopReason: "end_turn" };
      }
      case "read": {
        const file = await client.request(methods.client.fs.readTextFile, {
          sessionId,
          path: arg,
        });
        await say(client, sessionId, file.content);
        return { stopReason: "end_turn" };
      }
      case "permission": {
        const chosen = await permission(client, sessionId, turn.signal);
        await say(client, sessionId, chosen);
        return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn" };
      }
      case "slow":
        return await slow(client, sessionId, Number.parseFloat(rest[0] ?? "1"), turn.signal, signal);
      case "fail":
        throw new RequestError(FAIL_CODE, "interop agent failure", { behaviour: "fail" });
      default:
        await say(client, sessionId, `unknown prompt: ${text}`);
        return { stopReason: "end_turn" };
    }
  } finally {
    if (turns.get(sessionId) === turn) turns.set(sessionId, null);
  }
}

/** The scripted agent app (ts_remote.mjs serves it over HTTP with the SDK's AcpServer). */
export function interopAgent() {
  return agent({ name: "ts-sdk-interop-agent" })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "ts-sdk-interop-agent", version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, () => {
    const sessionId = `ts-session-${++sessionCounter}`;
    turns.set(sessionId, null);
    return { sessionId };
  })
  .onRequest(methods.agent.session.prompt, runPrompt)
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    stats.sessionCancels += 1;
    turns.get(params.sessionId)?.abort();
  })
  .onRequest(
    "_interop/stats",
    (raw) => raw ?? {},
    () => ({ ...stats, slowOutcomes: [...stats.slowOutcomes] }),
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout),
    Readable.toWeb(process.stdin),
  );
  const connection = interopAgent().connect(stream);
  connection.closed.then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`ts_agent: connection closed with ${error}\n`);
      process.exit(1);
    },
  );
}
