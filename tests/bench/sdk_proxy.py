"""The floor of a hop: the least an MCP proxy made of the SDK can do, for `bench_serve.py`.

One upstream server, one low-level SDK ``Server`` in front of it: ``tools/list`` and
``tools/call`` forwarded through one SDK ``Client`` as they come, nothing else (no names
changed, no access, no relay of questions, no stop handling). Whatever a call through it
costs over a direct call is what the SDK's server half and client half cost in one process;
`mcpmount serve` is measured against it.

    python tests/bench/sdk_proxy.py --mode legacy -- python echo_server.py        # stdio front
    python tests/bench/sdk_proxy.py --http --portfile P --url http://127.0.0.1:N/mcp
"""

from __future__ import annotations

import argparse
import socket
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server


class Proxy:
    """The upstream client, and the two handlers that forward to it."""

    def __init__(self, upstream: Client) -> None:
        self.upstream = upstream
        self.schemas: dict[str, dict[str, Any]] = {}
        """Each listed tool's input schema: without it, the SDK's 2026-07-28 HTTP front runs
        the ``tools/list`` handler (here: an upstream round trip) for every call."""

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        listed = await self.upstream.list_tools(cursor=params.cursor if params else None)
        self.schemas |= {tool.name: tool.input_schema for tool in listed.tools}
        return listed

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        return await self.upstream.call_tool(params.name, params.arguments)

    def server(self) -> Server[Any]:
        return Server(
            "sdk-proxy",
            version="0.1.0",
            get_tool_input_schema=self.schemas.get,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )


async def serve(upstream: Client, portfile: Path | None) -> None:
    """Enter ``upstream`` (this task owns it) and serve the proxy until cancelled or stdin
    ends: over stdio without ``portfile``, else over streamable HTTP on 127.0.0.1."""
    async with upstream:
        server = Proxy(upstream).server()
        if portfile is None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            return
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as the echo server's
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        tmp = portfile.with_name(portfile.name + ".tmp")
        tmp.write_text(f"{sock.getsockname()[1]}\n")
        tmp.replace(portfile)
        config = uvicorn.Config(
            server.streamable_http_app(),
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=1,
        )
        await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["legacy", "auto"], default="auto", help="upstream era")
    parser.add_argument("--url", help="the upstream's streamable HTTP URL (else: the command)")
    parser.add_argument("--portfile", type=Path, help="serve HTTP; write the port here")
    parser.add_argument("command", nargs="*", help="the upstream stdio server's command")
    args = parser.parse_args()
    mode: Literal["legacy", "auto"] = args.mode
    if args.url:
        upstream = Client(args.url, mode=mode)
    else:
        command, *rest = args.command
        params = StdioServerParameters(command=command, args=rest)
        upstream = Client(stdio_client(params), mode=mode)
    anyio.run(serve, upstream, args.portfile)


if __name__ == "__main__":
    main()
