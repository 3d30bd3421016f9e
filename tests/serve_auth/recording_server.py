"""An MCP server that records every request it receives, to prove what never reached it.

Run it as `python tests/serve_auth/recording_server.py --record PATH` (stdio). Each request's
method is appended to PATH as one line (``tools/call echo`` for a call), before it is
handled. Tools: ``echo(text)`` returns the text.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.stdio import stdio_server

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--record", required=True)
options = parser.parse_args()

ECHO = types.Tool(
    name="echo",
    description="Return the text unchanged.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


async def record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    line = ctx.method
    if ctx.method == "tools/call" and ctx.params:
        line += f" {ctx.params.get('name')}"
    async with await anyio.open_file(options.record, "a") as f:
        await f.write(line + "\n")
    return await call_next(ctx)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server: Server[Any] = Server("recording", on_list_tools=list_tools, on_call_tool=call_tool)
server.middleware.append(record)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
