#!/usr/bin/env node
// Interop peer: an ACP v2 (Draft) client written with the OFFICIAL TypeScript ACP SDK's
// experimental v2 API (@agentclientprotocol/sdk/experimental/v2: client(), onRequest,
// onNotification, connectWith, ndJsonStream). It spawns the agent given after `--`, runs one
// scenario and prints one JSON line of facts to stdout; tests/interop/test_v2_interop.py
// asserts them. NOT responsible for any assertion itself.
//
//   node ts_v2_client.mjs <stream|permission|cancel|negotiate> -- <agent command...>

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const scenario = process.argv[2];
const command = process.argv.slice(process.argv.indexOf("--") + 1);
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const waiters = [];
const facts = { scenario };

function onUpdate(update) {
  updates.push(update);
  for (const w of [...waiters]) w();
}

function until(pred, ms = 20000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting (${scenario})`)), ms);
    const check = () => {
      const found = updates.find(pred);
      if (found) {
        clearTimeout(timer);
        waiters.splice(waiters.indexOf(check), 1);
        resolve(found);
      }
    };
    waiters.push(check);
    check();
  });
}

const isIdleEnd = (u) => u.sessionUpdate === "state_update" && u.state === "idle" && u.stopReason;

const app = acp.client({ name: "ts-v2-interop-client" })
  .onRequest(acp.CLIENT_METHODS.session_request_permission, ({ params }) => {
    facts.permissionTitle = params.title;
    return { outcome: { outcome: "selected", optionId: "allow" } };
  })
  .onNotification(acp.CLIENT_METHODS.session_update, ({ params }) => onUpdate(params.update));

async function prompt(ctx, sessionId, text) {
  return ctx.request(acp.AGENT_METHODS.session_prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  });
}

try {
  await app.connectWith(stream, async (ctx) => {
    let init;
    try {
      init = await ctx.request(acp.AGENT_METHODS.initialize, {
        protocolVersion: 2,
        info: { name: "ts-v2-interop-client", version: "2.4.0" },
        capabilities: {},
      });
    } catch (error) {
      facts.initializeError = String(error?.message ?? error);
      facts.initializeErrorData = error?.data ?? null;
      return;
    }
    facts.protocolVersion = init.protocolVersion;
    facts.agentName = init.info?.name;
    const { sessionId } = await ctx.request(acp.AGENT_METHODS.session_new, { cwd: "/tmp" });
    if (scenario === "stream") {
      const accepted = await prompt(ctx, sessionId, "stream 5");
      facts.messageId = accepted.messageId;
      const idle = await until(isIdleEnd);
      facts.stopReason = idle.stopReason;
      const chunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk");
      facts.chunks = chunks.map((c) => c.content.text);
      facts.chunkMessageIds = [...new Set(chunks.map((c) => c.messageId))].length;
      facts.userMessageId = updates.find((u) => u.sessionUpdate === "user_message")?.messageId;
      facts.kinds = updates.map((u) => u.sessionUpdate === "state_update" ? u.state : u.sessionUpdate);
    } else if (scenario === "permission") {
      await prompt(ctx, sessionId, "permission");
      facts.stopReason = (await until(isIdleEnd)).stopReason;
      facts.states = updates.filter((u) => u.sessionUpdate === "state_update").map((u) => u.state);
      facts.text = updates.filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((c) => c.content.text).join("");
    } else if (scenario === "cancel") {
      await prompt(ctx, sessionId, "slow 20");
      await until((u) => u.sessionUpdate === "agent_message_chunk");
      const started = Date.now();
      await ctx.notify(acp.AGENT_METHODS.session_cancel, { sessionId });
      const idle = await until(isIdleEnd);
      facts.stopReason = idle.stopReason;
      facts.cancelMs = Date.now() - started;
      facts.idleCount = updates.filter(isIdleEnd).length;
    }
  });
} catch (error) {
  if (!facts.initializeError) facts.error = String(error?.stack ?? error);
}
child.stdin.end();
process.stdout.write(JSON.stringify(facts) + "\n");
await new Promise((resolve) => child.on("exit", resolve));
process.exit(0);
