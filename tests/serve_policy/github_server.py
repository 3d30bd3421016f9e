"""An MCP server with GitHub-like tool names, recording each call it receives.

Tools: ``list_issues()``, ``delete_repo(name)``, ``delete_branch(name)``; each answers with
its own name. ``--record PATH`` appends ``tools/call NAME`` for each call, before it is
handled, to prove what never reached it. Run: ``python github_server.py --record PATH``.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--record", required=True)
options = parser.parse_args()

NAMED = {"type": "object", "properties": {"name": {"type": "string"}}}
TOOLS = [
    types.Tool(name="list_issues", description="List the issues.", input_schema={"type": "object"}),
    types.Tool(name="delete_repo", description="Delete a repository.", input_schema=NAMED),
    types.Tool(name="delete_branch", description="Delete a branch.", input_schema=NAMED),
]


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    async with await anyio.open_file(options.record, "a") as f:
        await f.write(f"tools/call {params.name}\n")
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])


server: Server[Any] = Server("github", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
