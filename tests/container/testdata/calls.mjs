// calls.mjs times tool calls through the wall, one at a time, and prints one line:
// "CALLS " and a JSON object with, for each way, the calls' p50 and p95 in microseconds.
//
//   node calls.mjs WALL_URL WALL_COMMAND N
//
// rest:  POST WALL_URL/tools/read_email (in a container: through chaos-relay serve)
// stdio: MCP tools/call on the stdio of WALL_COMMAND ({wall}, the relay on the hub's stream)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [wallURL, wallCommand, n] = [process.argv[2], process.argv[3], Number(process.argv[4] || 200)];

function stats(us) {
  us.sort((a, b) => a - b);
  return { n: us.length, p50: us[Math.floor(us.length / 2)], p95: us[Math.floor(us.length * 0.95)] };
}

async function rest() {
  const us = [];
  for (let i = 0; i < n + 10; i++) {
    const t = process.hrtime.bigint();
    const r = await fetch(wallURL + "/tools/read_email", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    await r.text();
    if (r.status !== 200) throw new Error("HTTP " + r.status);
    if (i >= 10) us.push(Number(process.hrtime.bigint() - t) / 1000); // the first ten warm up
  }
  return stats(us);
}

async function stdio() {
  const child = spawn("sh", ["-c", wallCommand], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const waiting = new Map();
  lines.on("line", (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
  });
  const call = (id, method, params) => new Promise((resolve) => {
    waiting.set(id, resolve);
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  });
  await call(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "calls", version: "1" } });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  const us = [];
  for (let i = 1; i <= n + 10; i++) {
    const t = process.hrtime.bigint();
    const m = await call(i, "tools/call", { name: "read_email", arguments: {} });
    if (m.error) throw new Error(JSON.stringify(m.error));
    if (i > 10) us.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  child.stdin.end();
  return stats(us);
}

const out = { rest: await rest(), stdio: await stdio() };
console.log("CALLS " + JSON.stringify(out));
console.log("Done.");
