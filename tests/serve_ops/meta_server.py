"""An MCP server (stdio) that answers each call with the ``_meta`` its request carried.

Its one tool, ``meta``, returns that ``_meta`` as structured content, so a test sees the
``traceparent`` an upstream server received; ``refuse`` answers with a JSON-RPC error.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

_TOOLS = [
    mcp_types.Tool(
        name="meta", description="Return the request's _meta.", input_schema={"type": "object"}
    ),
    mcp_types.Tool(
        name="refuse", description="Answer with a JSON-RPC error.", input_schema={"type": "object"}
    ),
]


async def list_tools(
    ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(tools=_TOOLS)


async def call_tool(
    ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
) -> mcp_types.CallToolResult:
    if params.name == "refuse":
        raise MCPError(mcp_types.INVALID_PARAMS, "refused on purpose")
    received = dict(ctx.meta) if ctx.meta else {}
    received.pop("progressToken", None)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="meta")],
        structured_content={"meta": received},
    )


async def main() -> None:
    server = Server("meta", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
