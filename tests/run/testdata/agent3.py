#!/usr/bin/env python3
"""A stand-in agent in Python's standard library for the throughput benchmark
(throughput_test.go): it starts its MCP server, the command line given as its one
argument, with sh -c, makes three tool calls of examples/support-ticket.yaml, and says
it is done. No model: its own cost is a Python start and three exchanges."""
import json
import subprocess
import sys

wall = subprocess.Popen(["sh", "-c", sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
next_id = 0


def request(method, params):
    global next_id
    next_id += 1
    wall.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n").encode())
    while True:
        line = wall.stdout.readline()
        if not line:
            sys.exit("the wall closed its stdout")
        msg = json.loads(line)
        if msg.get("id") == next_id:
            return msg


request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent3", "version": "0"}})
wall.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
request("tools/call", {"name": "read_email", "arguments": {}})
request("tools/call", {"name": "update_ticket", "arguments": {"field": "priority", "value": "urgent"}})
request("tools/call", {"name": "update_ticket", "arguments": {"field": "team", "value": "payments"}})
wall.stdin.close()
wall.wait()
print("Done: the ticket is urgent and with the payments team.\nSTATUS: ok")
