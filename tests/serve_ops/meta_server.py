"""An MCP server (stdio) that answers each call with the ``_meta`` its request carried.

Its tool ``meta`` returns that ``_meta`` (less the progress token) as structured content,
so a test sees the ``traceparent`` an upstream server received; ``refuse`` answers with
a JSON-RPC error.
"""

from __future__ import annotations

from typing import Any

import mcp_types
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("meta", version="0.1.0")


@server.tool()
def meta(ctx: Context) -> dict[str, Any]:
    """Return the request's _meta."""
    received = dict(ctx.request_context.meta or {})
    received.pop("progressToken", None)
    return {"meta": received}


@server.tool()
def refuse() -> str:
    """Answer with a JSON-RPC error."""
    raise MCPError(mcp_types.INVALID_PARAMS, "refused on purpose")


if __name__ == "__main__":
    server.run()
