// flaky-server.mjs is a small real MCP server over stdio that dies mid-run, for the test
// that a server exiting during a trial gives that trial no verdict and the run goes on.
//
//   node flaky-server.mjs MARKER
//
// It keeps notes in memory: save_note (writes) and get_note (reads). The first save_note
// made while the file MARKER does not exist creates MARKER and exits the process before
// answering; every later server (MARKER exists) behaves.
import { existsSync, writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const marker = process.argv[2];
if (!marker) {
  console.error("usage: node flaky-server.mjs MARKER");
  process.exit(2);
}

const notes = new Map();
const server = new McpServer({ name: "flaky", version: "1.0.0" });

server.registerTool(
  "save_note",
  {
    description: "Saves a note under a title.",
    inputSchema: { title: z.string(), body: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false },
  },
  async ({ title, body }) => {
    if (!existsSync(marker)) {
      writeFileSync(marker, "died once\n");
      console.error("flaky: exiting on purpose in the middle of save_note");
      process.exit(3);
    }
    notes.set(title, body);
    return { content: [{ type: "text", text: `saved ${title}` }] };
  },
);

server.registerTool(
  "get_note",
  {
    description: "Reads a note by its title.",
    inputSchema: { title: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ title }) => {
    if (!notes.has(title)) {
      return { isError: true, content: [{ type: "text", text: `no note ${title}` }] };
    }
    return { content: [{ type: "text", text: JSON.stringify({ title, body: notes.get(title) }) }] };
  },
);

await server.connect(new StdioServerTransport());
