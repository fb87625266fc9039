#!/usr/bin/env python3
"""A bare MCP stdio server in the Python standard library: the baseline the wall's
benchmarks (tests/e2e/bench_test.go) measure against. It serves update_ticket and
get_ticket_field of examples/support-ticket.yaml on a dict, one JSON-RPC message a line,
and does nothing else (no record, no schema check, no faults)."""
import json
import sys

TOOLS = [
    {"name": "update_ticket", "description": "Sets one field of ticket T-4821.",
     "inputSchema": {"type": "object", "properties": {"field": {"type": "string"}, "value": {"type": "string"}},
                     "required": ["field", "value"]}},
    {"name": "get_ticket_field", "description": "Reads one field of ticket T-4821.",
     "inputSchema": {"type": "object", "properties": {"field": {"type": "string"}}, "required": ["field"]}},
]
state = {"priority": "normal", "team": "accounts"}


def call(name, args):
    if name == "update_ticket":
        state[args["field"]] = args["value"]
        return {"status": "updated"}
    if name == "get_ticket_field":
        return {"field": args["field"], "value": state.get(args["field"])}
    raise KeyError(name)


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "bare-python", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        try:
            out = call(params["name"], params.get("arguments") or {})
            return {"content": [{"type": "text", "text": json.dumps(out)}], "isError": False}
        except Exception as e:  # noqa: BLE001 - a tool error is an answer, not a crash
            return {"content": [{"type": "text", "text": str(e)}], "isError": True}
    if method == "ping":
        return {}
    return None


def main():
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        result = answer(msg)
        if result is None:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "method not found"}}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
