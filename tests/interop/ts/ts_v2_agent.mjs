#!/usr/bin/env node
// Interop peer: an ACP v2 (Draft) agent written with the OFFICIAL TypeScript ACP SDK's
// experimental v2 API (@agentclientprotocol/sdk/experimental/v2: agent(), onRequest,
// onNotification, ndJsonStream, AgentProtocolRouter). With --dual it also serves v1 clients
// (AgentProtocolRouter().withV1(v1 agent).withV2(v2 agent)); without, v2 only.
//
// NOT responsible for any assertion: tests/interop/test_v2_interop.py drives it.
// The TS v2 API does not emit the prompt lifecycle: this agent answers session/prompt with
// {messageId}, then sends user_message, state_update running, the behaviour's updates and one
// idle state_update with the stop reason, as the v2 prose prescribes.
//
//   stream <N>   N agent_message_chunk "0".."N-1" (one messageId), then idle end_turn
//   permission   session/request_permission (title, allow/reject) between requires_action and
//                running; one chunk with the chosen optionId or "cancelled"
//   slow <s>     a chunk every 100 ms for <s> seconds; session/cancel stops it: idle cancelled
//   anything     echoed

import { Readable, Writable } from "node:stream";

import * as v1 from "@agentclientprotocol/sdk";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const TICK_MS = 100;
const turns = new Map();
let counter = 0;

function text(prompt) {
  return (prompt ?? []).filter((b) => b && b.type === "text").map((b) => b.text).join("");
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

async function runTurn(client, sessionId, prompt, userId, controller) {
  const update = (u) => client.notify(acp.CLIENT_METHODS.session_update, { sessionId, update: u });
  const agentId = `ts_agent_${++counter}`;
  const say = (t) => update({ sessionUpdate: "agent_message_chunk", messageId: agentId,
    content: { type: "text", text: t } });
  let stopReason = "end_turn";
  await update({ sessionUpdate: "user_message", messageId: userId, content: prompt });
  await update({ sessionUpdate: "state_update", state: "running" });
  const [word, arg] = text(prompt).split(/\s+/);
  try {
    if (word === "stream") {
      for (let i = 0; i < Number(arg); i++) await say(String(i));
    } else if (word === "permission") {
      await update({ sessionUpdate: "state_update", state: "requires_action" });
      const answer = await client.request(acp.CLIENT_METHODS.session_request_permission, {
        sessionId,
        title: "Allow the interop test?",
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      }, { cancellationSignal: controller.signal });
      await update({ sessionUpdate: "state_update", state: "running" });
      const outcome = answer.outcome;
      await say(outcome.outcome === "selected" ? outcome.optionId : "cancelled");
    } else if (word === "slow") {
      const deadline = Date.now() + Number(arg) * 1000;
      let tick = 0;
      while (Date.now() < deadline && !controller.signal.aborted) {
        await say(`tick ${tick++}`);
        await sleep(TICK_MS, controller.signal);
      }
    } else {
      await say(text(prompt));
    }
  } catch (error) {
    if (!controller.signal.aborted) process.stderr.write(`turn failed: ${error}\n`);
  }
  if (controller.signal.aborted) stopReason = "cancelled";
  turns.delete(sessionId);
  await update({ sessionUpdate: "state_update", state: "idle", stopReason });
}

// The connection-lifetime client context: a handler's `client` is scoped to its request, so
// it cannot send the turn's updates after session/prompt was answered.
let connectionClient;

const v2Agent = acp.agent({ name: "ts-v2-interop-agent" })
  .onConnect((connection) => {
    connectionClient = connection.client;
  })
  .onRequest(acp.AGENT_METHODS.initialize, ({ params }) => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "ts-v2-interop-agent", version: "2.4.0" },
    capabilities: { session: {} },
  }))
  .onRequest(acp.AGENT_METHODS.session_new, () => ({ sessionId: `ts-v2-${++counter}` }))
  .onRequest(acp.AGENT_METHODS.session_list, () => ({ sessions: [] }))
  .onRequest(acp.AGENT_METHODS.session_close, () => ({}))
  .onRequest(acp.AGENT_METHODS.session_resume, () => ({}))
  .onRequest(acp.AGENT_METHODS.session_prompt, ({ params }) => {
    const client = connectionClient;
    const controller = new AbortController();
    turns.set(params.sessionId, controller);
    const userId = `ts_user_${++counter}`;
    setImmediate(() => runTurn(client, params.sessionId, params.prompt, userId, controller)
      .catch((e) => process.stderr.write(`runTurn: ${e?.stack ?? e}\n`)));
    return { messageId: userId };
  })
  .onNotification(acp.AGENT_METHODS.session_cancel, ({ params }) => {
    turns.get(params.sessionId)?.abort();
  });

const v1Agent = v1.agent({ name: "ts-v1-interop-agent" })
  .onRequest(v1.methods.agent.initialize, () => ({
    protocolVersion: v1.PROTOCOL_VERSION,
    agentCapabilities: {},
    agentInfo: { name: "ts-v1-interop-agent", version: "2.4.0" },
  }))
  .onRequest(v1.methods.agent.session.new, () => ({ sessionId: `ts-v1-${++counter}` }))
  .onRequest(v1.methods.agent.session.prompt, async ({ params, client }) => {
    await client.notify(v1.methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "v1" } },
    });
    return { stopReason: "end_turn" };
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const router = new acp.AgentProtocolRouter().withV2(v2Agent);
if (process.argv.includes("--dual")) router.withV1(v1Agent);
const connection = router.connect(stream);
await connection.closed;
