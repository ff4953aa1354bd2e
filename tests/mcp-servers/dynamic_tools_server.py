"""A minimal stdio MCP server (no dependencies) whose tool list grows: each call of
`add_tool` adds a tool `extra_<n>` and sends `notifications/tools/list_changed`.
Used by the codemode MCP client tests for tool-list refresh."""

import json
import sys

tools = ["add_tool"]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name):
    return {"name": name, "description": f"Tool {name}", "inputSchema": {"type": "object"}}


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "dynamic-tools", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [tool(name) for name in tools]}
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "add_tool":
            tools.append(f"extra_{len(tools)}")
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result = {"content": [{"type": "text", "text": f"called {name}"}]}
    else:
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no such method"}})
        continue
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})
