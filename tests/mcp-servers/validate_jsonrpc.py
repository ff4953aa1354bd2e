"""Validate an NDJSON record of MCP JSON-RPC messages (written by codemode's MCP client when
CODEMODE_MCP_RECORD or McpManagerOptions.record_path is set) against the pydantic models of
the `mcp` Python package (anchors §5).

Each line: {"server": str, "direction": "send"|"receive", "message": <JSON-RPC message>}.
Sent requests must be valid ClientRequests and sent notifications ClientNotifications;
received requests/notifications must be ServerRequests/ServerNotifications.
Exit status 0 when every line validates, 1 on the first failure (printed), 2 on usage error.
"""

import json
import sys

from pydantic import TypeAdapter

import mcp.types as types

ENVELOPE = TypeAdapter(types.JSONRPCMessage)
TYPED = {
    ("send", "request"): TypeAdapter(types.ClientRequest),
    ("send", "notification"): TypeAdapter(types.ClientNotification),
    ("receive", "request"): TypeAdapter(types.ServerRequest),
    ("receive", "notification"): TypeAdapter(types.ServerNotification),
}


def main(path):
    counts = {}
    with open(path, encoding="utf-8") as records:
        for number, line in enumerate(records, 1):
            try:
                record = json.loads(line)
                direction = record["direction"]
                message = record["message"]
                ENVELOPE.validate_python(message)
                if "method" in message:
                    kind = "request" if "id" in message else "notification"
                    body = {"method": message["method"]}
                    if "params" in message:
                        body["params"] = message["params"]
                    TYPED[(direction, kind)].validate_python(body)
                    key = f"{direction} {message['method']}"
                else:
                    key = f"{direction} response"
                counts[key] = counts.get(key, 0) + 1
            except Exception as error:  # noqa: BLE001 - report any failure with its line
                print(f"line {number} is not a valid MCP message: {error}\n{line}")
                return 1
    print(json.dumps(counts, sort_keys=True))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: validate_jsonrpc.py RECORD.ndjson")
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
