// model-clients.mjs calls a model API with the official SDKs, as an agent would, and
// prints what each client made of the response: the `openai` package
// (chat.completions.create and responses.create) and `@anthropic-ai/sdk`
// (messages.create), each streamed and not.
//
//   node model-clients.mjs CASES.json
//
// CASES.json is a list of {"name", "api": "chat"|"responses"|"messages", "stream": bool,
// "baseURL", "position", "turns": [{"tool", "args", "result"}]}: the conversation sent is
// the prompt, then each turn's tool call and its result, in the API's own shape. For each
// case it prints, as one JSON list on stdout, {"name", "text", "tool_calls": [{"name",
// "arguments"}], "finish", "raw"} or {"name", "error"}: the text and tool calls as the
// client assembled them (from the parsed body, or from the stream's events), the finish
// reason in the API's own words (chat: finish_reason; responses: status, or
// incomplete_details.reason when incomplete; messages: stop_reason), and raw, the body
// exactly as it arrived.
//
// The request declares its position (X-Chaos-Position) as an agent may; the model
// proxy removes the header before forwarding.
import { readFileSync } from "node:fs";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const prompt = "Read the customer's email about ticket T-4821 and set the ticket's priority and team the way the email asks.";
const system = "You resolve support tickets.";

const parameters = {
  type: "object",
  properties: { field: { type: "string" }, value: { type: "string" } },
  required: ["field", "value"],
};
const description = "Sets one field of ticket T-4821.";
const callID = (k) => `call_${k + 1}`;

// recording wraps fetch to keep a copy of every response body as it arrived.
function recording(bodies) {
  return async (url, init) => {
    const res = await globalThis.fetch(url, init);
    const copy = res.clone();
    bodies.push(copy.text());
    return res;
  };
}

async function chat(c, stream, turns) {
  const messages = [
    { role: "system", content: system },
    { role: "user", content: prompt },
  ];
  turns.forEach((t, k) => {
    messages.push(
      { role: "assistant", content: null, tool_calls: [{ id: callID(k), type: "function", function: { name: t.tool, arguments: t.args } }] },
      { role: "tool", tool_call_id: callID(k), content: t.result },
    );
  });
  const req = {
    model: "gpt-test",
    messages,
    tools: [{ type: "function", function: { name: "update_ticket", description, parameters } }],
  };
  if (!stream) {
    const res = await c.chat.completions.create(req);
    const choice = res.choices[0];
    return {
      text: choice.message.content ?? "",
      tool_calls: (choice.message.tool_calls ?? []).map((tc) => ({ name: tc.function.name, arguments: tc.function.arguments })),
      finish: choice.finish_reason,
    };
  }
  const out = { text: "", tool_calls: [], finish: null };
  for await (const chunk of await c.chat.completions.create({ ...req, stream: true })) {
    for (const choice of chunk.choices) {
      if (choice.delta?.content) out.text += choice.delta.content;
      for (const tc of choice.delta?.tool_calls ?? []) {
        const cur = (out.tool_calls[tc.index] ??= { name: "", arguments: "" });
        if (tc.function?.name) cur.name += tc.function.name;
        if (tc.function?.arguments) cur.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) out.finish = choice.finish_reason;
    }
  }
  return out;
}

function responsesFinish(r) {
  return r.status === "incomplete" ? r.incomplete_details?.reason ?? "incomplete" : r.status;
}

