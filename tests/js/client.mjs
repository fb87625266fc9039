// client.mjs drives a chaos wall with the MCP TypeScript SDK, as an agent built on that
// SDK would, and prints what it saw as one JSON object on stdout.
//
//   node client.mjs stdio CHAOS SPEC CONDITION RECORD
//       starts `CHAOS wall --spec SPEC --condition CONDITION --record RECORD` itself and
//       speaks MCP over its stdin/stdout (StdioClientTransport)
//   node client.mjs http URL
//       connects to URL, a running wall's /mcp endpoint (StreamableHTTPClientTransport)
//
// It lists the tools, then plays the support-ticket task: read_email, update_ticket
// twice, get_ticket_field, and one call whose arguments do not match the schema. The
// output is {"server": ..., "tools": [...], "calls": [...]}; a call is
// {"tool", "args", "text", "isError"} or, when the wall refused it, {"tool", "args",
// "error": {"code", "message"}}. It closes the session before printing, so when it
// exits the wall it started has exited too.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const usage = "usage: node client.mjs stdio CHAOS SPEC CONDITION RECORD | node client.mjs http URL";

function transportFor(argv) {
  const [mode, ...rest] = argv;
  if (mode === "stdio" && rest.length === 4) {
    const [chaos, spec, condition, record] = rest;
    return new StdioClientTransport({
      command: chaos,
      args: ["wall", "--spec", spec, "--condition", condition, "--record", record],
      stderr: "inherit",
    });
  }
  if (mode === "http" && rest.length === 1) {
    return new StreamableHTTPClientTransport(new URL(rest[0]));
  }
  throw new Error(usage);
}

const script = [
  ["read_email", {}],
  ["update_ticket", { field: "priority", value: "urgent" }],
  ["update_ticket", { field: "team", value: "payments" }],
  ["get_ticket_field", { field: "priority" }],
  ["update_ticket", { field: "priority" }], // no value: refused by the wall
];

async function main() {
  const client = new Client({ name: "chaos-js-test", version: "0.0.0" });
  await client.connect(transportFor(process.argv.slice(2)));
  const summary = { server: client.getServerVersion(), tools: [], calls: [] };
  try {
    const { tools } = await client.listTools();
    summary.tools = tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
    for (const [tool, args] of script) {
      try {
        const res = await client.callTool({ name: tool, arguments: args });
        const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
        summary.calls.push({ tool, args, text, isError: Boolean(res.isError) });
      } catch (err) {
        summary.calls.push({ tool, args, error: { code: err.code, message: err.message } });
      }
    }
  } finally {
    await client.close();
  }
  process.stdout.write(JSON.stringify(summary) + "\n");
}

main().catch((err) => {
  console.error(`client.mjs: ${err?.stack ?? err}`);
  process.exit(1);
});
