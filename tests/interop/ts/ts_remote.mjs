#!/usr/bin/env node
// Interop peer: the OFFICIAL TypeScript ACP SDK's remote transport (@agentclientprotocol/sdk
// 2.4.0: experimental/server, experimental/node, experimental/http-client, experimental/ws-client),
// public API only. Modes:
//
//   serve PORT        AcpServer({ createAgent }) with ts_agent.mjs's scripted agent behind
//                     node:http (createNodeHttpHandler) on 127.0.0.1:PORT; prints "ready".
//                     Streamable HTTP only: its WebSocket upgrade needs the `ws` package.
//   client-http URL   createHttpStream(URL) + client(): runs the scenarios against the rxacp
//   client-ws URL     reference agent at URL (createWebSocketStream for ws://; Node's global
//                     WebSocket, --experimental-websocket on Node 20) and prints one JSON line
//                     of facts per scenario: stream (updates counted when the answer came),
//                     cancel (session/cancel during "slow 5"), permission (allow is chosen).
//
// NOT responsible for verdicts: tests/interop/test_remote_transport.py asserts on the facts.

import { createServer } from "node:http";

import { PROTOCOL_VERSION, client, methods } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createNodeHttpHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

import { interopAgent } from "./ts_agent.mjs";

const STREAM_N = 200;
const STEP_MS = 20_000;

function within(promise, what) {
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${STEP_MS} ms`)), STEP_MS);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

function serve(port) {
  const server = new AcpServer({ createAgent: () => interopAgent() });
  const http = createServer(createNodeHttpHandler(server));
  http.listen(port, "127.0.0.1", () => process.stdout.write("ready\n"));
}

async function runClient(kind, url) {
  const updates = new Map();
  let waiter = null;
  const app = client({ name: "ts-sdk-remote-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      const list = updates.get(params.sessionId) ?? [];
      list.push(params.update);
      updates.set(params.sessionId, list);
      if (waiter && waiter.check()) waiter.resolve();
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const option = params.options.find((o) => o.kind.startsWith("allow_"));
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  const stream = kind === "client-ws" ? createWebSocketStream(url) : createHttpStream(url);
  const connection = app.connect(stream);
  const agentCtx = connection.agent;
  const texts = (sid) =>
    (updates.get(sid) ?? [])
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
      .map((u) => u.content.text);
  const emit = (facts) => process.stdout.write(`${JSON.stringify(facts)}\n`);
  const newSession = async () =>
    (await within(
      agentCtx.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] }),
      "session/new",
    )).sessionId;
  const prompt = (sessionId, text) =>
    agentCtx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

  const init = await within(
    agentCtx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    }),
    "initialize",
  );
  emit({ scenario: "initialize", agent: init.agentInfo?.name ?? null });

  let sid = await newSession();
  let answer = await within(prompt(sid, `stream ${STREAM_N}`), "stream");
  emit({ scenario: "stream", stopReason: answer.stopReason, atAnswer: texts(sid).length });

  sid = await newSession();
  const turn = prompt(sid, "slow 5");
  await within(
    new Promise((resolve) => {
      waiter = { check: () => texts(sid).length >= 2, resolve };
      if (waiter.check()) resolve();
    }),
    "two slow updates",
  );
  const started = Date.now();
  await agentCtx.notify(methods.agent.session.cancel, { sessionId: sid });
  answer = await within(turn, "cancelled prompt");
  emit({
    scenario: "cancel",
    stopReason: answer.stopReason,
    cancelToAnswerMs: Date.now() - started,
    updatesBefore: texts(sid).length,
  });

  sid = await newSession();
  answer = await within(prompt(sid, "permission"), "permission");
  emit({ scenario: "permission", stopReason: answer.stopReason, texts: texts(sid) });
  await stream.writable.close().catch(() => {});
  process.exit(0);
}

const [mode, arg] = process.argv.slice(2);
if (mode === "serve") {
  serve(Number.parseInt(arg, 10));
} else {
  runClient(mode, arg).catch((error) => {
    process.stdout.write(`${JSON.stringify({ scenario: "fatal", error: String(error) })}\n`);
    process.exit(1);
  });
}
