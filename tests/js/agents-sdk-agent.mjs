// agents-sdk-agent.mjs is an agent built on the OpenAI Agents SDK for JavaScript, as a
// developer would write one: its tools come from an MCP server (the chaos wall), its
// model from an OpenAI-compatible Chat Completions endpoint ({llm_url}, the chaos model
// proxy). chaos runs it as a spec's agent command; nothing in it knows about faults.
//
//   node agents-sdk-agent.mjs [--llm-url URL] [--mcp-url URL | --wall "CMD ARGS..."] [--tools NAMES] [--model NAME] -- TASK
//
// Without --llm-url the OpenAI client takes OPENAI_BASE_URL, as an app that was never told
// about chaos does (the README's Agents SDK example runs it so).
// --tools keeps only the named tools of the MCP server (comma-separated; the SDK's
// createMCPToolStaticFilter), as a developer narrows what an agent may use. Without an MCP
// server the agent has no tools at all. Both are how an agent ends up never calling the
// wall: chaos must then give no verdict, never a rate (tests/model TestAgentsSDKReach).
//
// The agent declares where each model call stands, as the chaos docs ask of an agent
// that wants faults placed by name: an X-Chaos-Position header naming the step of its
// procedure (read_email, update_ticket, update_team, report; the count of tool results
// in the conversation picks it) and X-Chaos-Attempt, the n-th call at that step. The
// headers are the only chaos-specific thing here, and the proxy drops them before
// forwarding.
//
// It prints the agent's final output on stdout (its closing message) and exits 0.
import OpenAI from "openai";
import {
  Agent,
  MCPServerStdio,
  createMCPToolStaticFilter,
  MCPServerStreamableHttp,
  OpenAIChatCompletionsModel,
  run,
  setDefaultOpenAIClient,
  setOpenAIAPI,
  setTracingDisabled,
} from "@openai/agents";

const usage = 'usage: node agents-sdk-agent.mjs [--llm-url URL] [--mcp-url URL | --wall "CMD"] [--tools NAMES] [--model NAME] -- TASK';

function parseArgs(argv) {
  const opts = { model: "standin" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      opts.task = argv.slice(i + 1).join(" ");
      break;
    }
    const v = argv[++i];
    if (v === undefined) throw new Error(usage);
    if (a === "--llm-url") opts.llmURL = v;
    else if (a === "--mcp-url") opts.mcpURL = v;
    else if (a === "--wall") opts.wall = v;
    else if (a === "--model") opts.model = v;
    else if (a === "--tools") opts.tools = v.split(",").map((n) => n.trim()).filter(Boolean);
    else throw new Error(`unknown flag ${a}\n${usage}`);
  }
  if (!opts.task || (opts.mcpURL && opts.wall)) throw new Error(usage);
  return opts;
}

// The steps of the procedure the instructions describe, in order.
const steps = ["read_email", "update_ticket", "update_team", "report"];

// positioned wraps fetch so that every Chat Completions call declares its step.
function positioned(fetchImpl) {
  const attempts = new Map();
  return async (url, init = {}) => {
    let step = "other";
    try {
      const body = JSON.parse(init.body);
      // Tool results so far, in runs: one run per model turn that called tools.
      let turns = 0;
      let inRun = false;
      for (const m of body.messages ?? []) {
        if (m.role === "tool") {
          if (!inRun) turns++;
          inRun = true;
        } else {
          inRun = false;
        }
      }
      step = steps[Math.min(turns, steps.length - 1)];
    } catch {
      // not a JSON body: leave the step as other
    }
    const attempt = (attempts.get(step) ?? 0) + 1;
    attempts.set(step, attempt);
    const headers = new Headers(init.headers);
    headers.set("X-Chaos-Position", step);
    headers.set("X-Chaos-Attempt", String(attempt));
    return fetchImpl(url, { ...init, headers });
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  setTracingDisabled(true);
  const client = new OpenAI({
    baseURL: opts.llmURL,
    apiKey: process.env.OPENAI_API_KEY ?? "no-key-needed",
    fetch: positioned(globalThis.fetch),
    maxRetries: 0,
  });
  setDefaultOpenAIClient(client);
  setOpenAIAPI("chat_completions");

  const toolFilter = opts.tools ? createMCPToolStaticFilter({ allowed: opts.tools }) : undefined;
  const server = opts.mcpURL
    ? new MCPServerStreamableHttp({ url: opts.mcpURL, name: "chaos-wall", toolFilter })
    : opts.wall
      ? // A server from npm (Playwright's MCP server) takes longer than the SDK's 5 s to
        // answer a request on a loaded machine: wait as a patient user would.
        new MCPServerStdio({ fullCommand: opts.wall, name: "chaos-wall", toolFilter, clientSessionTimeoutSeconds: 300 })
      : null;
  await server?.connect();
  try {
    const agent = new Agent({
      name: "support-ticket agent",
      instructions:
        "You triage support tickets. Read the customer's email, set the ticket's priority, " +
        "then its team, then say what you did in one line.",
      model: new OpenAIChatCompletionsModel(client, opts.model),
      mcpServers: server ? [server] : [],
    });
    const result = await run(agent, opts.task, { maxTurns: 10 });
    process.stdout.write(String(result.finalOutput ?? "") + "\n");
  } finally {
    await server?.close();
  }
}

main().catch((err) => {
  console.error(`agents-sdk-agent.mjs: ${err?.stack ?? err}`);
  process.exit(1);
});
