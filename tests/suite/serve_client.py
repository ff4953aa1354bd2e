"""A real MCP client (the `mcp` Python package) driving `codemode serve`.

Usage: serve_client.py CODEMODE_BINARY CONFIG_FILE

Lists the tools, fans 20 `tools.mcp__everything__echo` calls out through `exec`, yields a
slow script and collects it with `wait`, and checks a failing script is `isError`. Prints
one line per check and `ALL OK` at the end; exits non-zero at the first failure.
Exits 77 when the `mcp` package is missing (the Rust test then skips with the reason).
"""

import asyncio
import re
import sys

try:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
except ImportError as error:  # pragma: no cover - environment dependent
    print(f"python3 lacks the mcp package: {error}")
    sys.exit(77)


def texts(result):
    return [block.text for block in result.content if getattr(block, "type", "") == "text"]


def check(condition, what, detail=""):
    if not condition:
        print(f"FAIL {what}: {detail}")
        sys.exit(1)
    print(f"ok {what}")


FANOUT = """
const results = await Promise.all(
  Array.from({ length: 20 }, (_, i) => tools.mcp__everything__echo({ message: `m${i}` })),
);
text(results.map((r) => r.content[0].text).join(","));
"""

SLOW = """// @exec: {"yield_time_ms": 50}
text("before");
await new Promise((resolve) => setTimeout(resolve, 400));
text("after");
"""


async def main(binary, config):
    params = StdioServerParameters(command=binary, args=["serve", "--config", config])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            listed = await session.list_tools()
            names = sorted(tool.name for tool in listed.tools)
            check(names == ["exec", "wait"], "tools/list has exec and wait", names)
            exec_tool = next(tool for tool in listed.tools if tool.name == "exec")
            check(
                "mcp__everything__echo" in (exec_tool.description or ""),
                "exec description documents the nested MCP tools",
            )
            check(exec_tool.input_schema["required"] == ["code"], "exec takes `code`")

            fanout = await session.call_tool("exec", {"code": FANOUT})
            body = "\n".join(texts(fanout))
            check(not fanout.is_error, "fan-out succeeded", body)
            check(body.startswith("Script completed\nWall time "), "fan-out header", body)
            expected = ",".join(f"Echo: m{i}" for i in range(20))
            check(expected in body, "20 echoes in order", body)

            first = await session.call_tool("exec", {"code": SLOW})
            body = "\n".join(texts(first))
            match = re.match(r"Script running with cell ID (\S+)\n", body)
            check(match is not None, "slow script yields a cell id", body)
            check("before" in body, "output before the yield", body)
            done = await session.call_tool(
                "wait", {"cell_id": match.group(1), "yield_time_ms": 5000}
            )
            body = "\n".join(texts(done))
            check(body.startswith("Script completed"), "wait completes the cell", body)
            check("after" in body and "before" not in body, "wait returns only new output", body)

            failed = await session.call_tool("exec", {"code": "throw new Error('boom')"})
            body = "\n".join(texts(failed))
            check(failed.is_error is True, "failing script is isError", body)
            check("Script error:\nError: boom" in body, "script error text", body)

            unknown = await session.call_tool("wait", {"cell_id": "no-such-cell"})
            check(unknown.is_error is True, "wait on an unknown cell is isError", texts(unknown))
    print("ALL OK")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
