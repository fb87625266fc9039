#!/usr/bin/env python3
# A scripted agent for the cost tests (tests/model/cost_test.go): it talks to the model
# through the model proxy on one API, streamed or not, and does the support-ticket task
# on the wall over REST. It follows a fixed plan rather than the model's answers (the
# stand-in answers by the number of tool results, so the conversation is the same), and
# only reads every response to its end, as a client does.
#
#   cost-agent.py API STREAM LLM_URL WALL_URL     API: chat|responses|messages, STREAM: plain|sse
#
# With COST_AGENT_LINGER set it waits after its last call until it is stopped, so that a
# trial can only end early by the watcher's abort.
import json, os, sys, time, urllib.request

api, stream, llm, wall = sys.argv[1], sys.argv[2] == "sse", sys.argv[3], sys.argv[4]
task = "Read the customer's email about ticket T-4821 and set the ticket's priority and team the way the email asks."
plan = [("read_email", {}), ("update_ticket", {"field": "priority", "value": "urgent"}), ("update_ticket", {"field": "team", "value": "payments"})]


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "x-api-key": "sk-standin", "Authorization": "Bearer sk-standin", "anthropic-version": "2023-06-01"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.read().decode()


def request(done):
    if api == "chat":
        msgs = [{"role": "user", "content": task}]
        for k, (tool, args, result) in enumerate(done):
            msgs.append({"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{k}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]})
            msgs.append({"role": "tool", "tool_call_id": f"call_{k}", "content": result})
        body = {"model": "gpt-test", "messages": msgs}
        if stream:
            body.update(stream=True, stream_options={"include_usage": True})
        return llm + "/v1/chat/completions", body
    if api == "responses":
        items = [{"role": "user", "content": task}]
        for k, (tool, args, result) in enumerate(done):
            items.append({"type": "function_call", "call_id": f"call_{k}", "name": tool, "arguments": json.dumps(args)})
            items.append({"type": "function_call_output", "call_id": f"call_{k}", "output": result})
        body = {"model": "gpt-test", "input": items}
        if stream:
            body["stream"] = True
        return llm + "/v1/responses", body
    msgs = [{"role": "user", "content": task}]
    for k, (tool, args, result) in enumerate(done):
        msgs.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k}", "name": tool, "input": args}]})
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": result}]})
    body = {"model": "claude-test", "max_tokens": 1024, "messages": msgs}
    if stream:
        body["stream"] = True
    return llm + "/v1/messages", body


done = []
for k in range(len(plan) + 1):
    url, body = request(done)
    post(url, body)
    if k < len(plan):
        tool, args = plan[k]
        done.append((tool, args, post(wall + "/tools/" + tool, args)))
print("Done. Priority urgent, team payments.")
sys.stdout.flush()
if os.environ.get("COST_AGENT_LINGER"):
    time.sleep(600)