async function responses(c, stream, turns) {
  const input = [{ role: "user", content: prompt }];
  turns.forEach((t, k) => {
    input.push(
      { type: "function_call", call_id: callID(k), name: t.tool, arguments: t.args },
      { type: "function_call_output", call_id: callID(k), output: t.result },
    );
  });
  const req = {
    model: "gpt-test",
    instructions: system,
    input,
    tools: [{ type: "function", name: "update_ticket", description, parameters, strict: false }],
  };
  if (!stream) {
    const res = await c.responses.create(req);
    const out = { text: "", tool_calls: [], finish: responsesFinish(res) };
    for (const item of res.output) {
      if (item.type === "message") {
        for (const part of item.content) if (part.type === "output_text") out.text += part.text;
      } else if (item.type === "function_call") {
        out.tool_calls.push({ name: item.name, arguments: item.arguments });
      }
    }
    return out;
  }
  const out = { text: "", tool_calls: [], finish: null };
  const calls = new Map(); // output_index -> call
  for await (const ev of await c.responses.create({ ...req, stream: true })) {
    switch (ev.type) {
      case "response.output_text.delta":
        out.text += ev.delta;
        break;
      case "response.output_item.added":
        if (ev.item.type === "function_call") {
          const call = { name: ev.item.name, arguments: "" };
          calls.set(ev.output_index, call);
          out.tool_calls.push(call);
        }
        break;
      case "response.function_call_arguments.delta":
        calls.get(ev.output_index).arguments += ev.delta;
        break;
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        out.finish = responsesFinish(ev.response);
        break;
    }
  }
  return out;
}

async function messages(c, stream, turns) {
  const msgs = [{ role: "user", content: prompt }];
  turns.forEach((t, k) => {
    msgs.push(
      { role: "assistant", content: [{ type: "tool_use", id: callID(k), name: t.tool, input: JSON.parse(t.args) }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: callID(k), content: t.result }] },
    );
  });
  const req = {
    model: "claude-test",
    max_tokens: 1024,
    system,
    messages: msgs,
    tools: [{ name: "update_ticket", description, input_schema: parameters }],
  };
  if (!stream) {
    const res = await c.messages.create(req);
    const out = { text: "", tool_calls: [], finish: res.stop_reason };
    for (const block of res.content) {
      if (block.type === "text") out.text += block.text;
      else if (block.type === "tool_use") out.tool_calls.push({ name: block.name, arguments: JSON.stringify(block.input) });
    }
    return out;
  }
  const out = { text: "", tool_calls: [], finish: null };
  const blocks = new Map(); // index -> tool call
  for await (const ev of await c.messages.create({ ...req, stream: true })) {
    switch (ev.type) {
      case "content_block_start":
        if (ev.content_block.type === "tool_use") {
          const call = { name: ev.content_block.name, arguments: "" };
          blocks.set(ev.index, call);
          out.tool_calls.push(call);
        }
        break;
      case "content_block_delta":
        if (ev.delta.type === "text_delta") out.text += ev.delta.text;
        else if (ev.delta.type === "input_json_delta") blocks.get(ev.index).arguments += ev.delta.partial_json;
        break;
      case "message_delta":
        if (ev.delta.stop_reason) out.finish = ev.delta.stop_reason;
        break;
    }
  }
  for (const call of out.tool_calls) if (call.arguments === "") call.arguments = "{}";
  return out;
}

async function runCase(cs) {
  const bodies = [];
  const opts = {
    baseURL: cs.baseURL,
    apiKey: "test-key",
    maxRetries: 0,
    fetch: recording(bodies),
    defaultHeaders: { "X-Chaos-Position": cs.position ?? "p", "X-Chaos-Attempt": "1" },
  };
  try {
    let out;
    const turns = cs.turns ?? [];
    if (cs.api === "messages") out = await messages(new Anthropic(opts), cs.stream, turns);
    else if (cs.api === "responses") out = await responses(new OpenAI(opts), cs.stream, turns);
    else if (cs.api === "chat") out = await chat(new OpenAI(opts), cs.stream, turns);
    else throw new Error(`unknown api ${cs.api}`);
    out.raw = bodies.length ? await bodies[bodies.length - 1] : "";
    return { name: cs.name, ...out };
  } catch (err) {
    return { name: cs.name, error: String(err?.message ?? err) };
  }
}

async function main() {
  const [file] = process.argv.slice(2);
  if (!file) throw new Error("usage: node model-clients.mjs CASES.json");
  const cases = JSON.parse(readFileSync(file, "utf8"));
  const results = [];
  for (const cs of cases) results.push(await runCase(cs));
  process.stdout.write(JSON.stringify(results) + "\n");
}

main().catch((err) => {
  console.error(`model-clients.mjs: ${err?.stack ?? err}`);
  process.exit(1);
});
