"""Drives `teammem mcp` with the official MCP Python SDK over stdio, for tests/it/mcp/tools.rs.

Usage: python3 tests/mcp_client.py PLAN.json

PLAN: {"command": "...", "args": [...], "cwd": "...", "env": {...},
       "steps": [{"call": NAME, "arguments": {...}} | {"together": [call, call, ...]}
                 | {"write": {"path": ..., "text": ...}} | {"sleep": SECONDS}
                 | {"run": {"argv": [...], "cwd": ..., "env": {...}?}}]}

Prints one JSON object: the server's initialize result, its tools, and for each step the
result of each call ({"is_error", "text", "structured", "ms"} or {"protocol_error": {code, message}});
a "run" step (another process acting while the server runs: a shell, git, the teammem CLI) gives
{"status", "stdout", "stderr"}.
The assertions live in tests/it/mcp/tools.rs; this script only speaks the protocol.
"""

import asyncio
import json
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError


async def call(session, step):
    started = time.perf_counter()
    try:
        result = await session.call_tool(step["call"], step.get("arguments"))
    except McpError as err:
        return {"protocol_error": {"code": err.error.code, "message": err.error.message}}
    text = "\n".join(block.text for block in result.content if block.type == "text")
    return {
        "is_error": bool(result.isError),
        "text": text,
        "structured": result.structuredContent,
        "ms": (time.perf_counter() - started) * 1000,
    }


async def main(plan):
    params = StdioServerParameters(
        command=plan["command"],
        args=plan.get("args", ["mcp"]),
        cwd=plan.get("cwd"),
        env=plan.get("env"),
    )
    out = {"steps": []}
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["initialize_ms"] = (time.perf_counter() - started) * 1000
            out["server"] = {
                "name": init.serverInfo.name,
                "protocol": init.protocolVersion,
                "instructions": init.instructions,
                "tools_capability": init.capabilities.tools is not None,
            }
            tools = await session.list_tools()
            out["tools"] = [
                {
                    "name": t.name,
                    "description": t.description,
                    "schema": t.inputSchema,
                    "read_only": bool(t.annotations and t.annotations.readOnlyHint),
                }
                for t in tools.tools
            ]
            for step in plan["steps"]:
                if "write" in step:
                    # A person editing a file while the server runs.
                    with open(step["write"]["path"], "w", encoding="utf-8") as f:
                        f.write(step["write"]["text"])
                    out["steps"].append({"wrote": step["write"]["path"]})
                elif "run" in step:
                    run = step["run"]
                    done = subprocess.run(run["argv"], cwd=run.get("cwd"),
                                          env=run.get("env", plan.get("env")),
                                          stdin=subprocess.DEVNULL, capture_output=True)
                    out["steps"].append({"status": done.returncode,
                                         "stdout": done.stdout.decode("utf-8", "replace"),
                                         "stderr": done.stderr.decode("utf-8", "replace")})
                elif "sleep" in step:
                    await asyncio.sleep(step["sleep"])
                    out["steps"].append({"slept": step["sleep"]})
                elif "together" in step:
                    results = await asyncio.gather(
                        *(call(session, s) for s in step["together"])
                    )
                    out["steps"].append(list(results))
                else:
                    out["steps"].append(await call(session, step))
            out["calls_done_ms"] = (time.perf_counter() - started) * 1000
    out["closed_ms"] = (time.perf_counter() - started) * 1000
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        asyncio.run(main(json.load(f)))
