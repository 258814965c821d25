#!/usr/bin/env node
// Benchmark client written with the OFFICIAL TypeScript ACP SDK (@agentclientprotocol/sdk, the
// version pinned in tests/interop/ts/package.json; installed by scripts/setup_interop_ts.sh):
//
//   node ts_client.mjs BENCH N AGENT_CMD_JSON
//
// BENCH: rt (N sequential "echo hi" prompts after 200 warm-up ones), stream (one "stream N"
// prompt), fanout (50 sessions x N/50 prompts, all concurrently), slow (N sessions, one
// "slow 0.3" prompt each, all at once). Public SDK API only: client(), onNotification,
// connect(ndJsonStream(...)), agent.request. Prints one "RESULT {...}" line with the same keys
// as the Python drivers (benchmarks/peers/_common.py: Meter.done). Not a behaviour test.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SDK_DIR = join(ROOT, "tests", "interop", "ts", "node_modules", "@agentclientprotocol", "sdk");
const SDK_ENTRY = JSON.parse(readFileSync(join(SDK_DIR, "package.json"), "utf8")).exports["."].import;
const { PROTOCOL_VERSION, client, methods, ndJsonStream } = await import(
  pathToFileURL(join(SDK_DIR, SDK_ENTRY)).href
);

const CLK_TCK = 100; // /proc/<pid>/stat ticks per second (Linux default, as in _common.py)

function procCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

function procKib(pid, key) {
  try {
    for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
      if (line.startsWith(`${key}:`)) return Number(line.split(/\s+/)[1]);
    }
  } catch {
    // gone
  }
  return 0;
}

class Meter {
  constructor(agentPid) {
    this.agentPid = agentPid;
    this.wall = process.hrtime.bigint();
    this.cpu = process.cpuUsage();
    this.agentCpu = procCpuSeconds(agentPid);
  }

  done(count, extra = {}) {
    const wall = Number(process.hrtime.bigint() - this.wall) / 1e9;
    const cpu = process.cpuUsage(this.cpu);
    const agentCpu = procCpuSeconds(this.agentPid) - this.agentCpu;
    return {
      count,
      wall,
      rate: wall ? count / wall : 0,
      client_cpu_us: (cpu.user + cpu.system) / count,
      agent_cpu_us: (agentCpu / count) * 1e6,
      client_hwm_kib: procKib("self", "VmHWM"),
      agent_hwm_kib: procKib(this.agentPid, "VmHWM"),
      ...extra,
    };
  }
}

const [bench, nText, agentJson] = process.argv.slice(2);
const n = Number.parseInt(nText, 10);
const command = JSON.parse(agentJson);
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });

let counted = 0;
let marks = 0;
const rss = [];
const app = client({ name: "rxacp-bench-ts-client" }).onNotification(
  methods.client.session.update,
  () => {
    counted += 1;
    if (marks && counted % marks === 0) rss.push([procKib("self", "VmRSS"), procKib(child.pid, "VmRSS")]);
  },
);
const connection = app.connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const agent = connection.agent;

const newSession = async () =>
  (await agent.request(methods.agent.session.new, { cwd: "/", mcpServers: [] })).sessionId;
const prompt = (sessionId, text) =>
  agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

await agent.request(methods.agent.initialize, {
  protocolVersion: PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
});
const sid = await newSession();
let result;
if (bench === "rt") {
  for (let i = 0; i < 200; i++) await prompt(sid, "echo hi");
  const meter = new Meter(child.pid);
  for (let i = 0; i < n; i++) await prompt(sid, "echo hi");
  result = meter.done(n);
} else if (bench === "stream") {
  await prompt(sid, "stream 100");
  counted = 0;
  marks = Math.max(1, Math.floor(n / 8));
  const meter = new Meter(child.pid);
  await prompt(sid, `stream ${n}`);
  if (counted !== n) throw new Error(`stream: ${counted} updates, expected ${n}`);
  result = meter.done(n, { rss });
} else if (bench === "fanout") {
  const sids = [];
  for (let i = 0; i < 50; i++) sids.push(await newSession());
  const per = Math.max(1, Math.floor(n / 50));
  const meter = new Meter(child.pid);
  await Promise.all(
    sids.map(async (s) => {
      for (let i = 0; i < per; i++) await prompt(s, "echo hi");
    }),
  );
  result = meter.done(per * 50);
} else if (bench === "slow") {
  const sids = [];
  for (let i = 0; i < n; i++) sids.push(await newSession());
  const meter = new Meter(child.pid);
  const answers = await Promise.all(sids.map((s) => prompt(s, "slow 0.3")));
  if (!answers.every((a) => a.stopReason === "end_turn")) throw new Error("slow: not end_turn");
  result = meter.done(n, { updates: counted });
} else {
  throw new Error(`unknown bench ${bench}`);
}
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
child.stdin.end();
await new Promise((resolve) => {
  const timer = setTimeout(() => {
    child.kill("SIGKILL");
    resolve();
  }, 5000);
  child.on("exit", () => {
    clearTimeout(timer);
    resolve();
  });
});
process.exit(0);
